import { SqlError } from "@effect/sql"
import { Deferred, Duration, Effect, Metric } from "effect"
import { RateLimited } from "../platform/Errors.js"
import { IssuingConfig } from "../platform/IssuingConfig.js"
import { nowMs } from "../platform/Time.js"
import { Transactor, type TransactorService } from "../sql/Transactor.js"
import { AccessStore, type AccessStoreService, type RateBucket } from "./AccessStore.js"

/** A key's bucket, linked in the order of last use (a doubly linked list: O(1) to move or drop). */
interface Bucket {
  readonly key: string
  tokens: number
  refilledAtMs: number
  older: Bucket
  newer: Bucket
}

/**
 * Bound on the keys one table of in-memory buckets tracks (docs/oauth.md#throttling): with keys of
 * up to 140 characters (an address and a client_id of at most 100), about 30 MB.
 */
export const MAX_TRACKED_KEYS = 100_000

/** Idle buckets forgotten per request: more than one, so that forgetting keeps up with new keys. */
const FORGET_PER_TAKE = 2

/**
 * A token bucket per key, in process memory: `ratePerSecond` tokens flow in, up to `burst`.
 * One request takes one token; an empty bucket answers with the whole seconds until the next token.
 * (The OAuth endpoints' per-client limit; the API keys' limit is the shared `RateLimiter` below.)
 *
 * At most `maxKeys` buckets, with O(1) work per request: the buckets are linked in order of last
 * use, so the first is the one idle longest. Each take forgets up to two first buckets idle long
 * enough to be full again (forgetting one changes nothing: a new bucket starts full), then, past
 * `maxKeys`, the least recently used one even if not full — that key starts again with a full
 * bucket. Tried and not kept: sweeping the whole table once it reached the bound, which scanned
 * every entry for each new key while none was idle (a flood of distinct client ids); and a Map's
 * own insertion order, whose first key is found by skipping the entries deleted before it (about
 * 40 µs per request at 100,000 keys).
 */
export const makeTokenBuckets = (ratePerSecond: number, burst: number, maxKeys: number = MAX_TRACKED_KEYS) => {
  const buckets = new Map<string, Bucket>()
  // The list's ends: `oldest.newer` is the bucket idle longest, `oldest.older` the one used last.
  const oldest = { key: "", tokens: 0, refilledAtMs: 0 } as Bucket
  oldest.older = oldest
  oldest.newer = oldest
  const unlink = (bucket: Bucket) => {
    bucket.older.newer = bucket.newer
    bucket.newer.older = bucket.older
  }
  const linkAsNewest = (bucket: Bucket) => {
    bucket.older = oldest.older
    bucket.newer = oldest
    oldest.older.newer = bucket
    oldest.older = bucket
  }
  const drop = (bucket: Bucket) => {
    unlink(bucket)
    buckets.delete(bucket.key)
  }
  // A bucket untouched this long has refilled to its burst, whatever it held.
  const fullAfterMs = (burst * 1000) / ratePerSecond
  const forget = (nowMs: number) => {
    for (let i = 0; i < FORGET_PER_TAKE && buckets.size > 1; i++) {
      if (nowMs - oldest.newer.refilledAtMs < fullAfterMs) break
      drop(oldest.newer)
    }
    if (buckets.size > maxKeys) drop(oldest.newer)
  }
  return {
    /** Takes a token; returns null when granted, else the seconds to wait (≥ 1). */
    take(key: string, nowMs: number): number | null {
      let bucket = buckets.get(key)
      if (bucket === undefined) {
        bucket = { key, tokens: burst, refilledAtMs: nowMs } as Bucket
        buckets.set(key, bucket)
      } else {
        unlink(bucket)
        const elapsedMs = Math.max(0, nowMs - bucket.refilledAtMs)
        bucket.tokens = Math.min(burst, bucket.tokens + (elapsedMs * ratePerSecond) / 1000)
        bucket.refilledAtMs = Math.max(nowMs, bucket.refilledAtMs)
      }
      linkAsNewest(bucket)
      forget(nowMs)
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1
        return null
      }
      return Math.max(1, Math.ceil((1 - bucket.tokens) / ratePerSecond))
    },
    /** The buckets held, never more than `maxKeys`. */
    get size(): number {
      return buckets.size
    }
  }
}

/**
 * The share of a bucket's tokens one lease takes. It bounds what a lease can let through beyond
 * the limit (a node's leased tokens live only as long as the bucket takes to make them up again),
 * so 10% keeps a key within 10% of its limit however many nodes serve it.
 */
export const LEASE_SHARE = 0.1
/** Bound on one lease. */
export const MAX_LEASE_TOKENS = 100
/** Bound on a lease's life, for very low rates. */
export const MAX_LEASE_TTL_MS = 60_000
/**
 * A lease's shortest life, for high rates (at 1,000,000/s, 100 tokens refill in 0.1 ms: a node
 * would lease for nearly every request). It lets through at most 100 ms of the rate beyond the
 * limit, a tenth of what flows in a second.
 */
export const MIN_LEASE_TTL_MS = 100

/** What one lease from a key's shared bucket decided. */
export interface Lease {
  /** Tokens the node may spend, 0 when the bucket is empty. */
  readonly granted: number
  /** How long the node may spend them: the time the bucket takes to refill as many. */
  readonly ttlMs: number
  /** The bucket as the lease leaves it. */
  readonly bucket: RateBucket
  /** When nothing is granted: the whole seconds until a token (≥ 1). */
  readonly retryAfterSeconds: number | null
  /** When nothing is granted: the time until a token flows in, during which no lease can succeed. */
  readonly emptyForMs: number
}

/** Tokens a node gives back: leased at `leasedAtMs`, unspent when their lease ran out. */
export interface Returned {
  readonly tokens: number
  readonly leasedAtMs: number
}

/**
 * A lease from a key's shared bucket, pure: the bucket refilled to `nowMs` (a clock behind the
 * bucket's refills nothing), the tokens a node gives back put back unless the bucket has been full
 * since they were leased (a full bucket would have overflowed them: putting them back then would
 * add to the burst), then a share of what is there taken — never more than there is.
 */
export const planLease = (stored: RateBucket, nowMs: number, returned: Returned, ratePerSecond: number, burst: number): Lease => {
  const elapsedMs = Math.max(0, nowMs - stored.refilledAtMs)
  const refilledAtMs = Math.max(nowMs, stored.refilledAtMs)
  const refilled = stored.tokens + (elapsedMs * ratePerSecond) / 1000
  const fullAtMs = refilled >= burst ? refilledAtMs : stored.fullAtMs
  const putBack = returned.tokens > 0 && returned.leasedAtMs > fullAtMs ? returned.tokens : 0
  const available = Math.min(burst, refilled + putBack)
  if (available < 1) {
    const emptyForMs = ((1 - available) * 1000) / ratePerSecond
    const retryAfterSeconds = Math.max(1, Math.ceil(emptyForMs / 1000))
    return { granted: 0, ttlMs: 0, bucket: { tokens: available, refilledAtMs, fullAtMs }, retryAfterSeconds, emptyForMs }
  }
  const granted = Math.max(1, Math.min(MAX_LEASE_TOKENS, Math.floor(available * LEASE_SHARE)))
  const ttlMs = Math.min(MAX_LEASE_TTL_MS, Math.max(MIN_LEASE_TTL_MS, (granted * 1000) / ratePerSecond))
  return { granted, ttlMs, bucket: { tokens: available - granted, refilledAtMs, fullAtMs }, retryAfterSeconds: null, emptyForMs: 0 }
}

/** What a node holds of a key's bucket. */
interface Held {
  /** Leased tokens not yet spent (whole). */
  tokens: number
  leasedAtMs: number
  expiresAtMs: number
  /**
   * Until when the bucket was found empty: the key's requests are refused here without asking the
   * database again (only tokens given back by another node could have come in meanwhile).
   */
  emptyUntilMs: number
  /** Until when the key is limited by this node's own bucket, the database having failed a lease. */
  ownBucketUntilMs: number
  /** The lease in flight; the key's other requests wait for it, then look again. */
  lease: Deferred.Deferred<void> | null
  /**
   * The shared bucket as this node's last lease left it, or null when unknown (no lease yet, or
   * the last one failed): the next lease is planned from it and written only if the row still
   * holds it, one statement (`leaseTransaction`).
   */
  known: RateBucket | null
}

/**
 * How long a shared bucket stays in the database untouched (at least). A day, far beyond any clock
 * skew between nodes and any lease's life, so a purge never races a node still spending a lease.
 */
export const IDLE_SHARED_BUCKET_MS = 24 * 60 * 60 * 1000

/** How long a node limits a key by its own bucket after a lease failed, before trying the database again. */
export const OWN_BUCKET_AFTER_FAILURE_MS = 1_000

/** How long leases must have kept failing, none landing meanwhile, before the fallback is worth a warning. */
export const LEASE_FAILURES_WARN_AFTER_MS = 10_000

/** At most one warning of failing leases per this long. */
export const LEASE_FAILURES_WARN_EVERY_MS = 60_000

/** A node's record of its failed leases, for the log. */
export interface LeaseFailures {
  /** Since when every lease has failed (none landed since); null while they land. */
  readonly failingSinceMs: number | null
  /** Failures since the last warning. */
  readonly unreported: number
  readonly warnedAtMs: number | null
}

export const NO_LEASE_FAILURES: LeaseFailures = { failingSinceMs: null, unreported: 0, warnedAtMs: null }

/**
 * Whether a failed lease is a warning or a debug line. On SQLite a lease waits behind every batch's
 * write lock and, past 250 ms, falls back to the node's bucket: under batch load that is routine
 * and the next lease lands, so each one is only counted (`issuing.rate_limit.lease_fallbacks`) and
 * logged at DEBUG. A warning says the fallback has persisted — no lease has landed for
 * `LEASE_FAILURES_WARN_AFTER_MS` (the database gone, or a lock held for seconds) — at most once per
 * `LEASE_FAILURES_WARN_EVERY_MS`, with the failures since the last one.
 */
export const noteLeaseFailure = (
  failures: LeaseFailures,
  now: number
): { readonly failures: LeaseFailures; readonly warn: boolean; readonly count: number } => {
  const failingSinceMs = failures.failingSinceMs ?? now
  const count = failures.unreported + 1
  const warn =
    now - failingSinceMs >= LEASE_FAILURES_WARN_AFTER_MS &&
    (failures.warnedAtMs === null || now - failures.warnedAtMs >= LEASE_FAILURES_WARN_EVERY_MS)
  return warn
    ? { failures: { failingSinceMs, unreported: 0, warnedAtMs: now }, warn, count }
    : { failures: { failingSinceMs, unreported: count, warnedAtMs: failures.warnedAtMs }, warn, count }
}

/** A lease landed: the failures, if any, did not persist. */
export const noteLeaseLanded = (failures: LeaseFailures): LeaseFailures =>
  failures.failingSinceMs === null ? failures : { ...failures, failingSinceMs: null }

const leaseFallbacks = Metric.counter("issuing.rate_limit.lease_fallbacks", {
  description: "Rate-limit leases that failed or took too long, the node limiting the key by its own bucket",
  incremental: true
})

/**
 * A node's record of failed leases (noteLeaseFailure, noteLeaseLanded), counted and logged: each
 * failure at DEBUG, a warning once they have persisted.
 */
const makeLeaseFailureLog = () => {
  let failures = NO_LEASE_FAILURES
  return {
    landed: () => {
      failures = noteLeaseLanded(failures)
    },
    report: (error: SqlError.SqlError, now: number) => {
      const noted = noteLeaseFailure(failures, now)
      failures = noted.failures
      return Effect.zipRight(
        Metric.increment(leaseFallbacks),
        noted.warn
          ? Effect.logWarning(
              `rate limit: no shared bucket could be leased for ${Math.round((now - noted.failures.failingSinceMs!) / 1000)} s (${noted.count} failures since the last warning); limiting keys by this node's buckets`,
              error
            )
          : Effect.logDebug("rate limit: the shared bucket could not be leased; limiting by this node's bucket", error)
      )
    }
  }
}

/** What the limiter works with, gathered once when the service is built. */
interface Limiter {
  readonly store: AccessStoreService
  readonly transactor: TransactorService
  readonly ratePerSecond: number
  readonly burst: number
  /**
   * The longest a request waits for a lease (ISSUING_RATE_LIMIT_LEASE_TIMEOUT_MS, 250 ms by
   * default). Past it the lease is abandoned (rolled back) and the key is limited by this node's
   * own bucket for a while: a write lock another process holds on SQLite (up to its 5 s busy
   * timeout) or a slow database must not stall every request, reads included, behind the rate
   * limiter (docs/operations.md#rate-limits-across-nodes).
   */
  readonly leaseTimeoutMs: number
  /** What this node holds of each key's bucket, at most MAX_TRACKED_KEYS keys. */
  readonly held: Map<string, Held>
  /** While the database cannot be asked, each node limits a key by itself, as before leases. */
  readonly ownBuckets: ReturnType<typeof makeTokenBuckets>
  readonly failures: ReturnType<typeof makeLeaseFailureLog>
}

/** The key's entry, made when it has none; past MAX_TRACKED_KEYS, the entries with nothing in force are dropped first. */
const heldOf = (held: Map<string, Held>, apiKeyId: string, now: number): Held => {
  let entry = held.get(apiKeyId)
  if (entry === undefined) {
    if (held.size >= MAX_TRACKED_KEYS) {
      for (const [key, other] of held)
        if (other.lease === null && Math.max(other.expiresAtMs, other.emptyUntilMs, other.ownBucketUntilMs) <= now) held.delete(key)
    }
    entry = { tokens: 0, leasedAtMs: 0, expiresAtMs: 0, emptyUntilMs: 0, ownBucketUntilMs: 0, lease: null, known: null }
    held.set(apiKeyId, entry)
  }
  return entry
}

/** The lease's transaction: the key's shared bucket locked, the lease planned (`planLease`, pure) and the bucket saved. */
const lockedLease = (limiter: Limiter, apiKeyId: string, returned: Returned, now: number): Effect.Effect<Lease, SqlError.SqlError> =>
  limiter.transactor.withTransaction(
    Effect.gen(function* () {
      const { store, burst } = limiter
      const stored = yield* store.lockRateBucket(apiKeyId, { tokens: burst, refilledAtMs: now, fullAtMs: now })
      const planned = planLease(stored, now, returned, limiter.ratePerSecond, burst)
      yield* store.saveRateBucket(apiKeyId, planned.bucket)
      return planned
    })
  )

/**
 * One lease, abandoned after the lease time-out. With the bucket as this node's last lease left it
 * (`known`), the lease is planned from it and written only if the row still holds it: one
 * statement, no transaction (a lease was a transaction of four: begin, lock, save, commit). The
 * row's three fields are the whole of the bucket's state (`planLease` reads nothing else), so a
 * row equal to the known bucket plans as the locked way would. When another node has leased since
 * (or nothing is known), the locked way (docs/operations.md#rate-limits-across-nodes).
 */
const leaseTransaction = (
  limiter: Limiter,
  apiKeyId: string,
  returned: Returned,
  now: number,
  known: RateBucket | null
): Effect.Effect<Lease, SqlError.SqlError> =>
  // Disconnected: a transaction waiting for its connection or the write lock cannot be
  // interrupted (@effect/sql acquires it uninterruptibly), so the time-out would otherwise wait
  // with it — on SQLite behind another process's lock, the whole 5 s busy timeout, and every
  // request of the key waits for this lease meanwhile (found by the fault suite,
  // test/faults/database.test.ts). Abandoned, it rolls back in the background once it can.
  Effect.interruptible(
    Effect.disconnect(
      known === null
        ? lockedLease(limiter, apiKeyId, returned, now)
        : Effect.suspend(() => {
            const planned = planLease(known, now, returned, limiter.ratePerSecond, limiter.burst)
            return Effect.flatMap(limiter.store.swapRateBucket(apiKeyId, known, planned.bucket), (swapped) =>
              swapped ? Effect.succeed(planned) : lockedLease(limiter, apiKeyId, returned, now)
            )
          })
    )
  ).pipe(
    Effect.timeoutFail({
      duration: Duration.millis(limiter.leaseTimeoutMs),
      onTimeout: () => new SqlError.SqlError({ cause: null, message: `the rate-limit lease took longer than ${limiter.leaseTimeoutMs} ms` })
    })
  )

/**
 * Leases tokens for the key (giving back what it held) and spends one of them; the seconds to
 * wait when the bucket is empty. The token is spent as the lease lands: a lease whose life ran
 * out before its requester looked again would otherwise be leased again, and again. When the
 * database fails the lease, the key is limited by the node's own bucket for a while: a rate
 * limit is no reason to refuse a request the node may still serve (a cached read).
 */
const lease = (limiter: Limiter, apiKeyId: string, entry: Held, now: number) =>
  Effect.flatMap(Deferred.make<void>(), (done) => {
    const returned = { tokens: entry.tokens, leasedAtMs: entry.leasedAtMs }
    const known = entry.known
    entry.tokens = 0
    entry.lease = done
    // Unknown until this lease lands: an abandoned one may still be written.
    entry.known = null
    return leaseTransaction(limiter, apiKeyId, returned, now, known).pipe(
      Effect.map((planned) => {
        limiter.failures.landed()
        entry.known = planned.bucket
        entry.tokens = Math.max(0, planned.granted - 1)
        entry.leasedAtMs = now
        entry.expiresAtMs = now + planned.ttlMs
        entry.emptyUntilMs = now + planned.emptyForMs
        return planned.retryAfterSeconds
      }),
      Effect.catchAll((error: SqlError.SqlError) =>
        Effect.zipRight(
          limiter.failures.report(error, now),
          Effect.sync(() => {
            entry.ownBucketUntilMs = now + OWN_BUCKET_AFTER_FAILURE_MS
            return limiter.ownBuckets.take(apiKeyId, now)
          })
        )
      ),
      Effect.ensuring(
        Effect.suspend(() => {
          entry.lease = null
          return Deferred.succeed(done, undefined)
        })
      ),
      Effect.uninterruptible
    )
  })

/** The turns of `consume` after the first: the key's lease, own bucket, or a lease in flight. */
const consumeSlowly = (limiter: Limiter, apiKeyId: string): Effect.Effect<void, RateLimited> =>
  Effect.gen(function* () {
    // Each turn spends a held token, or leases (spending one of the lease), or waits for the
    // lease in flight: a turn that finds the tokens it waited for spent by the key's other
    // requests leases next.
    while (true) {
      const now = yield* nowMs
      const entry = heldOf(limiter.held, apiKeyId, now)
      if (entry.tokens >= 1 && now < entry.expiresAtMs) {
        entry.tokens -= 1
        return
      }
      const own = now < entry.ownBucketUntilMs ? limiter.ownBuckets.take(apiKeyId, now) : undefined
      if (own !== undefined) return own === null ? undefined : yield* new RateLimited({ retryAfterSeconds: own })
      if (now < entry.emptyUntilMs) {
        return yield* new RateLimited({ retryAfterSeconds: Math.max(1, Math.ceil((entry.emptyUntilMs - now) / 1000)) })
      }
      if (entry.lease === null) {
        const retryAfterSeconds = yield* lease(limiter, apiKeyId, entry, now)
        return retryAfterSeconds === null ? undefined : yield* new RateLimited({ retryAfterSeconds })
      }
      yield* Deferred.await(entry.lease)
    }
  })

/**
 * The per-key rate limit (ISSUING_RATE_LIMIT_PER_SECOND / _BURST; docs/api.md#rate-limits), held
 * across every node on the database: each key has one token bucket in the store, and a node leases
 * a few tokens at a time from it (a share of what is there, so a small bucket is leased token by
 * token), spends them without a database round trip, and gives back what it did not spend when
 * the lease runs out. Why leases rather than buckets kept in step by the change feed:
 * docs/operations.md#rate-limits-across-nodes.
 */
export class RateLimiter extends Effect.Service<RateLimiter>()("@issuing/core/RateLimiter", {
  effect: Effect.gen(function* () {
    const config = yield* IssuingConfig
    const rate = config.rateLimitPerSecond
    const burst = config.rateLimitBurst
    const limiter: Limiter = {
      store: yield* AccessStore,
      transactor: yield* Transactor,
      ratePerSecond: rate,
      burst,
      leaseTimeoutMs: config.rateLimitLeaseTimeoutMs,
      held: new Map(),
      ownBuckets: makeTokenBuckets(rate, burst),
      failures: makeLeaseFailureLog()
    }
    return {
      /**
       * Spends one request of a bucket's budget, or fails with the seconds to wait. The bucket is
       * named by the id of who spends it: an API key, an OAuth grant (its access tokens'), or a
       * webhook portal session (never its creating key's; docs/webhooks.md#the-page-and-its-calls).
       * A token held from the bucket's lease is spent at once, without a generator: this runs for
       * every request (docs/operations.md#volume, "The Node side, profiled").
       */
      consume: (apiKeyId: string): Effect.Effect<void, RateLimited> =>
        Effect.clockWith((clock) => {
          const now = clock.unsafeCurrentTimeMillis()
          const entry = limiter.held.get(apiKeyId)
          if (entry !== undefined && entry.tokens >= 1 && now < entry.expiresAtMs) {
            entry.tokens -= 1
            return Effect.void
          }
          return consumeSlowly(limiter, apiKeyId)
        }),
      /**
       * Deletes the shared buckets untouched for a day, or for as long as a bucket takes to fill
       * if that is longer: such a bucket is full, as one created anew is, so nothing changes for
       * its key. Bounds the table, which gains a row for every portal session and OAuth grant.
       */
      purgeIdle: Effect.flatMap(nowMs, (now) =>
        limiter.store.purgeRateBuckets(now - Math.max(IDLE_SHARED_BUCKET_MS, (burst * 1000) / rate))
      )
    }
  })
}) {}
