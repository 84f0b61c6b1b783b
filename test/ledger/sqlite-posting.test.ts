import { SqlClient } from "@effect/sql"
import { makeGroupCommit, SqlTransactorLive, Transactor } from "@issuing/core"
import { SqliteClient, SyncSql } from "@issuing/store-sqlite"
import { Effect, Either, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"

/**
 * The SQLite one-call posting rests on two promises: `SyncSql.run` is all-or-nothing inside the
 * caller's transaction (a throw rolls back only what that call wrote, on the same connection),
 * and group commit runs `atomic` units without a savepoint yet still isolates a failing one.
 */
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "issuing-sync-sql-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const layerFor = (name: string) => {
  const client = SqliteClient.layer({ filename: path.join(dir, `${name}.db`) })
  return Layer.merge(client, SqlTransactorLive.pipe(Layer.provide(client)))
}

const setup = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)`
})
const values = Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ v: string }>`SELECT v FROM t ORDER BY id`).pipe(
  Effect.map((rows) => rows.map((row) => row.v))
)
const insert = (v: string, thenThrow = false) =>
  Effect.flatMap(SyncSql, (sync) =>
    sync.run((db) => {
      db.prepare("INSERT INTO t (v) VALUES (?)").run(v)
      if (thenThrow) db.prepare("INSERT INTO t (v) VALUES (NULL)").run() // NOT NULL: the call fails after a write
      return v
    })
  )

describe("SyncSql on the SQLite store", () => {
  it("rolls back only its own writes inside the caller's transaction, on the same connection", async () => {
    const result = await Effect.gen(function* () {
      yield* setup
      const transactor = yield* Transactor
      const sql = yield* SqlClient.SqlClient
      const failed = yield* transactor.withTransaction(
        Effect.gen(function* () {
          yield* sql`INSERT INTO t (v) VALUES ('outer before')`
          yield* insert("sync ok")
          const failed = yield* Effect.either(insert("sync rolled back", true))
          // The sync call saw the outer transaction's uncommitted row: same connection, same transaction.
          yield* sql`INSERT INTO t (v) VALUES ('outer after')`
          return failed
        })
      )
      // Outside any transaction it is a transaction of its own.
      yield* insert("alone")
      return { failed, rows: yield* values }
    }).pipe(Effect.provide(layerFor("nested")), Effect.runPromise)
    expect(Either.isLeft(result.failed)).toBe(true)
    if (Either.isLeft(result.failed)) expect(result.failed.left._tag).toBe("SqlError")
    expect(result.rows).toEqual(["outer before", "sync ok", "outer after", "alone"])
  })

  it("group commit isolates a failing atomic unit and commits the others in one transaction", async () => {
    const result = await Effect.gen(function* () {
      yield* setup
      const transactor = yield* Transactor
      const group = yield* makeGroupCommit(transactor)
      const outcomes = yield* Effect.forEach(
        ["a", "b", "c", "d", "e", "f"],
        (v, index) => Effect.either(group.submit(insert(v, index === 2), { atomic: true })),
        { concurrency: "unbounded" }
      )
      return { outcomes: outcomes.map(Either.isRight), rows: yield* values }
    }).pipe(Effect.scoped, Effect.provide(layerFor("group")), Effect.runPromise)
    expect(result.outcomes).toEqual([true, true, false, true, true, true])
    expect([...result.rows].sort()).toEqual(["a", "b", "d", "e", "f"])
  })
})
