import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The tables every transfer adds rows to become WITHOUT ROWID tables (docs/operations.md#disk-per-transfer):
 * a rowid table with a TEXT primary key is two B-trees — the rows by rowid, and an index of the
 * key pointing at them — and each of its other indexes carries the rowid. Stored by its primary key,
 * a row is written once, and an index whose columns hold the key (every list index ends with `id`)
 * adds nothing. Measured on a program grown to 51,000 book transfers: the events' and entries'
 * key indexes were 155 and 211 bytes a transfer; the five tables together take ≈ 420 bytes a
 * transfer less. Nothing reads a rowid; PostgreSQL has no such split (its heap has no key), so this
 * id is SQLite's alone.
 *
 * Each table is rebuilt as 0550 rebuilt the transfers: its rows copied aside, the table dropped
 * and created again under its own name from its own text in sqlite_schema plus `WITHOUT ROWID`,
 * the rows copied back, then its indexes and triggers (maintained counts, tags, the
 * entries' immutability) created again from their own text — after the copy, so nothing is
 * counted or tagged twice. Foreign keys naming these tables hold again once the rows are back
 * (deferred until the migrations' transaction commits). On a large database this copies every
 * row of the five tables once: upgrade at a quiet time.
 */
const TABLES = ["issuing_transactions", "issuing_transfers", "issuing_book_transfers", "issuing_book_entries", "issuing_events"]

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`PRAGMA defer_foreign_keys = ON`
  for (const table of TABLES) {
    const [created] = yield* sql<{ readonly sql: string }>`SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ${table}`
    const dependents = yield* sql<{ readonly sql: string }>`SELECT sql FROM sqlite_schema
      WHERE type IN ('index', 'trigger') AND tbl_name = ${table} AND sql IS NOT NULL ORDER BY type, name`
    const aside = `${table}_0860`
    yield* sql.unsafe(`CREATE TABLE ${aside} AS SELECT * FROM ${table}`)
    yield* sql.unsafe(`DROP TABLE ${table}`)
    yield* sql.unsafe(`${created!.sql.trimEnd()} WITHOUT ROWID`)
    yield* sql.unsafe(`INSERT INTO ${table} SELECT * FROM ${aside}`)
    yield* sql.unsafe(`DROP TABLE ${aside}`)
    for (const dependent of dependents) yield* sql.unsafe(dependent.sql)
  }
})
