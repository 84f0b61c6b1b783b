import { describe, expect, it, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import {
  ChangeFeed,
  MAX_TRANSACTION_ATTEMPTS,
  Transactor,
  WEBHOOK_NOTIFY_CHANNEL,
  WebhookClaimClient,
  WebhookStore,
  WebhookWakeups
} from "@issuing/core"
import * as PgStore from "@issuing/store-pg"
import { Deferred, Effect, Fiber, Layer, Option, Queue, Schedule, Stream } from "effect"
import pg from "pg"
import { createTestDatabase } from "../../../test/support/databases.js"

const store = Layer.unwrapScoped(
  Effect.map(
    Effect.acquireRelease(
      Effect.promise(() => createTestDatabase("postgres", { migrated: true })),
      (database) => Effect.promise(() => database.drop())
    ),
    (database) => PgStore.layer({ url: database.url, maxConnections: 4 })
  )
)

// What the PostgreSQL store promises beyond the port contracts: a pool, and retries of real deadlocks.
describe("the PostgreSQL store", () => {
  layer(store, { excludeTestServices: true, timeout: "60 seconds" })((it) => {
    // First of the block, before any test has used the pool: a pool opened on demand would have 1–2.
    it.effect("opens its whole pool at start and warms the emit on every connection (docs/operations.md#a-warm-pool)", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{ n: number; warmed: number }>`SELECT count(*)::int AS n,
            count(*) FILTER (WHERE query LIKE 'SELECT issuing_append_events(%')::int AS warmed
          FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'issuing'`
        expect(rows[0]!.n).toBe(4)
        // Each connection's last statement was the emit's warm-up, but the one that runs this query.
        expect(rows[0]!.warmed).toBeGreaterThanOrEqual(3)
      })
    )

    it.effect("a read of the committed version advances the version the node's caches follow, notified or not", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const feed = yield* ChangeFeed
        // The feed comes up on first use (its LISTEN connection, then a read of the row).
        let known = yield* feed.version
        for (let tries = 0; Option.isNone(known) && tries < 200; tries++) {
          yield* Effect.sleep("25 millis")
          known = yield* feed.version
        }
        expect(Option.isSome(known)).toBe(true)
        // A commit this node is never notified of (no pg_notify): only a committed read can tell.
        // Until the feed has proven it hears (its probe came back, docs/operations.md#pgbouncer),
        // `version` itself reads the committed row and sees such a commit; once trusted, it does not.
        let served = Option.none<string>()
        for (let tries = 0; tries < 200; tries++) {
          yield* sql`UPDATE issuing_changes SET version = version + 1 WHERE id = 1`
          served = yield* feed.version
          if (Option.getEquivalence((a: string, b: string) => a === b)(served, known)) break
          known = served
          yield* Effect.sleep("25 millis")
        }
        expect(served).toEqual(known)
        const committed = yield* feed.committed
        expect(committed).toEqual(Option.some(String(BigInt(Option.getOrThrow(known)) + 1n)))
        expect(yield* feed.version).toEqual(committed)
      })
    )

    it.effect("serves concurrent statements from a pool of connections", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        // Three statements in flight at once: on one connection they would share a backend.
        const pids = yield* Effect.all(
          Array.from({ length: 3 }, () => sql`SELECT pg_backend_pid() AS pid, pg_sleep(0.3)`),
          { concurrency: "unbounded" }
        )
        expect(new Set(pids.map((rows) => rows[0]!.pid)).size).toBe(3)
      })
    )

    it.effect(
      "retries a transaction chosen as a deadlock victim, so both writers succeed",
      () =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const transactor = yield* Transactor
          yield* sql`INSERT INTO issuing_organizations (id, name, created_at)
                   VALUES ('dl-a', 'a', now()), ('dl-b', 'b', now())`
          let attempts = 0
          // Two transactions lock the same two rows in opposite orders: PostgreSQL aborts one (40P01).
          // On its first try each waits until the other holds its first row, so the deadlock happens
          // however the two are scheduled (a retry goes straight through).
          const locked = { "dl-a": yield* Deferred.make<void>(), "dl-b": yield* Deferred.make<void>() }
          const writer = (first: "dl-a" | "dl-b", second: "dl-a" | "dl-b") => {
            let tries = 0
            return transactor.withTransaction(
              Effect.gen(function* () {
                attempts += 1
                tries += 1
                yield* sql`UPDATE issuing_organizations SET name = name || '+' WHERE id = ${first}`
                if (tries === 1) {
                  yield* Deferred.succeed(locked[first], undefined)
                  yield* Deferred.await(locked[second])
                }
                yield* sql`UPDATE issuing_organizations SET name = name || '+' WHERE id = ${second}`
              })
            )
          }
          yield* Effect.all([writer("dl-a", "dl-b"), writer("dl-b", "dl-a")], { concurrency: "unbounded" })
          // At least one retry; under load both may be chosen as victims and retry again.
          expect(attempts).toBeGreaterThanOrEqual(3)
          expect(attempts).toBeLessThanOrEqual(2 * MAX_TRANSACTION_ATTEMPTS)
          const rows = yield* sql`SELECT id, name FROM issuing_organizations WHERE id IN ('dl-a', 'dl-b') ORDER BY id`
          expect(rows).toEqual([
            { id: "dl-a", name: "a++" },
            { id: "dl-b", name: "b++" }
          ])
        }),
      30_000
    )
  })
})

describe("webhook wake-ups on PostgreSQL", () => {
  it.live(
    "a store does not hear its own announcements back (its workers were rung at the commit); another node's ring it",
    () =>
      Effect.gen(function* () {
        const database = yield* Effect.acquireRelease(
          Effect.promise(() => createTestDatabase("postgres", { migrated: true })),
          (database) => Effect.promise(() => database.drop())
        )
        // A listener of our own, to know when the store's NOTIFY has committed.
        const raw = new pg.Client({ connectionString: database.url })
        yield* Effect.acquireRelease(
          Effect.promise(() => raw.connect()),
          () => Effect.promise(() => raw.end())
        )
        const rawPayloads = yield* Queue.unbounded<string>()
        raw.on("notification", (message) => Queue.unsafeOffer(rawPayloads, message.payload ?? ""))
        yield* Effect.promise(() => raw.query(`LISTEN ${WEBHOOK_NOTIFY_CHANNEL}`))
        yield* Effect.gen(function* () {
          const wakeups = yield* WebhookWakeups
          const heard = yield* Queue.unbounded<unknown>()
          yield* wakeups.notifications.pipe(
            Stream.runForEach((event) => Queue.offer(heard, event)),
            Effect.forkScoped
          )
          expect(yield* Queue.take(heard)).toEqual({ _tag: "Connected" })
          yield* wakeups.announce
          expect(yield* Queue.take(rawPayloads)).toMatch(/^due [0-9a-f-]{36}$/)
          // Another node's ring, committed after the store's own: notifications arrive in commit
          // order, so had the store heard its own, that would come first.
          yield* Effect.promise(() => raw.query("SELECT pg_notify($1, 'due')", [WEBHOOK_NOTIFY_CHANNEL]))
          expect(yield* Queue.take(heard)).toMatchObject({ _tag: "Notified", payload: "due" })
        }).pipe(Effect.provide(PgStore.layer({ url: database.url, maxConnections: 2 })))
      }).pipe(Effect.scoped),
    60_000
  )
})

describe("webhook delivery claims on PostgreSQL", () => {
  it.live(
    "a claim commits without waiting for the WAL flush, and only the claim: the connection's next statement commits durably",
    () =>
      Effect.gen(function* () {
        const database = yield* Effect.acquireRelease(
          Effect.promise(() => createTestDatabase("postgres", { migrated: true })),
          (database) => Effect.promise(() => database.drop())
        )
        yield* Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const webhooks = yield* WebhookStore
          const setting = sql<{ readonly value: string }>`SELECT current_setting('synchronous_commit') AS value`.pipe(
            Effect.map(([row]) => row!.value)
          )
          const now = new Date().toISOString()
          const later = new Date(Date.now() + 60_000).toISOString()
          // Inside a transaction the claim's setting is seen by what follows it there…
          const inside = yield* sql.withTransaction(Effect.zipRight(webhooks.claimDueWithNext("token", now, later, 10), setting))
          expect(inside).toBe("off")
          // …and ends with its transaction: on its own (autocommit, on the claim's own connection),
          // the next statement of that one connection is durable again.
          const claims = yield* WebhookClaimClient
          yield* webhooks.claimDueWithNext("token", now, later, 10)
          expect(yield* claims<{ readonly value: string }>`SELECT current_setting('synchronous_commit') AS value`).toEqual([
            { value: "on" }
          ])
        }).pipe(Effect.provide(PgStore.layer({ url: database.url, maxConnections: 1 })))
      }).pipe(Effect.scoped),
    60_000
  )

  it.live(
    "a claim does not wait for a pooled connection: it is answered while every connection of the pool is busy",
    () =>
      Effect.gen(function* () {
        const database = yield* Effect.acquireRelease(
          Effect.promise(() => createTestDatabase("postgres", { migrated: true })),
          (database) => Effect.promise(() => database.drop())
        )
        // A lock held outside the store, that every pooled connection then waits for.
        const holder = new pg.Client({ connectionString: database.url })
        yield* Effect.acquireRelease(
          Effect.promise(() => holder.connect()),
          () => Effect.promise(() => holder.end())
        )
        yield* Effect.promise(() => holder.query("SELECT pg_advisory_lock(46)"))
        yield* Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const webhooks = yield* WebhookStore
          const busy = yield* Effect.fork(
            Effect.all(
              Array.from({ length: 2 }, () => sql`SELECT pg_advisory_xact_lock(46)`),
              { concurrency: "unbounded" }
            )
          )
          // Both pooled connections wait for the lock (seen by the server, asked on the holder's
          // connection) before the claim is made.
          const waitingForLock = Effect.promise(() =>
            holder.query("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")
          ).pipe(Effect.map((result) => Number(result.rows[0].n)))
          yield* Effect.repeat(waitingForLock, { until: (n) => n === 2, schedule: Schedule.spaced("10 millis") })
          const now = new Date().toISOString()
          // On the pool this claim would wait until the lock is let go, which happens only after it.
          const claimed = yield* webhooks
            .claimDueWithNext("token", now, new Date(Date.now() + 60_000).toISOString(), 10)
            .pipe(Effect.timeoutFail({ duration: "20 seconds", onTimeout: () => "the claim waited for a pooled connection" }))
          expect(claimed.claimed).toEqual([])
          expect(Option.isNone(yield* Fiber.poll(busy))).toBe(true)
          yield* Effect.promise(() => holder.query("SELECT pg_advisory_unlock(46)"))
          yield* Fiber.join(busy)
        }).pipe(Effect.provide(PgStore.layer({ url: database.url, maxConnections: 2 })))
      }).pipe(Effect.scoped),
    60_000
  )
})
