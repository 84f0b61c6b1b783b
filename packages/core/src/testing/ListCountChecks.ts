import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { toInt } from "../platform/Rows.js"

/**
 * The maintained list counts (docs/operations.md#volume) recomputed from the rows themselves, for
 * tests: every list, program and filter combination the rows fall in, counted here in TypeScript,
 * against what `issuing_list_counts` holds. Used by the migration tests (the backfill, then the
 * triggers) and the black-box counts suite.
 */

/** Each counted list's table and filter columns, in key order (several columns: either matches). */
const SIMPLE_LISTS: ReadonlyArray<readonly [list: string, table: string, dims: ReadonlyArray<ReadonlyArray<string>>]> = [
  ["events", "issuing_events", [["type"]]],
  ["transfers", "issuing_transfers", [["status"], ["payment_rail"], ["from_financial_account_id", "to_financial_account_id"]]],
  ["transactions", "issuing_transactions", [["status"], ["card_id"]]],
  ["wallets", "issuing_wallets", [["tag"]]],
  ["financial_accounts", "issuing_financial_accounts", [["kind"], ["wallet_id"], ["currency"]]],
  ["cards", "issuing_cards", [["wallet_id"], ["state"]]],
  ["card_audit_records", "issuing_card_audit_records", [["card_id"], ["action"]]],
  ["webhook_attempts", "issuing_webhook_attempts", [["subscription_id"], ["status"]]],
  ["disputes", "issuing_disputes", [["transaction_id"], ["status"]]],
  // Since migration 0705 (in LATER_TABLES).
  ["cardholders", "issuing_cardholders", [["status"], ["email"]]]
]

/** Lists whose table a later migration creates: absent in the migration tests of earlier ids, they count nothing there. */
const LATER_TABLES: ReadonlySet<string> = new Set(["issuing_disputes", "issuing_cardholders"])

/** Every key a row falls in: per filter, any value or each distinct non-NULL value of its columns. */
const keysOfRow = (row: Record<string, unknown>, dims: ReadonlyArray<ReadonlyArray<string>>): Array<string> =>
  dims
    .reduce<Array<Array<string>>>(
      (prefixes, columns) => {
        const values = [...new Set(columns.map((c) => row[c]).filter((v) => v !== null && v !== undefined))]
        return prefixes.flatMap((prefix) => [[...prefix, ""], ...values.map((v) => [...prefix, `=${String(v)}`])])
      },
      [[]]
    )
    .map((parts) => parts.join("|"))

export interface ListCount {
  readonly list: string
  readonly program_id: string
  readonly key: string
  readonly n: number
}

const sorted = (counts: Map<string, ListCount>) => [...counts.values()].filter((c) => c.n !== 0).sort((a, b) => cmp(a, b))
const cmp = (a: ListCount, b: ListCount) =>
  a.list < b.list
    ? -1
    : a.list > b.list
      ? 1
      : a.program_id < b.program_id
        ? -1
        : a.program_id > b.program_id
          ? 1
          : a.key < b.key
            ? -1
            : a.key > b.key
              ? 1
              : 0

/** Whether the database has `table` (a failed read would abort a PostgreSQL transaction, so it is asked first). */
const tableExists = (sql: SqlClient.SqlClient, table: string) =>
  Effect.map(
    sql.onDialectOrElse({
      pg: () => sql`SELECT 1 AS found WHERE to_regclass(${table}) IS NOT NULL`,
      orElse: () => sql`SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = ${table}`
    }),
    (rows) => rows.length > 0
  )

/** The counts the rows call for, sorted by list, program and key (zeros left out). */
export const expectedListCounts = Effect.gen(function* () {
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  const counts = new Map<string, ListCount>()
  const add = (list: string, programId: string, key: string) => {
    const id = `${list}\u0000${programId}\u0000${key}`
    const current = counts.get(id)
    counts.set(id, { list, program_id: programId, key, n: (current?.n ?? 0) + 1 })
  }
  for (const [list, table, dims] of SIMPLE_LISTS) {
    if (LATER_TABLES.has(table) && !(yield* tableExists(sql, table))) continue
    const rows = yield* sql`SELECT * FROM ${sql.literal(table)}`
    for (const row of rows) for (const key of keysOfRow(row, dims)) add(list, row.program_id as string, key)
  }
  const heads = yield* sql`SELECT id, program_id FROM issuing_book_transfers`
  const entries = yield* sql`SELECT book_transfer_id, financial_account_id, book FROM issuing_book_entries`
  const programOf = new Map(heads.map((h) => [h.id as string, h.program_id as string]))
  const keysOf = new Map<string, Set<string>>(heads.map((h) => [h.id as string, new Set(["|"])]))
  for (const e of entries) {
    const keys = keysOf.get(e.book_transfer_id as string)!
    keys.add(`=${e.financial_account_id}|`)
    keys.add(`|=${e.book}`)
    keys.add(`=${e.financial_account_id}|=${e.book}`)
  }
  for (const [id, keys] of keysOf) for (const key of keys) add("book_transfers", programOf.get(id)!, key)
  return sorted(counts)
})

/** What `issuing_list_counts` holds, summed over shards, sorted the same way (zeros left out). */
export const maintainedListCounts = Effect.gen(function* () {
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  const rows = yield* sql`SELECT list, program_id, key, SUM(n) AS n FROM issuing_list_counts GROUP BY list, program_id, key`
  const counts = new Map<string, ListCount>()
  for (const row of rows) {
    const count = { list: row.list as string, program_id: row.program_id as string, key: row.key as string, n: toInt(row.n) }
    counts.set(`${count.list}\u0000${count.program_id}\u0000${count.key}`, count)
  }
  return sorted(counts)
})
