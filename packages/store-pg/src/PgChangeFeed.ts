import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { CHANGE_NOTIFY_CHANNEL, ChangeFeed, publishChange, readVersion } from "@issuing/core"
import { Context, Deferred, Effect, Layer, Option, Queue, type Scope, Stream } from "effect"
import type { PgListener } from "./PgListener.js"

/** Wait before listening again after the connection was lost or refused. */
const RECONNECT_DELAY_MS = 1_000
/**
 * How long this node's own change, not yet notified back, keeps its caches bypassed: it is
 * notified at commit, about a millisecond later. One rolled back is never notified (its version
 * is reused by the next change), so the wait is bounded.
 */
const OWN_CHANGE_WAIT_MS = 1_000

const NONE = Option.none<string>()

/**
 * How often a trusted feed proves again that it hears (and how soon after a failed proof it
 * tries again): a probe is one NOTIFY from the pool, received within a millisecond or two.
 */
const PROBE_INTERVAL_MS = 5_000
/** How long a probe may take to come back before the feed is not trusted. */
const PROBE_TIMEOUT_MS = 2_000

/** The version a notification carries: its payload's first word (`<version> <topic> <id>`). */
const payloadVersion = (payload: string): bigint => {
  const word = payload.split(" ", 1)[0] ?? ""
  return /^\d+$/.test(word) ? BigInt(word) : 0n
}

/**
 * Concurrent reads coalesced into one round trip: a caller joins the read that starts NEXT (never
 * one already running, which may predate a commit the caller must see), so every result includes
 * every commit made before its caller asked. One read in flight at a time; under load, one read per
 * round trip serves every request that arrived meanwhile instead of one read each (measured: the
 * per-request read cost PostgreSQL transfers over HTTP about 15%). The read runs on the node's
 * listening connection while it is up, so it never waits behind the pool's writes.
 */
const coalesced = <A, E>(read: Effect.Effect<A, E>): Effect.Effect<A, E> => {
  let queued: Deferred.Deferred<A, E> | undefined
  let inFlight = false
  const drain: Effect.Effect<void> = Effect.suspend(() => {
    const batch = queued
    if (batch === undefined) {
      inFlight = false
      return Effect.void
    }
    queued = undefined
    return Effect.exit(read).pipe(
      Effect.flatMap((exit) => Deferred.done(batch, exit)),
      Effect.zipRight(drain)
    )
  })
  // One step over the fiber rather than a generator: every request's authentication runs it.
  return Effect.withFiberRuntime<A, E>((fiber) => {
    if (queued === undefined) queued = Deferred.unsafeMake<A, E>(fiber.id())
    const mine = Deferred.await(queued)
    if (inFlight) return mine
    inFlight = true
    return Effect.zipRight(Effect.forkDaemon(drain), mine)
  })
}

/** What a node knows of the feed. */
interface FeedState {
  started: boolean
  /** Listening, and caught up with the row since (re)connecting. */
  up: boolean
  /** The last probe sent since the feed came up came back to the idle listening connection. */
  proven: boolean
  /** Counts the (re)connects, so a probe's answer from an earlier connection proves nothing. */
  generation: number
  /** The probe awaited: its payload and what it resolves. */
  awaiting: { readonly payload: string; readonly received: Deferred.Deferred<void> } | undefined
  /** A failure to listen was logged since the feed was last up. */
  warnedDown: boolean
  /** The newest version notified or read. */
  seen: bigint
  /** This node's newest own change, and when it was made. */
  ownVersion: bigint
  ownAtMs: number
}

/**
 * Follows the notifications for as long as it runs: each advances the known version; on each
 * (re)connect the row is read (what was notified meanwhile is in it), the feed is up again and a
 * probe is asked for; a lost connection takes it down, and it listens again a second later. A
 * probe's payload (`0 probe <node> <n>`) advances nothing, on this node or any other.
 */
const followFeed = (
  listener: PgListener,
  state: FeedState,
  readRow: Effect.Effect<Option.Option<string>, SqlError>,
  probeNow: Queue.Queue<void>
) => {
  const advance = (version: bigint) => {
    if (version > state.seen) state.seen = version
  }
  return listener.stream(CHANGE_NOTIFY_CHANNEL).pipe(
    Stream.runForEach((event) => {
      if (event._tag === "Notified") {
        const awaiting = state.awaiting
        // Only a probe that came while the connection ran nothing of its own proves a session.
        if (awaiting !== undefined && event.idle && event.payload === awaiting.payload)
          return Deferred.succeed(awaiting.received, undefined)
        return Effect.sync(() => advance(payloadVersion(event.payload)))
      }
      return Effect.map(readRow, (version) => {
        advance(BigInt(Option.getOrElse(version, () => "0")))
        state.generation++
        state.proven = false
        state.up = true
        state.warnedDown = false
      }).pipe(Effect.zipLeft(Queue.offer(probeNow, undefined)))
    }),
    Effect.catchAll((error) => {
      if (state.up) return Effect.logWarning("Change feed lost; caches revalidated against the version row until it is back", error.message)
      // Never up since the last warning (a listen URL that cannot be reached): said once, not every second.
      if (state.warnedDown) return Effect.void
      state.warnedDown = true
      return Effect.logWarning("Change feed cannot listen; caches revalidated against the version row until it can", error.message)
    }),
    Effect.ensuring(
      Effect.sync(() => {
        state.up = false
        state.proven = false
      })
    ),
    Effect.zipRight(Effect.sleep(RECONNECT_DELAY_MS)),
    Effect.forever
  )
}

/**
 * Proves the feed, again and again: with the listening connection kept free of statements of its
 * own, a NOTIFY on the feed's channel is sent from the pool — another connection — and must come
 * back to it within PROBE_TIMEOUT_MS. Through a transaction pooler (PgBouncer's `pool_mode =
 * transaction`) the LISTEN ran on a server connection lent for that statement alone, so nothing
 * comes back and the feed is never trusted; a feed that stops hearing is distrusted at the next
 * probe. `notify` sends the probe.
 */
const proveFeed = (
  listener: PgListener,
  state: FeedState,
  notify: (payload: string) => Effect.Effect<unknown, SqlError>,
  probeNow: Queue.Queue<void>
) => {
  const node = Math.random().toString(36).slice(2, 10)
  let sent = 0
  let warned = false
  const probe = Effect.gen(function* () {
    if (!state.up) return
    const generation = state.generation
    const release = yield* Effect.promise(() => listener.quiet())
    const received = yield* Deferred.make<void>()
    sent++
    state.awaiting = { payload: `0 probe ${node} ${sent}`, received }
    const heard = yield* notify(state.awaiting.payload).pipe(
      Effect.zipRight(Deferred.await(received)),
      Effect.timeoutOption(PROBE_TIMEOUT_MS),
      Effect.map(Option.isSome),
      Effect.catchAll(() => Effect.succeed(false)),
      Effect.ensuring(
        Effect.sync(() => {
          state.awaiting = undefined
          release()
        })
      )
    )
    const wasProven = state.proven
    state.proven = heard && state.up && state.generation === generation
    if (!state.proven && state.up && state.generation === generation && (wasProven || !warned)) {
      warned = true
      yield* Effect.logWarning(
        "The change feed's listening connection does not receive notifications (a transaction pooler between it and PostgreSQL?): " +
          "caches are revalidated against the version row on every read until it does"
      )
    }
  })
  return Queue.take(probeNow).pipe(
    Effect.timeoutOption(PROBE_INTERVAL_MS),
    Effect.zipRight(probe),
    Effect.catchAllCause((cause) => Effect.logDebug("Change feed probe failed", cause)),
    Effect.forever
  )
}

/** Forks `effect` in `scope`, apart from the fiber that asked (its transaction, its uninterruptibility). */
const forkApart = (effect: Effect.Effect<unknown>, scope: Scope.Scope) =>
  Effect.forkIn(
    Effect.mapInputContext(Effect.interruptible(effect), (_: Context.Context<never>) => Context.empty()),
    scope
  )

/** How a node follows other nodes' changes: a listening connection, or (`undefined`) the row alone. */
export type FeedListener = PgListener | undefined

/**
 * The PostgreSQL change feed: a version row bumped in every publishing transaction, with a
 * `pg_notify` beside it when `listener` is given; each node follows the notifications on its
 * listening connection (shared with webhook wake-ups, reconnecting, opened on first use) and knows
 * the newest version it has seen. The feed is trusted only while it proves it hears (`proveFeed`).
 * Until then — no connection, a connection that hears nothing, its own change still in flight, or
 * no listener at all (`notify: false`) — `version` reads the committed row (coalesced), so a cache
 * entry is served only if no change was committed since it was filled.
 */
export const pgChangeFeedLayer = (listener: FeedListener) =>
  Layer.scoped(
    ChangeFeed,
    Effect.gen(function* () {
      const client = yield* SqlClient.SqlClient
      const scope = yield* Effect.scope
      const withClient = Effect.provideService(SqlClient.SqlClient, client)
      const state: FeedState = {
        started: false,
        up: false,
        proven: false,
        generation: 0,
        awaiting: undefined,
        warnedDown: false,
        seen: 0n,
        ownVersion: 0n,
        ownAtMs: 0
      }
      const probeNow = yield* Queue.sliding<void>(1)
      const sql = client.withoutTransforms()
      const start = Effect.suspend(() => {
        if (state.started || listener === undefined) return Effect.void
        state.started = true
        return Effect.asVoid(
          Effect.zipRight(
            forkApart(followFeed(listener, state, withClient(readVersion), probeNow), scope),
            forkApart(
              proveFeed(listener, state, (payload) => sql`SELECT pg_notify(${CHANGE_NOTIFY_CHANNEL}, ${payload})`, probeNow),
              scope
            )
          )
        )
      })

      // On the listening connection when it is up and free (no wait for a pool connection), else the
      // pool. The first read opens it: a node that only authenticates (an API node whose background
      // work runs elsewhere) would otherwise send every read through the pool, a pooled connection
      // and an @effect/sql statement each (docs/decisions.md#a-fourth-round-statements-a-request-causes-besides-its-posting).
      const readCommitted = Effect.zipRight(
        start,
        Effect.tryPromise(async () =>
          listener === undefined ? undefined : await listener.read("SELECT version::text AS version FROM issuing_changes WHERE id = 1")
        )
      ).pipe(
        Effect.flatMap((rows) =>
          rows === undefined
            ? withClient(readVersion)
            : Effect.succeed(Option.map(Option.fromNullable(rows[0]), (row) => String(row.version)))
        ),
        Effect.catchTag("UnknownException", () => withClient(readVersion))
      )
      // A committed read is news too: every version up to it is committed, so `version` may serve
      // it at once (a request's authentication reads it first; what the request then reads through
      // caches is no older than the request, without waiting for the notification).
      const committedVersion = coalesced(
        Effect.tap(readCommitted, (version) =>
          Effect.sync(() => {
            const read = BigInt(Option.getOrElse(version, () => "0"))
            if (read > state.seen) state.seen = read
          })
        )
      )
      const revalidated = Effect.catchAll(committedVersion, () => Effect.succeed(NONE))

      return {
        version: Effect.zipRight(
          start,
          Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (inTransaction) => {
            // Inside a transaction reads may see its own uncommitted changes: never cache them.
            if (Option.isSome(inTransaction)) return Effect.succeed(NONE)
            if (!state.up || !state.proven) return revalidated
            if (state.ownVersion > state.seen && Date.now() - state.ownAtMs < OWN_CHANGE_WAIT_MS) return revalidated
            return Effect.succeed(Option.some(String(state.seen)))
          })
        ),
        committed: committedVersion,
        publish: (topic, id) =>
          withClient(publishChange(topic, id, listener !== undefined)).pipe(
            Effect.flatMap((version) =>
              Effect.sync(() => {
                if (version > state.ownVersion) state.ownVersion = version
                state.ownAtMs = Date.now()
              })
            )
          )
      }
    })
  )
