import { describe, expect, it } from "@effect/vitest"
import { MAX_TRACKED_KEYS, makeTokenBuckets } from "../src/access/RateLimiter.js"

// The in-memory buckets of the /oauth throttle (docs/oauth.md#throttling): a bounded table, O(1) per request.
describe("makeTokenBuckets", () => {
  it("holds at most its bound however many distinct keys come, and still throttles a recent key", () => {
    // 20 of burst refilled at 5 a second, as the /oauth endpoints by default; 200,000 distinct
    // client ids within one second, so none of their buckets has had time to fill again.
    const buckets = makeTokenBuckets(5, 20)
    const start = 1_700_000_000_000
    let largest = 0
    let refused = 0
    for (let i = 0; i < 2 * MAX_TRACKED_KEYS; i++) {
      if (buckets.take(`127.0.0.1 client-${i}`, start + Math.floor(i / 200)) !== null) refused++
      largest = Math.max(largest, buckets.size)
    }
    expect(refused).toBe(0)
    expect(largest).toBe(MAX_TRACKED_KEYS)
    const now = start + 1_000
    const recent = `127.0.0.1 client-${2 * MAX_TRACKED_KEYS - 1}`
    // Its first token was spent in the loop; 19 more, then it waits.
    for (let i = 0; i < 19; i++) expect(buckets.take(recent, now)).toBeNull()
    expect(buckets.take(recent, now)).toBe(1)
    expect(buckets.size).toBe(MAX_TRACKED_KEYS)
  })

  it("forgets the buckets idle long enough to be full again, keeping the throttled ones", () => {
    const buckets = makeTokenBuckets(1, 2, 1_000)
    for (let i = 0; i < 500; i++) buckets.take(`idle-${i}`, 0)
    expect(buckets.take("busy", 1_000)).toBeNull()
    expect(buckets.take("busy", 1_000)).toBeNull()
    expect(buckets.take("busy", 1_000)).toBe(1)
    // 2 s later the idle buckets are full: each request forgets up to two of them.
    for (let i = 0; i < 250; i++) buckets.take("busy", 2_000 + i * 1_000)
    expect(buckets.size).toBe(1)
    // The busy key's bucket is still the one it spent: one token a second, taken each second.
    expect(buckets.take("busy", 2_000 + 249 * 1_000)).toBe(1)
  })

  it("evicts the least recently used bucket past its bound, which starts again full", () => {
    const buckets = makeTokenBuckets(0.001, 1, 2)
    expect(buckets.take("a", 0)).toBeNull()
    expect(buckets.take("a", 0)).toBe(1000)
    expect(buckets.take("b", 0)).toBeNull()
    // "a" used last, so "b" goes when "c" comes.
    expect(buckets.take("a", 0)).toBe(1000)
    expect(buckets.take("c", 0)).toBeNull()
    expect(buckets.size).toBe(2)
    expect(buckets.take("a", 0)).toBe(1000)
    expect(buckets.take("b", 0)).toBeNull()
  })
})
