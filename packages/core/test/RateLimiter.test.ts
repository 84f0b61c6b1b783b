import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import type { RateBucket } from "../src/access/AccessStore.js"
import {
  LEASE_FAILURES_WARN_AFTER_MS,
  LEASE_FAILURES_WARN_EVERY_MS,
  LEASE_SHARE,
  type LeaseFailures,
  MIN_LEASE_TTL_MS,
  NO_LEASE_FAILURES,
  noteLeaseFailure,
  noteLeaseLanded,
  planLease
} from "../src/access/RateLimiter.js"

/**
 * A key's requests spread over nodes that lease from one shared bucket, as `RateLimiter` does:
 * a node spends its leased tokens until they run out or expire, then leases again, giving back
 * what it did not spend. Returns the times of the granted requests.
 */
const simulate = (requests: ReadonlyArray<{ readonly node: number; readonly atMs: number }>, rate: number, burst: number) => {
  let bucket: RateBucket = { tokens: burst, refilledAtMs: 0, fullAtMs: 0 }
  const held = new Map<number, { tokens: number; leasedAtMs: number; expiresAtMs: number }>()
  const granted: Array<number> = []
  for (const { node, atMs } of requests) {
    const entry = held.get(node) ?? { tokens: 0, leasedAtMs: 0, expiresAtMs: 0 }
    held.set(node, entry)
    if (entry.tokens < 1 || atMs >= entry.expiresAtMs) {
      const lease = planLease(bucket, atMs, { tokens: entry.tokens, leasedAtMs: entry.leasedAtMs }, rate, burst)
      expect(lease.granted).toBeLessThanOrEqual(Math.max(1, Math.floor(burst * LEASE_SHARE)))
      expect(lease.bucket.tokens).toBeGreaterThanOrEqual(0)
      bucket = lease.bucket
      entry.tokens = lease.granted
      entry.leasedAtMs = atMs
      entry.expiresAtMs = atMs + lease.ttlMs
      if (lease.granted === 0) {
        expect(lease.retryAfterSeconds).toBeGreaterThanOrEqual(1)
        continue
      }
    }
    entry.tokens -= 1
    granted.push(atMs)
  }
  return granted
}

const requests = fc
  .array(fc.record({ node: fc.integer({ min: 0, max: 3 }), gapMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 2_000 })) }), {
    maxLength: 400
  })
  .map((gaps) => {
    let atMs = 0
    return gaps.map(({ node, gapMs }) => {
      atMs += gapMs
      return { node, atMs }
    })
  })

describe("leases from a key's shared bucket", () => {
  it("never let through more than the limit and one lease, in any window, however many nodes", () => {
    fc.assert(
      fc.property(requests, fc.integer({ min: 1, max: 300 }), fc.constantFrom(0.5, 1, 10, 100, 1_000), (requests, burst, rate) => {
        const granted = simulate(requests, rate, burst)
        // One lease, or what flows in during a lease's shortest life.
        const oneLease = Math.max(1, Math.floor(burst * LEASE_SHARE), Math.ceil((rate * MIN_LEASE_TTL_MS) / 1000))
        for (let i = 0; i < granted.length; i++) {
          for (let j = i; j < granted.length; j++) {
            const windowMs = granted[j]! - granted[i]!
            expect(j - i + 1).toBeLessThanOrEqual(Math.floor(burst + (windowMs * rate) / 1000) + oneLease)
          }
        }
      }),
      {
        numRuns: 200,
        // Each node leases from a full bucket and spends one token; an hour later, the bucket full
        // again, the key drains every node at once: what they held must not add to the burst.
        examples: [
          [
            [
              ...Array.from({ length: 4 }, (_, node) => ({ node, atMs: 0 })),
              ...Array.from({ length: 400 }, (_, i) => ({ node: i % 4, atMs: 3_600_000 }))
            ],
            200,
            100
          ]
        ]
      }
    )
  })

  it("give a key alternating between nodes its whole burst at once, not less", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000 }), fc.integer({ min: 2, max: 5 }), (burst, nodes) => {
        const alternating = Array.from({ length: burst * 3 }, (_, i) => ({ node: i % nodes, atMs: 0 }))
        expect(simulate(alternating, 1, burst)).toHaveLength(burst)
      })
    )
  })

  it("take a share of the bucket, token by token when it is small, and give back unspent tokens", () => {
    const none = { tokens: 0, leasedAtMs: 0 }
    expect(planLease({ tokens: 200, refilledAtMs: 0, fullAtMs: 0 }, 0, none, 100, 200)).toEqual({
      granted: 20,
      ttlMs: 200,
      bucket: { tokens: 180, refilledAtMs: 0, fullAtMs: 0 },
      retryAfterSeconds: null,
      emptyForMs: 0
    })
    expect(planLease({ tokens: 5, refilledAtMs: 0, fullAtMs: 0 }, 0, none, 1, 20).granted).toBe(1)
    // A lease lives as long as the bucket takes to refill it, 100 ms at least, a minute at most.
    expect(planLease({ tokens: 1_000_000, refilledAtMs: 0, fullAtMs: 0 }, 0, none, 1_000_000, 1_000_000)).toMatchObject({
      granted: 100,
      ttlMs: 100
    })
    expect(planLease({ tokens: 100, refilledAtMs: 0, fullAtMs: 0 }, 0, none, 0.1, 100)).toMatchObject({ granted: 10, ttlMs: 60_000 })
    // Refilled by the time elapsed; unspent tokens put back while the bucket has not been full since.
    expect(planLease({ tokens: 0, refilledAtMs: 0, fullAtMs: 0 }, 500, { tokens: 3, leasedAtMs: 100 }, 10, 20).bucket).toEqual({
      tokens: 7,
      refilledAtMs: 500,
      fullAtMs: 0
    })
    // Full again since they were leased: they would have overflowed, so they are not put back.
    expect(planLease({ tokens: 19, refilledAtMs: 0, fullAtMs: 0 }, 10_000, { tokens: 5, leasedAtMs: 100 }, 1, 20).bucket).toEqual({
      tokens: 18,
      refilledAtMs: 10_000,
      fullAtMs: 10_000
    })
    // Empty: nothing granted, the seconds until a token.
    expect(planLease({ tokens: 0.25, refilledAtMs: 1_000, fullAtMs: 0 }, 1_000, none, 0.5, 20)).toMatchObject({
      granted: 0,
      retryAfterSeconds: 2,
      emptyForMs: 1_500
    })
    // A node whose clock is behind the bucket's refills nothing and does not move it back.
    expect(planLease({ tokens: 0.5, refilledAtMs: 5_000, fullAtMs: 0 }, 1_000, none, 1, 20)).toMatchObject({
      granted: 0,
      bucket: { tokens: 0.5, refilledAtMs: 5_000, fullAtMs: 0 }
    })
  })
})

describe("failed leases in the log", () => {
  /** Runs failures (and landed leases) at the given times; returns the times that warned and the counts they reported. */
  const replay = (steps: ReadonlyArray<{ readonly atMs: number; readonly landed?: boolean }>) => {
    let failures: LeaseFailures = NO_LEASE_FAILURES
    const warnings: Array<{ atMs: number; count: number }> = []
    for (const step of steps) {
      if (step.landed === true) {
        failures = noteLeaseLanded(failures)
        continue
      }
      const noted = noteLeaseFailure(failures, step.atMs)
      failures = noted.failures
      if (noted.warn) warnings.push({ atMs: step.atMs, count: noted.count })
    }
    return warnings
  }

  it("never warns of fallbacks between which leases land (a batch's write lock on SQLite), however long they go on", () => {
    const steps = Array.from({ length: 600 }, (_, index) => ({ atMs: index * 500, landed: index % 5 === 4 }))
    expect(replay(steps)).toEqual([])
  })

  it("warns once the failures persisted, then at most once a period, with the failures since the last warning", () => {
    // A failure every second, none landing, for three minutes.
    const steps = Array.from({ length: 181 }, (_, index) => ({ atMs: 1_000 + index * 1_000 }))
    const warnings = replay(steps)
    expect(warnings[0]).toEqual({ atMs: 1_000 + LEASE_FAILURES_WARN_AFTER_MS, count: LEASE_FAILURES_WARN_AFTER_MS / 1_000 + 1 })
    for (let index = 1; index < warnings.length; index += 1) {
      expect(warnings[index]!.atMs - warnings[index - 1]!.atMs).toBe(LEASE_FAILURES_WARN_EVERY_MS)
      expect(warnings[index]!.count).toBe(LEASE_FAILURES_WARN_EVERY_MS / 1_000)
    }
    expect(warnings).toHaveLength(3)
  })

  it("starts the persistence anew after a lease lands", () => {
    const warnings = replay([
      { atMs: 0 },
      { atMs: LEASE_FAILURES_WARN_AFTER_MS - 1 },
      { atMs: LEASE_FAILURES_WARN_AFTER_MS - 1, landed: true },
      { atMs: LEASE_FAILURES_WARN_AFTER_MS + 5 },
      { atMs: 2 * LEASE_FAILURES_WARN_AFTER_MS + 4 },
      { atMs: 2 * LEASE_FAILURES_WARN_AFTER_MS + 5 }
    ])
    expect(warnings).toEqual([{ atMs: 2 * LEASE_FAILURES_WARN_AFTER_MS + 5, count: 5 }])
  })
})
