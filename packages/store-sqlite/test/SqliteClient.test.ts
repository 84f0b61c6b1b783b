import { describe, expect, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { sqlErrorCode, Transactor } from "@issuing/core"
import * as SqliteStore from "@issuing/store-sqlite"
import Sqlite from "better-sqlite3"
import { Deferred, Effect, Fiber } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll } from "vitest"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "issuing-sqlite-client-"))
const filename = path.join(dir, "client.db")
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

/** A second connection to the same file (in this process: it must never be made to wait). */
const otherConnection = () => {
  const db = new Sqlite(filename)
  db.pragma("busy_timeout = 0")
  return db
}

// What the SQLite store promises beyond the port contracts: WAL, durable commits, foreign keys,
// a busy timeout, and write transactions that take the write lock when they begin.
describe("the SQLite client", () => {
  layer(SqliteStore.layer({ filename, busyTimeoutMs: 2000 }), { excludeTestServices: true })((it) => {
    it.effect("runs in WAL mode with synchronous FULL and foreign keys on", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        expect((yield* sql`PRAGMA journal_mode`)[0]).toEqual({ journal_mode: "wal" })
        expect((yield* sql`PRAGMA synchronous`)[0]).toEqual({ synchronous: 2 })
        expect((yield* sql`PRAGMA foreign_keys`)[0]).toEqual({ foreign_keys: 1 })
        const error = yield* Effect.flip(sql`INSERT INTO issuing_programs (id, organization_id, name, bin, created_at, updated_at)
          VALUES ('p', 'no-such-organization', 'n', '400000', 'x', 'x')`)
        expect(String(error.cause)).toMatch(/FOREIGN KEY/)
      })
    )

    it.effect("binds booleans as 1/0 and dates as ISO text", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const at = new Date("2026-01-02T03:04:05.678Z")
        const rows = yield* sql`SELECT ${true} AS yes, ${false} AS no, ${at} AS at`
        expect(rows[0]).toEqual({ yes: 1, no: 0, at: "2026-01-02T03:04:05.678Z" })
      })
    )

    it.effect("begins write transactions IMMEDIATE: another connection cannot write meanwhile", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const transactor = yield* Transactor
        const other = otherConnection()
        try {
          yield* transactor.withTransaction(
            Effect.gen(function* () {
              // Only a read so far; with a deferred BEGIN the other writer would get in first.
              yield* sql`SELECT COUNT(*) AS n FROM issuing_organizations`
              expect(() => other.exec("INSERT INTO issuing_organizations (id, name, created_at) VALUES ('x', 'x', 'x')")).toThrow(
                /SQLITE_BUSY|database is locked/
              )
            })
          )
        } finally {
          other.close()
        }
      })
    )

    it.effect(
      "runs a writer-thread job only when its guard reads back as planned, all or nothing, while the gate holds main-connection writers",
      () =>
        Effect.gen(function* () {
          const writer = yield* SqliteStore.SqliteWriter
          const sql = yield* SqlClient.SqlClient
          const transactor = yield* Transactor
          expect(writer.available).toBe(true)
          yield* sql`CREATE TABLE writer_jobs (k INTEGER PRIMARY KEY, v TEXT NOT NULL)`
          const count = (n: number) => ({ sql: "SELECT count(*) AS n FROM writer_jobs", params: [], expected: JSON.stringify([{ n }]) })
          const insert = (k: number, v: string) => ["INSERT INTO writer_jobs (k, v) VALUES (?, ?)", [k, v]] as const
          const run = (job: SqliteStore.WriterJobPlan) => writer.withGate(Effect.flatten(writer.send(job)))
          const rows = sql`SELECT k, v FROM writer_jobs ORDER BY k`

          expect(yield* run({ guard: count(0), statements: [insert(1, "a"), insert(2, "b")] })).toEqual({
            _tag: "Committed",
            changes: [1, 1]
          })
          expect(yield* rows).toEqual([
            { k: 1, v: "a" },
            { k: 2, v: "b" }
          ])
          // The rows no longer read as planned: nothing is written.
          expect(yield* run({ guard: count(0), statements: [insert(3, "c")] })).toEqual({ _tag: "Stale" })
          // A failing statement rolls the whole job back, with SQLite's code.
          const failed = yield* Effect.flip(run({ guard: count(2), statements: [insert(3, "c"), insert(1, "again")] }))
          expect(sqlErrorCode(failed)).toBe("SQLITE_CONSTRAINT_PRIMARYKEY")
          expect((yield* rows).map((row) => row.k)).toEqual([1, 2])

          // Jobs run in the order sent; a write transaction of the main connection waits for the gate.
          const release = yield* Deferred.make<void>()
          const holder = yield* Effect.fork(
            writer.withGate(
              Effect.gen(function* () {
                const first = yield* writer.send({ guard: count(2), statements: [insert(3, "c")] })
                const second = yield* writer.send({ guard: count(3), statements: [insert(4, "d")] })
                yield* Deferred.await(release)
                return [yield* first, yield* second]
              })
            )
          )
          const main = yield* Effect.fork(transactor.withTransaction(sql`INSERT INTO writer_jobs (k, v) VALUES (5, 'main')`))
          yield* Effect.sleep("100 millis")
          expect(main.unsafePoll()).toBeNull()
          expect(writer.othersWaiting()).toBe(true)
          yield* Deferred.succeed(release, undefined)
          expect(yield* Fiber.join(holder)).toEqual([
            { _tag: "Committed", changes: [1] },
            { _tag: "Committed", changes: [1] }
          ])
          yield* Fiber.join(main)
          expect((yield* rows).map((row) => row.k)).toEqual([1, 2, 3, 4, 5])
        })
    )

    it.effect("waits for another process's write lock (busy timeout) instead of failing", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        // better-sqlite3 waits synchronously, so the lock holder must be another process. It holds
        // the write lock until 300 ms after we tell it we are about to write.
        const holder = spawn(
          process.execPath,
          [
            "-e",
            `
          const db = new (require("better-sqlite3"))(${JSON.stringify(filename)})
          db.exec("BEGIN IMMEDIATE")
          db.exec("INSERT INTO issuing_organizations (id, name, created_at) VALUES ('held', 'held', 'x')")
          process.stdout.write("locked\\n")
          process.stdin.once("data", () => setTimeout(() => { db.exec("COMMIT"); db.close(); process.exit(0) }, 300))
        `
          ],
          { cwd: process.cwd(), stdio: ["pipe", "pipe", "inherit"] }
        )
        yield* Effect.async<void>((resume) => {
          holder.stdout!.once("data", () => resume(Effect.void))
        })
        holder.stdin!.write("go\\n")
        // Without the busy timeout this would fail at once with SQLITE_BUSY.
        yield* sql`INSERT INTO issuing_organizations (id, name, created_at) VALUES ('waited', 'waited', 'x')`
        const rows = yield* sql`SELECT id FROM issuing_organizations WHERE id IN ('held', 'waited') ORDER BY id`
        expect(rows.map((row) => row.id)).toEqual(["held", "waited"])
      })
    )

    it.effect("past the busy timeout, fails every waiting transaction with SQLITE_BUSY_TIMEOUT (not retried) while reads go on", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const transactor = yield* Transactor
        // Another process holds the write lock until told to let go: far past the 2 s busy timeout.
        const holder = spawn(
          process.execPath,
          [
            "-e",
            `
          const db = new (require("better-sqlite3"))(${JSON.stringify(filename)})
          db.exec("BEGIN IMMEDIATE")
          process.stdout.write("locked\\n")
          process.stdin.once("data", () => { db.exec("COMMIT"); db.close(); process.exit(0) })
        `
          ],
          { cwd: process.cwd(), stdio: ["pipe", "pipe", "inherit"] }
        )
        yield* Effect.async<void>((resume) => {
          holder.stdout!.once("data", () => resume(Effect.void))
        })
        try {
          const write = (id: string) =>
            transactor.withTransaction(sql`INSERT INTO issuing_organizations (id, name, created_at) VALUES (${id}, 'w', 'x')`)
          const waiting = yield* Effect.fork(
            Effect.all([write("w1"), write("w2"), write("w3")].map(Effect.flip), { concurrency: "unbounded" })
          )
          // A read is not queued behind the transactions waiting for the lock (WAL readers never wait).
          const [read] = yield* sql`SELECT COUNT(*) AS n FROM issuing_organizations`
          expect(Number(read!.n)).toBeGreaterThanOrEqual(0)
          expect(waiting.unsafePoll()).toBeNull()
          // Each waited one busy timeout and failed, none retried into a second one: the lock is
          // still held when all three have failed (before, each SQLITE_BUSY was retried by the
          // Transactor, up to eight timeouts, and they queued behind each other on the connection).
          const errors = yield* Fiber.join(waiting)
          expect(holder.exitCode).toBeNull()
          expect(errors.map(sqlErrorCode)).toEqual(["SQLITE_BUSY_TIMEOUT", "SQLITE_BUSY_TIMEOUT", "SQLITE_BUSY_TIMEOUT"])
        } finally {
          holder.stdin!.write("go\n")
        }
        yield* Effect.async<void>((resume) => {
          if (holder.exitCode !== null) return resume(Effect.void)
          holder.once("exit", () => resume(Effect.void))
        })
        // And the connection is whole again: the next write goes through.
        yield* transactor.withTransaction(sql`INSERT INTO issuing_organizations (id, name, created_at) VALUES ('after-timeout', 'w', 'x')`)
      })
    )

    it.effect("waits for a lock held by another connection of this process without blocking the event loop", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const transactor = yield* Transactor
        // The holder is in this process: it can only commit if our wait leaves the event loop free.
        const other = otherConnection()
        other.exec("BEGIN IMMEDIATE")
        other.exec("INSERT INTO issuing_organizations (id, name, created_at) VALUES ('same-process', 'held', 'x')")
        let ticks = 0
        const ticker = setInterval(() => (ticks += 1), 10)
        setTimeout(() => {
          other.exec("COMMIT")
          other.close()
        }, 200)
        try {
          yield* transactor.withTransaction(sql`INSERT INTO issuing_organizations (id, name, created_at) VALUES ('after-wait', 'w', 'x')`)
        } finally {
          clearInterval(ticker)
        }
        // A blocked wait would have let no timer run until the holder's commit (which then never comes).
        expect(ticks).toBeGreaterThan(5)
        const rows = yield* sql`SELECT id FROM issuing_organizations WHERE id IN ('same-process', 'after-wait') ORDER BY id`
        expect(rows.map((row) => row.id)).toEqual(["after-wait", "same-process"])
      })
    )
  })
})
