import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { type DeliveryRef, planOutcome, type TryResult } from "../src/webhooks/DeliveryRules.js"
import { WEBHOOK_LIMITS } from "../src/webhooks/Records.js"
import type { DeliveryOutcome } from "../src/webhooks/WebhookSender.js"

interface Delivery extends DeliveryRef {
  readonly id: string
}

const NOW_MS = Date.UTC(2026, 4, 2, 12, 0, 0)
const SCHEDULE_MS = [5_000, 300_000, 1_800_000]
const DISABLE_AFTER_MS = 5 * 24 * 60 * 60 * 1000

const outcome: fc.Arbitrary<DeliveryOutcome> = fc.record({
  status: fc.constantFrom("SUCCESS" as const, "FAILED" as const),
  responseCode: fc.constantFrom(0, 200, 204, 410, 429, 500, 503),
  responseBody: fc.string({ maxLength: 8 }),
  retryAfterMs: fc.option(fc.integer({ min: 0, max: 10 * 60 * 60 * 1000 }), { nil: undefined }),
  attemptedAtMs: fc.constant(NOW_MS - 10)
})

/** A batch of results over a few subscriptions, so one subscription often appears several times. */
const batch: fc.Arbitrary<ReadonlyArray<TryResult<Delivery>>> = fc
  .array(
    fc.record({
      subscription: fc.constantFrom("s1", "s2", "s3", "s4"),
      attemptCount: fc.nat({ max: SCHEDULE_MS.length + 1 }),
      outcome: fc.option(outcome, { nil: undefined }),
      permanent: fc.boolean(),
      released: fc.boolean()
    }),
    { maxLength: 20 }
  )
  .map((items) =>
    items.map((item, index) => ({
      delivery: {
        id: `d${index}`,
        program_id: "p",
        event_id: `e${index}`,
        subscription_id: item.subscription,
        attempt_count: item.attemptCount
      },
      outcome: item.outcome,
      // A dropped delivery (no outcome) is never permanent, and a released one never started.
      permanent: item.outcome !== undefined && item.permanent,
      released: item.outcome === undefined && item.released
    }))
  )

const plan = (results: ReadonlyArray<TryResult<Delivery>>, random = () => 0.5) =>
  planOutcome(results, { retryScheduleMs: SCHEDULE_MS, disableAfterMs: DISABLE_AFTER_MS, nowMs: NOW_MS, random })

const failed = (result: TryResult<Delivery>) => result.outcome?.status === "FAILED"

describe("planOutcome", () => {
  it("records one attempt per try that made a request, in order, with its outcome", () => {
    fc.assert(
      fc.property(batch, (results) => {
        const { attempts } = plan(results)
        const tried = results.filter((result) => result.outcome !== undefined)
        expect(attempts.map((a) => [a.event_id, a.webhook_subscription_id, a.status, a.response_code])).toEqual(
          tried.map((r) => [r.delivery.event_id, r.delivery.subscription_id, r.outcome!.status, r.outcome!.responseCode])
        )
        expect(new Set(attempts.map((a) => a.id)).size).toBe(attempts.length)
      })
    )
  })

  it("puts every delivery either back on the queue or off it, never both", () => {
    fc.assert(
      fc.property(batch, (results) => {
        const { finished, retries } = plan(results)
        const retried = retries.map((r) => r.delivery.id)
        expect([...finished.map((d) => d.id), ...retried].sort()).toEqual(results.map((r) => r.delivery.id).sort())
        expect(new Set(retried).size).toBe(retried.length)
      })
    )
  })

  it("retries only failures the schedule still covers, never permanent ones or 410 Gone", () => {
    fc.assert(
      fc.property(batch, fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (results, jitter) => {
        const { retries } = plan(results, () => jitter)
        const byId = new Map(results.map((r) => [r.delivery.id, r]))
        for (const retry of retries) {
          const result = byId.get(retry.delivery.id)!
          const dueMs = Date.parse(retry.nextAttemptAt) - NOW_MS
          if (result.released) {
            expect([retry.attemptCount, dueMs]).toEqual([result.delivery.attempt_count, 0])
            continue
          }
          expect(failed(result)).toBe(true)
          expect(result.permanent || result.outcome!.responseCode === 410).toBe(false)
          expect(retry.attemptCount).toBe(result.delivery.attempt_count + 1)
          expect(retry.attemptCount).toBeLessThanOrEqual(SCHEDULE_MS.length)
          const retryAfterMs = result.outcome!.retryAfterMs
          if (retryAfterMs !== undefined) {
            expect(dueMs).toBe(Math.min(WEBHOOK_LIMITS.maxRetryAfterMs, Math.max(WEBHOOK_LIMITS.minRetryAfterMs, retryAfterMs)))
          } else {
            const scheduledMs = SCHEDULE_MS[retry.attemptCount - 1]!
            expect(dueMs).toBeGreaterThanOrEqual(Math.floor(scheduledMs * 0.8))
            expect(dueMs).toBeLessThanOrEqual(Math.ceil(scheduledMs * 1.2))
          }
        }
        // Conversely: a retryable failure within the schedule is retried.
        for (const result of results) {
          const retryable =
            failed(result) &&
            !result.permanent &&
            result.outcome!.responseCode !== 410 &&
            result.delivery.attempt_count + 1 <= SCHEDULE_MS.length
          if (retryable) expect(retries.some((r) => r.delivery.id === result.delivery.id)).toBe(true)
        }
      })
    )
  })

  it("ends a streak only on a success without a failure in the batch, starts one on any failure, disables on 410", () => {
    fc.assert(
      fc.property(batch, (results) => {
        const { clearFailing, disableNow, markFailing } = plan(results)
        const subscriptions = (keep: (r: TryResult<Delivery>) => boolean) =>
          [...new Set(results.filter(keep).map((r) => r.delivery.subscription_id))].sort()
        const failing = subscriptions(failed)
        expect([...markFailing].sort()).toEqual(failing)
        expect([...clearFailing].sort()).toEqual(
          subscriptions((r) => r.outcome?.status === "SUCCESS").filter((id) => !failing.includes(id))
        )
        expect([...disableNow].sort()).toEqual(subscriptions((r) => failed(r) && r.outcome!.responseCode === 410))
      })
    )
  })

  it("a resend (one try per subscription, none before) is planned like the same tries of a worker", () => {
    fc.assert(
      fc.property(fc.array(outcome, { maxLength: 4 }), (outcomes) => {
        const results = outcomes.map((o, index) => ({
          delivery: { id: `d${index}`, program_id: "p", event_id: "e", subscription_id: `s${index}`, attempt_count: 0 },
          outcome: o,
          permanent: false
        }))
        const { clearFailing, retries } = plan(results)
        expect(clearFailing).toEqual(results.filter((r) => r.outcome.status === "SUCCESS").map((r) => r.delivery.subscription_id))
        expect(retries.every((r) => r.attemptCount === 1)).toBe(true)
      })
    )
  })

  it("disables subscriptions failing since before now minus disableAfterMs", () => {
    expect(plan([]).failingBefore).toBe(new Date(NOW_MS - DISABLE_AFTER_MS).toISOString())
    expect(plan([]).nowIso).toBe(new Date(NOW_MS).toISOString())
  })
})
