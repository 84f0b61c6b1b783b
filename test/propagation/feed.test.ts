import { ChangeFeed, WEBHOOK_NOTIFY_CHANNEL, WebhookWakeups } from "@issuing/core"
import * as PgStore from "@issuing/store-pg"
import { Effect, Fiber, ManagedRuntime, Option, Stream } from "effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../support/databases.js"

/** Polls `probe` until it holds (the feed reconnects in the background); fails after `attempts`. */
const eventually = async (probe: () => Promise<boolean>, attempts = 100) => {
  for (let i = 0; i < attempts; i++) {
    if (await probe()) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error("condition never held")
}

describe("the PostgreSQL change feed", () => {
  let database: TestDatabase
  let runtime: ManagedRuntime.ManagedRuntime<ChangeFeed | WebhookWakeups, unknown>
  const version = () => runtime.runPromise(Effect.flatMap(ChangeFeed, (feed) => feed.version))

  beforeAll(async () => {
    database = await createTestDatabase("postgres")
    runtime = ManagedRuntime.make(PgStore.layer({ url: database.url, maxConnections: 2 }))
  }, 60_000)
  afterAll(async () => {
    await runtime?.dispose()
    await database?.drop()
  }, 60_000)

  it("has no version until it listens, then follows another connection's publishes", async () => {
    expect(Option.isNone(await version())).toBe(true)
    await eventually(async () => Option.isSome(await version()))
    const before = Option.getOrThrow(await version())
    // Another node's change: the row bumped and notified in one transaction.
    const other = new pg.Client({ connectionString: database.url })
    await other.connect()
    try {
      await other.query("BEGIN")
      const { rows } = await other.query("UPDATE issuing_changes SET version = version + 1 WHERE id = 1 RETURNING version")
      await other.query("SELECT pg_notify('issuing_changes', $1)", [`${rows[0].version} card test`])
      expect(await version()).toEqual(Option.some(before))
      await other.query("COMMIT")
    } finally {
      await other.end()
    }
    await eventually(async () => Option.getOrNull(await version()) === String(BigInt(before) + 1n))
  })

  it("bypasses caches (no version) while its listening connection is lost, and catches up when back", async () => {
    await eventually(async () => Option.isSome(await version()))
    const admin = new pg.Client({ connectionString: database.url })
    await admin.connect()
    try {
      await admin.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()",
        ["issuing-listen"]
      )
      await eventually(async () => Option.isNone(await version()))
      // A change made while nobody listened is read from the row on reconnect.
      const { rows } = await admin.query("UPDATE issuing_changes SET version = version + 1 WHERE id = 1 RETURNING version")
      await eventually(async () => Option.getOrNull(await version()) === String(rows[0].version))
    } finally {
      await admin.end()
    }
  })

  it("shares one listening connection between the change feed and webhook wake-ups", async () => {
    await eventually(async () => Option.isSome(await version()))
    let wakeups = 0
    const listening = runtime.runFork(
      Effect.flatMap(WebhookWakeups, (wakeup) => Stream.runForEach(wakeup.notifications, () => Effect.sync(() => wakeups++)))
    )
    const admin = new pg.Client({ connectionString: database.url })
    await admin.connect()
    try {
      // The first wake-up is the (re)connect; the second a notification on the webhook channel.
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
