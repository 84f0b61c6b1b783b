import { SqlClient } from "@effect/sql"
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { toInt, toIso } from "../platform/Rows.js"
import { countPeriods, PERIOD_LISTS, type PeriodList, SUMMED_FILTERS } from "../sql/ListCounts.js"

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

/** Filters counted per value only since migration 0750 (a row in its own value's key alone, never in ''). */
const SUMMED: Readonly<Record<string, ReadonlyArray<string>>> = SUMMED_FILTERS

/**
 * Every key a row falls in: per filter, any value or each distinct non-NULL value of its columns;
 * with `summed`, the filters named there their value only.
 */
const keysOfRow = (
  row: Record<string, unknown>,
  dims: ReadonlyArray<ReadonlyArray<string>>,
  summed: ReadonlyArray<string> = []
): Array<string> =>
  dims
    .reduce<Array<Array<string>>>(
      (prefixes, columns) => {
        const values = [...new Set(columns.map((c) => row[c]).filter((v) => v !== null && v !== undefined))]
        const any = columns.some((c) => summed.includes(c)) ? [] : [""]
        return prefixes.flatMap((prefix) => [...any.map((a) => [...prefix, a]), ...values.map((v) => [...prefix, `=${String(v)}`])])
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
  const [latest] = yield* sql`SELECT max(migration_id) AS id FROM issuing_migrations`
  const perValue = toInt(latest?.id ?? 0) >= 750
  // Since migration 0841: a transfer's, transaction's or event's keys again in its month, day and hour.
  const perPeriod = toInt(latest?.id ?? 0) >= 841
  const periodLists: ReadonlyArray<string> = PERIOD_LISTS
  for (const [list, table, dims] of SIMPLE_LISTS) {
    if (LATER_TABLES.has(table) && !(yield* tableExists(sql, table))) continue
    const rows = yield* sql`SELECT * FROM ${sql.literal(table)}`
    const summed = perValue ? SUMMED[list] : undefined
    for (const row of rows) {
      const lists = perPeriod && periodLists.includes(list) ? [list, ...countPeriods(list as PeriodList, toIso(row.created_at))] : [list]
      for (const key of keysOfRow(row, dims, summed)) for (const named of lists) add(named, row.program_id as string, key)
    }
  }
  const heads = yield* sql`SELECT id, program_id FROM issuing_book_transfers`
  const entries = yield* sql`SELECT book_transfer_id, financial_account_id, book FROM issuing_book_entries`
  const programOf = new Map(heads.map((h) => [h.id as string, h.program_id as string]))
  if (perValue) {
    // One key per account of a book transfer's entries: the set of its books there, sorted.
    const booksOf = new Map<string, Set<string>>()
    for (const e of entries) {
      const id = `${e.book_transfer_id}\u0000${e.financial_account_id}`
      booksOf.set(id, (booksOf.get(id) ?? new Set()).add(e.book as string))
    }
    for (const [id, books] of booksOf) {
      const [bookTransferId, account] = id.split("\u0000") as [string, string]
      add("book_transfers", programOf.get(bookTransferId)!, `=${account}|=${[...books].sort().join("+")}`)
    }
    return sorted(counts)
  }
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

/** The failure that rolls `countingWritesCheck`'s transaction back. */
class RolledBack {
  readonly _tag = "RolledBack"
}

/**
 * Writes of each kind the money-movement lists' counting triggers see, the counts checked against
 * the rows after each, in a transaction rolled back at the end (entries are immutable, and these
 * leave the ledger unbalanced): a transfer and its book transfer, whose entries come in two
 * statements (an account's set of books grows from `principal` to `cash+principal`), a transfer's
 * and a transaction's status changed, an event written and deleted. Reads the program, accounts
 * and transaction of the first transfer the database has.
 */
export const countingWritesCheck = (at: string) =>
  Effect.gen(function* () {
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const checked = Effect.gen(function* () {
      expect(yield* maintainedListCounts).toEqual(yield* expectedListCounts)
    })
    const [t] = yield* sql<{ program_id: string; transaction_id: string; a: string; b: string }>`SELECT program_id, transaction_id,
        from_financial_account_id AS a, to_financial_account_id AS b FROM issuing_transfers ORDER BY id LIMIT 1`
    const { program_id: program, transaction_id: transaction, a, b } = t!
    const entry = (position: number, account: string, book: string, type: string) =>
      sql`(${"bt_counted"}, ${position}, ${account}, ${book}, ${type}, 5, 'USD', ${at})`
    const entries = (rows: ReadonlyArray<ReturnType<typeof entry>>) =>
      sql`INSERT INTO issuing_book_entries (book_transfer_id, position, financial_account_id, book, entry_type, amount_minor, currency, posted_at)
          VALUES ${sql.join(", ", false)(rows)}`
    yield* sql
      .withTransaction(
        Effect.gen(function* () {
          yield* sql`INSERT INTO issuing_transfers (id, program_id, transaction_id, payment_rail, amount_minor, currency,
                       from_financial_account_id, to_financial_account_id, status, description, metadata, created_at, updated_at)
                     VALUES ('tr_counted', ${program}, ${transaction}, 'wire', 5, 'USD', ${a}, ${b}, 'PENDING', NULL, '{}', ${at}, ${at})`
          yield* sql`INSERT INTO issuing_book_transfers (id, program_id, transfer_id, transaction_id, amount_minor, currency, posted_at)
                     VALUES ('bt_counted', ${program}, 'tr_counted', ${transaction}, 5, 'USD', ${at})`
          yield* entries([entry(0, a, "principal", "DEBIT"), entry(1, b, "principal", "CREDIT")])
          yield* checked
          yield* entries([entry(2, a, "cash", "CREDIT"), entry(3, b, "cash", "DEBIT")])
          yield* checked
          yield* sql`UPDATE issuing_transfers SET status = 'SETTLED' WHERE id = 'tr_counted'`
          yield* sql`UPDATE issuing_transactions SET status = 'VOIDED' WHERE id = ${transaction}`
          yield* checked
          yield* sql`INSERT INTO issuing_events (id, program_id, type, created_at, data) VALUES ('evt_counted', ${program}, 'counted.check', ${at}, '{}')`
          yield* checked
          yield* sql`DELETE FROM issuing_events WHERE id = 'evt_counted'`
          yield* checked
          return yield* Effect.fail(new RolledBack())
        })
      )
      .pipe(
        Effect.catchIf(
          (error) => error instanceof RolledBack,
          () => Effect.void
        )
      )
  })
