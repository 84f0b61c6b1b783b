import { SqlClient } from "@effect/sql"
import * as PgStore from "@issuing/store-pg"
import * as SqliteStore from "@issuing/store-sqlite"
import { Effect, type Layer } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../support/databases.js"

/**
 * The two stores' migrations are written twice, once per dialect. This suite migrates a fresh
 * database of each kind through the real store layers and compares, per `issuing_` table, the
 * columns: names, nullability and a coarse type class.
 */

/** A coarse type class: what a column holds, whatever the dialect calls it. */
type TypeClass = "integer" | "text" | "boolean" | "timestamp" | "json" | "real" | "blob" | "other"

interface Column {
  readonly declared: string
  readonly typeClass: TypeClass
  readonly nullable: boolean
}

/** Table name → column name → column. */
type Schema = Map<string, Map<string, Column>>

/** A declared SQLite type, classed by SQLite's own affinity rules plus the names that say more. */
const sqliteClass = (declared: string): TypeClass => {
  const type = declared.toUpperCase()
  if (type.includes("BOOL")) return "boolean"
  if (type.includes("JSON")) return "json"
  if (type.includes("INT")) return "integer"
  if (type.includes("CHAR") || type.includes("CLOB") || type.includes("TEXT")) return "text"
  if (type.includes("DATE") || type.includes("TIME")) return "timestamp"
  if (type.includes("BLOB") || type === "") return "blob"
  if (type.includes("REAL") || type.includes("FLOA") || type.includes("DOUB")) return "real"
  return "other"
}

/** A PostgreSQL `information_schema` data_type, classed. */
const pgClass = (dataType: string): TypeClass => {
  switch (dataType) {
    case "smallint":
    case "integer":
    case "bigint":
      return "integer"
    case "text":
    case "character varying":
    case "character":
    case "uuid":
      return "text"
    case "boolean":
      return "boolean"
    case "timestamp with time zone":
    case "timestamp without time zone":
    case "date":
      return "timestamp"
    case "json":
    case "jsonb":
      return "json"
    case "real":
    case "double precision":
    case "numeric":
      return "real"
    case "bytea":
      return "blob"
    default:
      return "other"
  }
}

/**
 * Whether a SQLite column can hold what the PostgreSQL one holds. SQLite has no boolean, timestamp
 * or json storage: the SqliteClient binds booleans as 1/0, dates as ISO 8601 text, and JSON is text.
 */
const compatible = (pg: TypeClass, sqlite: TypeClass): boolean =>
  pg === sqlite ||
  (pg === "boolean" && sqlite === "integer") ||
  (pg === "timestamp" && sqlite === "text") ||
  (pg === "json" && sqlite === "text")

const readSqlite = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const tables = yield* sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`
  const schema: Schema = new Map()
  for (const { name } of tables.filter((table) => table.name.startsWith("issuing_") && !ONLY_IN_SQLITE.has(table.name))) {
    const columns = yield* sql.unsafe<{ name: string; type: string; notnull: number; pk: number }>(
      `PRAGMA table_info(${JSON.stringify(name)})`
    )
    schema.set(
      name,
      new Map(
        columns.map((column) => [
          column.name,
          {
            declared: column.type,
            typeClass: sqliteClass(column.type),
            // SQLite lets a non-INTEGER primary key column hold NULL unless it says NOT NULL; no
            // repository ever writes one, so a key column counts as NOT NULL, as PostgreSQL makes it.
            nullable: column.notnull === 0 && column.pk === 0
          }
        ])
      )
    )
  }
  return schema
})

/**
 * PostgreSQL's own tables, with no counterpart in SQLite: the checksums of the stored functions'
 * files (docs/architecture.md#stored-functions); SQLite has no stored functions.
 */
const ONLY_IN_PG = new Set(["issuing_function_checksums"])

/**
 * Tables only SQLite has: the batch's list names its triggers skip while it counts its own rows
 * (docs/operations.md, "batches count their own rows"); PostgreSQL says the same with a
 * transaction-local setting, which SQLite lacks.
 */
const ONLY_IN_SQLITE = new Set(["issuing_posting_counted"])

const readPg = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ table_name: string; column_name: string; data_type: string; is_nullable: string }>`
    SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns
    WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`
  const schema: Schema = new Map()
  for (const row of rows.filter((column) => column.table_name.startsWith("issuing_") && !ONLY_IN_PG.has(column.table_name))) {
    const table = schema.get(row.table_name) ?? new Map<string, Column>()
    table.set(row.column_name, {
      declared: row.data_type,
      typeClass: pgClass(row.data_type),
      nullable: row.is_nullable === "YES"
    })
    schema.set(row.table_name, table)
  }
  return schema
})

/** Every difference between the two schemas, one readable line each; empty when they agree. */
const differences = (sqlite: Schema, pg: Schema): Array<string> => {
  const lines: Array<string> = []
  const tables = [...new Set([...sqlite.keys(), ...pg.keys()])].sort()
  for (const table of tables) {
    const left = sqlite.get(table)
    const right = pg.get(table)
    if (left === undefined) {
      lines.push(`${table}: only in PostgreSQL`)
      continue
    }
    if (right === undefined) {
      lines.push(`${table}: only in SQLite`)
      continue
    }
    for (const name of [...new Set([...left.keys(), ...right.keys()])].sort()) {
      const a = left.get(name)
      const b = right.get(name)
      if (a === undefined) lines.push(`${table}.${name}: only in PostgreSQL (${b!.declared})`)
      else if (b === undefined) lines.push(`${table}.${name}: only in SQLite (${a.declared})`)
      else {
        if (!compatible(b.typeClass, a.typeClass)) {
          lines.push(`${table}.${name}: type SQLite ${a.declared} (${a.typeClass}) vs PostgreSQL ${b.declared} (${b.typeClass})`)
        }
        if (a.nullable !== b.nullable) {
          const says = (nullable: boolean) => (nullable ? "NULL" : "NOT NULL")
          lines.push(`${table}.${name}: SQLite ${says(a.nullable)} vs PostgreSQL ${says(b.nullable)}`)
        }
      }
    }
  }
  return lines
}

/** Migrates the database through its store's layer and reads its `issuing_` schema. */
const schemaOf = <E>(layer: Layer.Layer<SqlClient.SqlClient, E>, read: Effect.Effect<Schema, unknown, SqlClient.SqlClient>) =>
  Effect.runPromise(Effect.scoped(Effect.provide(read, layer)))

describe("migration parity", () => {
  const databases: Array<TestDatabase> = []
  afterAll(async () => {
    for (const database of databases) await database.drop()
  })

  it("classes each dialect's declared types the way the comparison relies on", () => {
    expect(["INTEGER", "TEXT", "VARCHAR(255)", "datetime", "BOOLEAN", "JSON"].map(sqliteClass)).toEqual([
      "integer",
      "text",
      "text",
      "timestamp",
      "boolean",
      "json"
    ])
    expect(["bigint", "text", "timestamp with time zone", "boolean", "jsonb"].map(pgClass)).toEqual([
      "integer",
      "text",
      "timestamp",
      "boolean",
      "json"
    ])
    expect(compatible("timestamp", "text")).toBe(true)
    expect(compatible("boolean", "integer")).toBe(true)
    expect(compatible("integer", "text")).toBe(false)
    expect(compatible("timestamp", "integer")).toBe(false)
    const sqlite: Schema = new Map([
      [
        "issuing_x",
        new Map([
          ["id", { declared: "TEXT", typeClass: "text", nullable: false }],
          ["at", { declared: "TEXT", typeClass: "text", nullable: true }]
        ])
      ]
    ])
    const pg: Schema = new Map([
      [
        "issuing_x",
        new Map([
          ["id", { declared: "text", typeClass: "text", nullable: false }],
          ["at", { declared: "timestamp with time zone", typeClass: "timestamp", nullable: false }],
          ["extra", { declared: "text", typeClass: "text", nullable: true }]
        ])
      ]
    ])
    expect(differences(sqlite, pg)).toEqual([
      "issuing_x.at: SQLite NULL vs PostgreSQL NOT NULL",
      "issuing_x.extra: only in PostgreSQL (text)"
    ])
  })

  it("gives every issuing_ table the same columns on SQLite and PostgreSQL", async () => {
    const sqliteDatabase = await createTestDatabase("sqlite")
    databases.push(sqliteDatabase)
    const pgDatabase = await createTestDatabase("postgres")
    databases.push(pgDatabase)

    const sqlite = await schemaOf(SqliteStore.layer({ filename: sqliteDatabase.filename! }), readSqlite)
    const pg = await schemaOf(PgStore.layer({ url: pgDatabase.url, maxConnections: 2 }), readPg)

    // Both migrated: the tables every feature needs are there (a failed migration would leave none).
    for (const table of ["issuing_migrations", "issuing_api_keys", "issuing_transfers", "issuing_cards", "issuing_webhook_attempts"]) {
      expect(sqlite.has(table), `SQLite ${table}`).toBe(true)
      expect(pg.has(table), `PostgreSQL ${table}`).toBe(true)
    }
    expect(differences(sqlite, pg).join("\n")).toBe("")
  })
})
