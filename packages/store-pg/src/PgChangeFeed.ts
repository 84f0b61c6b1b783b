import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { CHANGE_NOTIFY_CHANNEL, ChangeFeed, publishChange, readVersion } from "@issuing/core"
import { Context, Deferred, Effect, Layer, Option, Stream } from "effect"
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
  return Effect.gen(function* () {
    if (queued === undefined) queued = yield* Deferred.make<A, E>()
    const mine = queued
    if (!inFlight) {
      inFlight = true
      yield* Effect.forkDaemon(drain)
    }
    return yield* Deferred.await(mine)
  })
}

/** What a node knows of the feed. */
interface FeedState {
  started: boolean
  /** Listening, and caught up with the row since (re)connecting. */
  up: boolean
  /** The newest version notified or read. */
  seen: bigint
  /** This node's newest own change, and when it was made. */
  ownVersion: bigint
  ownAtMs: number
}

/**
 * Follows the notifications for as long as it runs: each advances the known version; on each
 * (re)connect the row is read (what was notified meanwhile is in it) and the feed is up again; a
 * lost connection takes it down, and it listens again a second later.
 */
const followFeed = (listener: PgListener, state: FeedState, readRow: Effect.Effect<Option.Option<string>, SqlError>) => {
  const advance = (version: bigint) => {
    if (version > state.seen) state.seen = version
  }
  return listener.stream(CHANGE_NOTIFY_CHANNEL).pipe(
    Stream.runForEach((event) =>
      event._tag === "Notified"
        ? Effect.sync(() => advance(payloadVersion(event.payload)))
        : Effect.map(readRow, (version) => {
            advance(BigInt(Option.getOrElse(version, () => "0")))
            state.up = true
          })
    ),
    Effect.catchAll((error) =>
      state.up ? Effect.logWarning("Change feed lost; caches bypassed until it is back", error.message) : Effect.void
    ),
    Effect.ensuring(Effect.sync(() => (state.up = false))),
    Effect.zipRight(Effect.sleep(RECONNECT_DELAY_MS)),
    Effect.forever
  )
}

/**
 * The PostgreSQL change feed: a version row bumped in every publishing transaction with a
 * `pg_notify` beside it; each node follows the notifications on its listening connection (shared
 * with webhook wake-ups, reconnecting, opened on first use) and knows the newest version it has seen. No connection —
 * or its own change still in flight — means no version: caches are bypassed until it is back.
 */
export const pgChangeFeedLayer = (listener: PgListener) =>
  Layer.scoped(
    ChangeFeed,
    Effect.gen(function* () {
      const client = yield* SqlClient.SqlClient
      const scope = yield* Effect.scope
      const withClient = Effect.provideService(SqlClient.SqlClient, client)
      const state: FeedState = { started: false, up: false, seen: 0n, ownVersion: 0n, ownAtMs: 0 }
      const follow = followFeed(listener, state, withClient(readVersion))
      const start = Effect.suspend(() => {
        if (state.started) return Effect.void
        state.started = true
        // Forked from whatever fiber asks first: not with its context (it may be inside a
        // transaction) nor its uninterruptibility (the layer's scope must be able to stop it).
        return Effect.asVoid(
          Effect.forkIn(
            Effect.mapInputContext(Effect.interruptible(follow), (_: Context.Context<never>) => Context.empty()),
            scope
          )
        )
      })

      // On the listening connection when it is up (no wait for a pool connection), else the pool.
      const readCommitted = Effect.tryPromise(() =>
        listener.read("SELECT version::text AS version FROM issuing_changes WHERE id = 1")
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

      return {
        version: Effect.zipRight(
          start,
          Effect.map(Effect.serviceOption(SqlClient.TransactionConnection), (inTransaction) => {
            // Inside a transaction reads may see its own uncommitted changes: never cache them.
            if (Option.isSome(inTransaction) || !state.up) return NONE
            if (state.ownVersion > state.seen && Date.now() - state.ownAtMs < OWN_CHANGE_WAIT_MS) return NONE
            return Option.some(String(state.seen))
          })
        ),
        committed: committedVersion,
        publish: (topic, id) =>
          withClient(publishChange(topic, id)).pipe(
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
