import { ChangeFeed, WEBHOOK_NOTIFY_CHANNEL, WebhookWakeups } from "@issuing/core"
import { connectionNotes } from "@issuing/http"
import * as PgStore from "@issuing/store-pg"
import { Effect, Fiber, ManagedRuntime, Option, Stream } from "effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../support/databases.js"
import { type Pgbouncer, pgbouncerAvailable, startPgbouncer } from "../support/pgbouncer.js"

/** Polls `probe` until it holds (the feed reconnects in the background); fails after `attempts`. */
const eventually = async (probe: () => Promise<boolean>, attempts = 100) => {
  for (let i = 0; i < attempts; i++) {
    if (await probe()) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error("condition never held")
}

/**
 * Whether a feed is trusted: after a change made without a notification, a trusted feed still
 * gives the version it was told of; one that is not reads the row and gives the new one.
 */
const isTrusted = async (url: string, version: () => Promise<Option.Option<string>>) => {
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  try {
    const { rows } = await admin.query("UPDATE issuing_changes SET version = version + 1 WHERE id = 1 RETURNING version::text AS v")
    return Option.getOrNull(await version()) !== rows[0].v
  } finally {
    await admin.end()
  }
}

type Feed = ManagedRuntime.ManagedRuntime<ChangeFeed | WebhookWakeups, unknown>
const versionOf = (runtime: Feed) => () => runtime.runPromise(Effect.flatMap(ChangeFeed, (changes) => changes.version))
const listening = async (url: string) => {
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  try {
    const { rows } = await admin.query(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'issuing-listen' AND datname = current_database()"
    )
    return rows[0].n as number
  } finally {
    await admin.end()
  }
}

/**
 * A migrated PostgreSQL database of its own for the describe block, and a feed over it built with
 * `options` (given the database) once before its tests; both gone after them.
 */
const usePgFeed = (options: (database: TestDatabase) => Omit<Parameters<typeof PgStore.layer>[0], "url"> = () => ({})) => {
  const used = {} as { database: TestDatabase; runtime: Feed }
  beforeAll(async () => {
    used.database = await createTestDatabase("postgres", { migrated: true })
    used.runtime = ManagedRuntime.make(PgStore.layer({ url: used.database.url, maxConnections: 2, ...options(used.database) }))
  }, 60_000)
  afterAll(async () => {
    await used.runtime?.dispose()
    await used.database?.drop()
  }, 60_000)
  return used
}

describe("the PostgreSQL change feed", () => {
  const feed = usePgFeed()
  const version = () => versionOf(feed.runtime)()

  const trusted = () => isTrusted(feed.database.url, version)

  it("reads the row until a probe proves it listens, then follows another connection's publishes", async () => {
    // Never without a version: before the feed is proven it is the committed row's.
    expect(Option.isSome(await version())).toBe(true)
    await eventually(trusted)
    const before = Option.getOrThrow(await version())
    // Another node's change: the row bumped and notified in one transaction.
    const other = new pg.Client({ connectionString: feed.database.url })
    await other.connect()
    try {
      await other.query("BEGIN")
      const { rows } = await other.query("UPDATE issuing_changes SET version = version + 1 WHERE id = 1 RETURNING version")
      await other.query("SELECT pg_notify('issuing_changes', $1)", [`${rows[0].version} card test`])
      expect(await version()).toEqual(Option.some(before))
      await other.query("COMMIT")
      await eventually(async () => Option.getOrNull(await version()) === String(rows[0].version))
    } finally {
      await other.end()
    }
  })

  it("reads the row while its listening connection is lost, and trusts notifications again once back", async () => {
    await eventually(trusted)
    const admin = new pg.Client({ connectionString: feed.database.url })
    await admin.connect()
    try {
      await admin.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()",
        ["issuing-listen"]
      )
      // Lost: every change is seen at once, from the row.
      await eventually(async () => !(await trusted()))
      const { rows } = await admin.query("UPDATE issuing_changes SET version = version + 1 WHERE id = 1 RETURNING version::text AS v")
      expect(Option.getOrNull(await version())).toBe(rows[0].v)
      await eventually(trusted)
    } finally {
      await admin.end()
    }
  })

  it("shares one listening connection between the change feed and webhook wake-ups", async () => {
    let wakeups = 0
    const listening = feed.runtime.runFork(
      Effect.flatMap(WebhookWakeups, (wakeup) => Stream.runForEach(wakeup.notifications, () => Effect.sync(() => wakeups++)))
    )
    const admin = new pg.Client({ connectionString: feed.database.url })
    await admin.connect()
    try {
      // The first wake-up is the (re)connect; the second a notification on the webhook channel.
      await eventually(trusted)
      await eventually(async () => wakeups >= 1)
      await admin.query("SELECT pg_notify($1, '')", [WEBHOOK_NOTIFY_CHANNEL])
      await eventually(async () => wakeups >= 2)
      const { rows } = await admin.query(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'issuing-listen' AND datname = current_database()"
      )
      expect(rows[0].n).toBe(1)
      const feedVersion = Option.getOrThrow(await version())
      await admin.query("UPDATE issuing_changes SET version = version + 1 WHERE id = 1")
      await admin.query("SELECT pg_notify('issuing_changes', $1)", [`${BigInt(feedVersion) + 1n} card shared`])
      await eventually(async () => Option.getOrNull(await version()) === String(BigInt(feedVersion) + 1n))
    } finally {
      await Effect.runPromise(Fiber.interrupt(listening))
      await admin.end()
    }
  })
})

describe("the PostgreSQL change feed of a node that only authenticates", () => {
  const feed = usePgFeed()

  // An API node whose background work runs in `issuing worker` asks the feed only for committed
  // versions (each request's authentication): those reads open the listening connection and run
  // there, not on a pooled connection through the pool's client.
  it("opens its listening connection with its first committed read and reads the version there", async () => {
    const committed = () => feed.runtime.runPromise(Effect.flatMap(ChangeFeed, (changes) => changes.committed))
    const admin = new pg.Client({ connectionString: feed.database.url })
    await admin.connect()
    try {
      const { rows } = await admin.query("UPDATE issuing_changes SET version = version + 1 WHERE id = 1 RETURNING version::text AS v")
      expect(await committed()).toEqual(Option.some(rows[0].v))
      await eventually(async () => {
        await committed()
        const { rows } = await admin.query(
          "SELECT query FROM pg_stat_activity WHERE application_name = 'issuing-listen' AND datname = current_database()"
        )
        return rows.length === 1 && /FROM issuing_changes/.test(rows[0].query)
      })
      // Still the committed row's version, another connection's change included at once.
      const bumped = await admin.query("UPDATE issuing_changes SET version = version + 1 WHERE id = 1 RETURNING version::text AS v")
      expect(await committed()).toEqual(Option.some(bumped.rows[0].v))
    } finally {
      await admin.end()
    }
  })
})

describe("the PostgreSQL change feed without LISTEN/NOTIFY (notify: false)", () => {
  const feed = usePgFeed(() => ({ notify: false }))

  it("gives the committed row's version on every read, listens nowhere, notifies nothing and offers no wake-ups", async () => {
    const version = versionOf(feed.runtime)
    // Built (and migrated) by the first read.
    expect(Option.isSome(await version())).toBe(true)
    const watcher = new pg.Client({ connectionString: feed.database.url })
    await watcher.connect()
    const notified: Array<string> = []
    watcher.on("notification", (message) => notified.push(message.payload ?? ""))
    await watcher.query("LISTEN issuing_changes")
    try {
      for (let i = 0; i < 5; i++) expect(await isTrusted(feed.database.url, version)).toBe(false)
      const before = BigInt(Option.getOrThrow(await version()))
      await feed.runtime.runPromise(Effect.flatMap(ChangeFeed, (changes) => changes.publish("card", "no-notify")))
      expect(Option.getOrThrow(await version())).toBe(String(before + 1n))
      await new Promise((resolve) => setTimeout(resolve, 200))
      expect(notified).toEqual([])
      expect(await listening(feed.database.url)).toBe(0)
      expect(Option.isNone(await feed.runtime.runPromise(Effect.serviceOption(WebhookWakeups)))).toBe(true)
    } finally {
      await watcher.end()
    }
  })
})

describe("the PostgreSQL change feed with a listen URL it cannot reach", () => {
  let closedUrl: string
  const feed = usePgFeed((database) => {
    // A port nobody listens on: the listening connection is refused, again and again.
    const unused = new URL(database.url)
    unused.port = "1"
    closedUrl = unused.toString()
    return { listenUrl: closedUrl }
  })

  it("serves from the row, never trusting the feed, and start-up says the feed cannot connect", async () => {
    const version = versionOf(feed.runtime)
    expect(Option.isSome(await version())).toBe(true)
    for (let i = 0; i < 10; i++) {
      expect(await isTrusted(feed.database.url, version)).toBe(false)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(await connectionNotes({ kind: "postgres", url: feed.database.url, listenUrl: closedUrl })).toEqual([
      expect.stringMatching(/^the change feed cannot connect to ISSUING_DATABASE_LISTEN_URL \(postgres:\/\/127\.0\.0\.1:1\//)
    ])
    expect(await connectionNotes({ kind: "postgres", url: feed.database.url })).toEqual([])
    expect(await connectionNotes({ kind: "postgres", url: feed.database.url, notify: false })).toEqual([
      expect.stringContaining("ISSUING_PG_NOTIFY=off")
    ])
  })
})

const pgbouncer = pgbouncerAvailable("PostgreSQL change feed")

describe.runIf(pgbouncer)("the PostgreSQL change feed through PgBouncer (pool_mode = transaction)", () => {
  let database: TestDatabase
  let bouncer: Pgbouncer

  beforeAll(async () => {
    database = await createTestDatabase("postgres", { migrated: true })
    bouncer = await startPgbouncer(inject("pgAdminUrl"))
  }, 60_000)
  afterAll(async () => {
    await bouncer?.stop()
    await database?.drop()
  }, 60_000)

  it("never trusts a feed that listens through the pooler, even while its connection serves reads", async () => {
    const runtime: Feed = ManagedRuntime.make(PgStore.layer({ url: bouncer.through(database.url), maxConnections: 2 }))
    try {
      const version = versionOf(runtime)
      const committed = () => runtime.runPromise(Effect.flatMap(ChangeFeed, (changes) => changes.committed))
      // Built (and migrated) by the first read; its LISTEN runs on a server connection lent for that statement.
      expect(Option.isSome(await version())).toBe(true)
      const deadline = Date.now() + 3 * 2_000
      while (Date.now() < deadline) {
        // Reads on the listening connection meanwhile may bring it others' notifications: no proof.
        await Promise.all(Array.from({ length: 8 }, committed))
        expect(await isTrusted(database.url, version)).toBe(false)
      }
    } finally {
      await runtime.dispose()
    }
  }, 60_000)

  it("trusts the feed when the pool goes through the pooler and LISTEN on a direct URL", async () => {
    const runtime: Feed = ManagedRuntime.make(
      PgStore.layer({ url: bouncer.through(database.url), listenUrl: database.url, maxConnections: 2 })
    )
    try {
      const version = versionOf(runtime)
      await eventually(() => isTrusted(database.url, version))
      expect(await listening(database.url)).toBe(1)
    } finally {
      await runtime.dispose()
    }
  }, 60_000)

  it("says at start-up which URLs go through a pooler", async () => {
    expect(await PgStore.throughPooler(database.url)).toBe(false)
    expect(await PgStore.throughPooler(bouncer.through(database.url))).toBe(true)
  })
})
