import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Maintained list counts (docs/operations.md#volume): `total_count` of the lists that grow without
 * bound is read from `issuing_list_counts` instead of counting the table. A row there holds how
 * many rows of one list, in one program, match one combination of the list's filters (its `key`,
 * the filter values in a fixed order: `=value` for a value, empty for "any", joined with `|`).
 * Row-level triggers keep it in the transaction that writes the rows — the posting's prepared
 * statements, the writer thread's batches and every other write alike. SQLite has one writer, so
 * one row per combination (shard 0) makes no one wait. The lists' keys are read by
 * `core/src/sql/ListCounts.ts`, which spells them in the same order; the same keys as the
 * PostgreSQL migration of this id.
 *
 * Backfilled here from the rows already written (the migration holds the write lock).
 */

interface Counted {
  readonly list: string
  readonly table: string
  /** The list's filters in key order; a filter matched by either of several columns names them all. */
  readonly dims: ReadonlyArray<ReadonlyArray<string>>
}

const COUNTED: ReadonlyArray<Counted> = [
  { list: "events", table: "issuing_events", dims: [["type"]] },
  {
    list: "transfers",
    table: "issuing_transfers",
    dims: [["status"], ["payment_rail"], ["from_financial_account_id", "to_financial_account_id"]]
  },
  { list: "transactions", table: "issuing_transactions", dims: [["status"], ["card_id"]] },
  { list: "wallets", table: "issuing_wallets", dims: [] },
  { list: "financial_accounts", table: "issuing_financial_accounts", dims: [["kind"], ["wallet_id"], ["currency"]] },
  { list: "cards", table: "issuing_cards", dims: [["wallet_id"], ["state"]] },
  { list: "card_audit_records", table: "issuing_card_audit_records", dims: [["card_id"], ["action"]] },
  { list: "webhook_attempts", table: "issuing_webhook_attempts", dims: [["subscription_id"], ["status"]] }
]

/**
 * The (program_id, k) of every combination each row of `source` belongs to: for each filter
 * "any" (o = 0) or one of its columns (o = 1…) when that column is not NULL and differs from the
 * earlier ones (a transfer between two accounts counts once for each, never twice for one).
 */
const keysOf = ({ dims }: Counted, source: string) => {
  if (dims.length === 0) return `SELECT r.program_id AS program_id, '' AS k FROM ${source} r`
  const joins = dims
    .map((cols, i) => `CROSS JOIN (SELECT 0 AS o${cols.map((_, j) => ` UNION ALL SELECT ${j + 1}`).join("")}) d${i}`)
    .join(" ")
  const parts = dims.map((cols, i) => `CASE d${i}.o WHEN 0 THEN '' ${cols.map((c, j) => `WHEN ${j + 1} THEN '=' || r.${c}`).join(" ")} END`)
  const conditions = dims.flatMap((cols, i) =>
    cols.flatMap((c, j) => [
      `(d${i}.o <> ${j + 1} OR r.${c} IS NOT NULL)`,
      ...cols.slice(0, j).map((earlier) => `(d${i}.o <> ${j + 1} OR r.${c} IS DISTINCT FROM r.${earlier})`)
    ])
  )
  return `SELECT r.program_id AS program_id, ${parts.join(" || '|' || ")} AS k FROM ${source} r ${joins}
          WHERE ${conditions.join(" AND ")}`
}

const upsert = (list: string, select: string) =>
  `INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT '${list}', program_id, k, 0, SUM(d) FROM (${select}) x
   GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n`

/** One row's keys are distinct, so a row trigger's insert or delete needs no grouping. */
const rowUpsert = (list: string, delta: number, keys: string) =>
  `INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT '${list}', program_id, k, 0, ${delta} FROM (${keys}) x WHERE true
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n`

const withDelta = (keys: string, delta: number) => `SELECT program_id, k, ${delta} AS d FROM (${keys}) y`

/** The row a trigger sees (NEW or OLD) as a one-row table of the columns its keys read. */
const rowOf = ({ dims }: Counted, row: "NEW" | "OLD") =>
  `(SELECT ${["program_id", ...dims.flat()].map((c) => `${row}.${c} AS ${c}`).join(", ")})`

/**
 * Book transfers are listed by the accounts and books of their entries: key `=account|=book`,
 * `=account|` or `|=book` once per book transfer whatever the number of its entries that match,
 * and `|` for every book transfer (counted from issuing_book_transfers). An entry counts a key
 * unless an entry of its book transfer written before it already did. Entries and book transfers
 * are immutable (0010's triggers).
 */
const ENTRY_KEYS = `(SELECT 1 AS o UNION ALL SELECT 2 UNION ALL SELECT 3) d`
const entryKey = (r: string) =>
  `CASE d.o WHEN 1 THEN '=' || ${r}.financial_account_id || '|' WHEN 2 THEN '|=' || ${r}.book
   ELSE '=' || ${r}.financial_account_id || '|=' || ${r}.book END`
const sameKey = (e: string, r: string) =>
  `CASE d.o WHEN 1 THEN ${e}.financial_account_id = ${r}.financial_account_id WHEN 2 THEN ${e}.book = ${r}.book
   ELSE ${e}.financial_account_id = ${r}.financial_account_id AND ${e}.book = ${r}.book END`

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE issuing_list_counts (
    list TEXT NOT NULL,
    program_id TEXT NOT NULL,
    key TEXT NOT NULL,
    shard INTEGER NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (list, program_id, key, shard)
  ) WITHOUT ROWID`
  for (const counted of COUNTED) {
    const { list, table } = counted
    yield* sql.unsafe(upsert(list, withDelta(keysOf(counted, table), 1)))
    const added = withDelta(keysOf(counted, rowOf(counted, "NEW")), 1)
    const removed = withDelta(keysOf(counted, rowOf(counted, "OLD")), -1)
    yield* sql.unsafe(`CREATE TRIGGER issuing_count_${list}_insert AFTER INSERT ON ${table}
      BEGIN ${rowUpsert(list, 1, keysOf(counted, rowOf(counted, "NEW")))}; END`)
    yield* sql.unsafe(`CREATE TRIGGER issuing_count_${list}_delete AFTER DELETE ON ${table}
      BEGIN ${rowUpsert(list, -1, keysOf(counted, rowOf(counted, "OLD")))}; END`)
    const columns = ["program_id", ...counted.dims.flat()]
    yield* sql.unsafe(`CREATE TRIGGER issuing_count_${list}_update AFTER UPDATE OF ${columns.join(", ")} ON ${table}
      WHEN ${columns.map((c) => `OLD.${c} IS NOT NEW.${c}`).join(" OR ")}
      BEGIN ${upsert(list, `${added} UNION ALL ${removed}`)}; END`)
  }

  // Book transfers: every one under key '|', then the keys of their entries.
  yield* sql.unsafe(upsert("book_transfers", `SELECT program_id, '|' AS k, 1 AS d FROM issuing_book_transfers`))
  yield* sql.unsafe(
    upsert(
      "book_transfers",
      `SELECT bt.program_id, x.k, 1 AS d
       FROM (SELECT DISTINCT e.book_transfer_id, ${entryKey("e")} AS k FROM issuing_book_entries e CROSS JOIN ${ENTRY_KEYS}) x
       JOIN issuing_book_transfers bt ON bt.id = x.book_transfer_id`
    )
  )
  yield* sql.unsafe(`CREATE TRIGGER issuing_count_book_transfers_insert AFTER INSERT ON issuing_book_transfers
    BEGIN ${rowUpsert("book_transfers", 1, `SELECT NEW.program_id AS program_id, '|' AS k`)}; END`)
  yield* sql.unsafe(`CREATE TRIGGER issuing_count_book_entries_insert AFTER INSERT ON issuing_book_entries
    BEGIN ${rowUpsert(
      "book_transfers",
      1,
      `SELECT bt.program_id AS program_id, x.k AS k
       FROM (SELECT r.book_transfer_id, ${entryKey("r")} AS k
             FROM (SELECT NEW.book_transfer_id AS book_transfer_id, NEW.position AS position,
                          NEW.financial_account_id AS financial_account_id, NEW.book AS book) r CROSS JOIN ${ENTRY_KEYS}
             WHERE NOT EXISTS (
               SELECT 1 FROM issuing_book_entries e
               WHERE e.book_transfer_id = r.book_transfer_id AND e.position <> r.position AND ${sameKey("e", "r")})) x
       JOIN issuing_book_transfers bt ON bt.id = x.book_transfer_id`
    )}; END`)
})
