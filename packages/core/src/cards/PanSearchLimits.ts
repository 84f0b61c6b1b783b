import type { SqlError } from "@effect/sql"
import { Effect } from "effect"
import { RateLimited } from "../platform/Errors.js"
import { nowMs } from "../platform/Time.js"
import type { CardDeps } from "./CardDeps.js"

/** The search-by-pan budget's window: ISSUING_PAN_SEARCH_PER_MINUTE searches per rolling minute. */
export const PAN_SEARCH_WINDOW_MS = 60_000
/** The miss limit's window: ISSUING_PAN_SEARCH_MAX_MISSES misses per rolling hour. */
export const PAN_SEARCH_MISS_WINDOW_MS = 60 * 60_000

/**
 * Seconds until fewer than `limit` of these times (newest first, at most `limit`) fall in the
 * window, or null when fewer already do.
 */
export const secondsUntilBelow = (times: ReadonlyArray<string>, limit: number, windowMs: number, now: number): number | null =>
  times.length < limit ? null : Math.max(1, Math.ceil((Date.parse(times[limit - 1]!) + windowMs - now) / 1000))

/**
 * Refuses (429 with Retry-After) a key's search-by-pan past its budget per rolling minute, or once
 * its misses in the last hour reach the limit, before anything is looked up. Both count the key's
 * search_by_pan audit records, so the limits hold across processes and restarts
 * (docs/card-data.md#reveal-and-search-by-pan). Runs inside the search's transaction, which it
 * serialises with the key's other searches.
 */
export const checkPanSearchLimits = ({ config, store }: CardDeps, apiKeyId: string): Effect.Effect<void, RateLimited | SqlError.SqlError> =>
  Effect.gen(function* () {
    // Held to the commit: a concurrent search of the key counts this one (docs/card-data.md).
    yield* store.lockPanSearches(apiKeyId)
    const now = yield* nowMs
    const since = (windowMs: number) => new Date(now - windowMs).toISOString()
    const searches = yield* store.recentSearches(apiKeyId, since(PAN_SEARCH_WINDOW_MS), config.panSearchPerMinute, false)
    const budget = secondsUntilBelow(searches, config.panSearchPerMinute, PAN_SEARCH_WINDOW_MS, now)
    if (budget !== null) return yield* new RateLimited({ retryAfterSeconds: budget })
    const misses = yield* store.recentSearches(apiKeyId, since(PAN_SEARCH_MISS_WINDOW_MS), config.panSearchMaxMisses, true)
    const missed = secondsUntilBelow(misses, config.panSearchMaxMisses, PAN_SEARCH_MISS_WINDOW_MS, now)
    if (missed !== null) return yield* new RateLimited({ retryAfterSeconds: missed })
  })
