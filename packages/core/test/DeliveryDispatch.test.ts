import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { DeliveryDispatch, SigningKeyCache } from "../src/webhooks/DeliveryDispatch.js"
import { type ClaimedDelivery, WEBHOOK_LIMITS } from "../src/webhooks/Records.js"
import type { VaultService } from "../src/vault/Vault.js"
import type { DeliveryOutcome, OutgoingDelivery, WebhookSenderService } from "../src/webhooks/WebhookSender.js"

const TIMEOUT_MS = 1000

const delivery = (id: string): ClaimedDelivery => ({
  id,
  program_id: "p",
  subscription_id: "s",
  event_id: `event-${id}`,
  attempt_count: 0,
  event_type: "transaction.updated",
  event_created_at: "2026-05-02T12:00:00.000Z",
  event_data: "{}",
  url: "http://127.0.0.1:1/hooks",
  disabled: false,
  secret_sealed: "sealed",
  previous_secret_sealed: null,
  previous_secret_expires_at: null,
  subscription_updated_at: "2026-05-02T12:00:00.000Z"
})

const ok: DeliveryOutcome = { status: "SUCCESS", responseCode: 200, responseBody: "ok", retryAfterMs: undefined, attemptedAtMs: 0 }

/** A sender whose tries end when the test says: `sent` lists every try started, `answer` ends the oldest open ones. */
const controlledSender = () => {
  const sent: Array<string> = []
  const open: Array<() => void> = []
  const sender: WebhookSenderService = {
    send: () => Effect.die("unused"),
    sendAsync: (outgoing: OutgoingDelivery) =>
      new Promise((resolve) => {
        sent.push(outgoing.messageId)
        open.push(() => resolve(ok))
      })
  }
  return {
    sender,
    sent,
    answer: async (count = open.length) => {
      for (const settle of open.splice(0, count)) settle()
      await new Promise((resolve) => setTimeout(resolve, 0))
    }
  }
}

const vault = { decrypt: () => `whsec_${Buffer.alloc(32, 1).toString("base64")}` } as unknown as VaultService

const dispatchOf = (sender: WebhookSenderService, concurrency: number) =>
  new DeliveryDispatch(sender, new SigningKeyCache(vault), { concurrency, timeoutMs: TIMEOUT_MS, maxPayloadBytes: 256 * 1024 })

/**
 * Regressions found by the receiver-chaos test (test/faults/chaos.test.ts) at 10,000 events on
 * PostgreSQL: the recorder fell tens of seconds behind the sends, leases ended before results were
 * recorded, and a late result rescheduled a delivery that this worker had claimed again and was
 * sending, so the delivery was sent twice at once.
 */
describe("DeliveryDispatch", () => {
  it("ignores a new claim of a delivery whose result is not recorded yet; takes it once recorded", async () => {
    const { answer, sender, sent } = controlledSender()
    const dispatch = dispatchOf(sender, 4)
    dispatch.add([delivery("a")])
    expect(sent).toEqual(["event-a"])
    // Claimed again while running: not sent again.
    dispatch.add([delivery("a")])
    expect(sent).toEqual(["event-a"])
    await answer()
    // Finished but not recorded: still not sent again.
    dispatch.add([delivery("a")])
    expect(sent).toEqual(["event-a"])
    const batch = dispatch.takeResults()
    expect(batch.map((finished) => finished.delivery.id)).toEqual(["a"])
    dispatch.recorded(batch)
    dispatch.add([delivery("a")])
    expect(sent).toEqual(["event-a", "event-a"])
  })

  it("claims and starts nothing while a record batch's worth of results waits for the recorder", async () => {
    const size = WEBHOOK_LIMITS.recordBatchSize
    const { answer, sender, sent } = controlledSender()
    const dispatch = dispatchOf(sender, size + 10)
    dispatch.add(Array.from({ length: size }, (_, i) => delivery(`d${i}`)))
    expect(sent).toHaveLength(size)
    expect(dispatch.wanted).toBeGreaterThan(0)
    await answer()
    // A full batch waits: nothing more is wanted or started.
    expect(dispatch.wanted).toBe(0)
    dispatch.add([delivery("late")])
    expect(sent).toHaveLength(size)
    // The recorder takes the batch: the buffered delivery starts and claims resume.
    dispatch.recorded(dispatch.takeResults())
    expect(sent).toHaveLength(size + 1)
    expect(dispatch.wanted).toBeGreaterThan(0)
  })

  it("releases unsent a delivery whose lease began more than a time-out ago", async () => {
    const { sender, sent } = controlledSender()
    const dispatch = dispatchOf(sender, 4)
    // The claim (the start of its lease) was made long before the claimed rows came back.
    dispatch.add([delivery("stale")], Date.now() - TIMEOUT_MS - 1)
    expect(sent).toEqual([])
    const [released] = dispatch.takeResults()
    expect(released).toMatchObject({ delivery: { id: "stale" }, outcome: undefined, released: true })
  })
})
