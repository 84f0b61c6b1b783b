import { Effect } from "effect"
import { RateLimited } from "../platform/Errors.js"
import { IssuingConfig } from "../platform/IssuingConfig.js"
import { nowMs } from "../platform/Time.js"

interface Bucket {
  tokens: number
  refilledAtMs: number
}

/** Buckets idle this long are full again and can be forgotten. */
const IDLE_BUCKET_MS = 60_000
/** Bound on tracked keys; past it idle buckets are swept. */
const MAX_TRACKED_KEYS = 100_000

/**
 * A token bucket per API key, in process memory: `ratePerSecond` tokens flow in, up to `burst`.
 * One request takes one token; an empty bucket answers with the whole seconds until the next token.
 */
export const makeTokenBuckets = (ratePerSecond: number, burst: number) => {
  const buckets = new Map<string, Bucket>()
  const sweep = (nowMs: number) => {
    for (const [key, bucket] of buckets) {
      if (nowMs - bucket.refilledAtMs > IDLE_BUCKET_MS) buckets.delete(key)
    }
  }
  return {
    /** Takes a token; returns null when granted, else the seconds to wait (≥ 1). */
    take(key: string, nowMs: number): number | null {
      let bucket = buckets.get(key)
      if (bucket === undefined) {
        if (buckets.size >= MAX_TRACKED_KEYS) sweep(nowMs)
        bucket = { tokens: burst, refilledAtMs: nowMs }
        buckets.set(key, bucket)
      } else {
        const elapsedMs = Math.max(0, nowMs - bucket.refilledAtMs)
        bucket.tokens = Math.min(burst, bucket.tokens + (elapsedMs * ratePerSecond) / 1000)
        bucket.refilledAtMs = nowMs
      }
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1
        return null
      }
      return Math.max(1, Math.ceil((1 - bucket.tokens) / ratePerSecond))
    }
  }
}

/** The per-key rate limit (ISSUING_RATE_LIMIT_PER_SECOND / _BURST; docs/api.md#rate-limits). */
export class RateLimiter extends Effect.Service<RateLimiter>()("@issuing/core/RateLimiter", {
  effect: Effect.gen(function* () {
    const config = yield* IssuingConfig
    const buckets = makeTokenBuckets(config.rateLimitPerSecond, config.rateLimitBurst)
    return {
      /** Spends one request of the key's budget, or fails with the seconds to wait. */
      consume: (apiKeyId: string): Effect.Effect<void, RateLimited> =>
        Effect.flatMap(nowMs, (now) => {
          const retryAfterSeconds = buckets.take(apiKeyId, now)
          return retryAfterSeconds === null ? Effect.void : Effect.fail(new RateLimited({ retryAfterSeconds }))
        })
    }
  })
}) {}
