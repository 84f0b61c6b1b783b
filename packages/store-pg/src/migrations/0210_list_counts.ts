import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Maintained list counts (docs/operations.md#volume): `total_count` of the lists that grow without
 * bound is read from `issuing_list_counts` instead of counting the table. A row there holds how
 * many rows of one list, in one program, match one combination of the list's filters (its `key`,
 * the filter values in a fixed order: `=value` for a value, empty for "any", joined with `|`), in
 * one of 16 shards; the total is the sum of the shards. Statement-level triggers with transition
 * tables keep it, in the transaction that writes the rows: each statement adds one upsert per
 * combination it touches, on the shard `pg_backend_pid() % 16`, so concurrent writers seldom wait
 * on the same counter row. The lists' keys are read by `core/src/sql/ListCounts.ts`, which spells
 * them in the same order.
 *
 * Backfilled here from the rows already written, under SHARE locks so that no row is written
 * between the count and the trigger that would have counted it.
 */

const SHARDS = 16

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

const upsert = (list: string, shard: string, select: string) =>
  `INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT '${list}', program_id, k, ${shard}, SUM(d) FROM (${select}) x
   GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n`

const withDelta = (keys: string, delta: number) => `SELECT program_id, k, ${delta} AS d FROM (${keys}) y`

const countFunction = (counted: Counted) => {
  const shard = `pg_backend_pid() % ${SHARDS}`
  const added = withDelta(keysOf(counted, "new_rows"), 1)
  const removed = withDelta(keysOf(counted, "old_rows"), -1)
  return `CREATE FUNCTION issuing_count_${counted.list}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        ${upsert(counted.list, shard, added)};
      ELSIF TG_OP = 'DELETE' THEN
        ${upsert(counted.list, shard, removed)};
      ELSE
        ${upsert(counted.list, shard, `${added} UNION ALL ${removed}`)};
      END IF;
      RETURN NULL;
    END $$`
}

/**
 * Book transfers are listed by the accounts and books of their entries: key `=account|=book`,
 * `=account|` or `|=book` once per book transfer whatever the number of its entries that match,
 * and `|` for every book transfer (counted from issuing_book_transfers). An entry counts a key
 * unless another entry of its book transfer already did: one written by an earlier statement, or
 * at a lower position in the same one. Entries and book transfers are immutable (0010's triggers).
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
    n BIGINT NOT NULL,
    PRIMARY KEY (list, program_id, key, shard)
  )`
  const tables = [...COUNTED.map((c) => c.table), "issuing_book_transfers", "issuing_book_entries"]
  yield* sql.unsafe(`LOCK TABLE ${tables.join(", ")} IN SHARE MODE`)
  for (const counted of COUNTED) {
    yield* sql.unsafe(upsert(counted.list, "0", withDelta(keysOf(counted, counted.table), 1)))
    yield* sql.unsafe(countFunction(counted))
    for (const [event, referencing] of [
      ["INSERT", "NEW TABLE AS new_rows"],
      ["UPDATE", "OLD TABLE AS old_rows NEW TABLE AS new_rows"],
      ["DELETE", "OLD TABLE AS old_rows"]
    ] as const) {
      yield* sql.unsafe(`CREATE TRIGGER issuing_count_${counted.list}_${event.toLowerCase()} AFTER ${event} ON ${counted.table}
        REFERENCING ${referencing} FOR EACH STATEMENT EXECUTE FUNCTION issuing_count_${counted.list}()`)
    }
  }

  // Book transfers: every one under key '|', then the keys of their entries.
  yield* sql.unsafe(upsert("book_transfers", "0", `SELECT program_id, '|' AS k, 1 AS d FROM issuing_book_transfers`))
  yield* sql.unsafe(
    upsert(
      "book_transfers",
      "0",
      `SELECT bt.program_id, x.k, 1 AS d
       FROM (SELECT DISTINCT e.book_transfer_id, ${entryKey("e")} AS k FROM issuing_book_entries e CROSS JOIN ${ENTRY_KEYS}) x
       JOIN issuing_book_transfers bt ON bt.id = x.book_transfer_id`
    )
  )
  yield* sql.unsafe(`CREATE FUNCTION issuing_count_book_transfers() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      ${upsert("book_transfers", `pg_backend_pid() % ${SHARDS}`, `SELECT program_id, '|' AS k, 1 AS d FROM new_rows`)};
      RETURN NULL;
    END $$`)
  yield* sql`CREATE TRIGGER issuing_count_book_transfers_insert AFTER INSERT ON issuing_book_transfers
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION issuing_count_book_transfers()`
  yield* sql.unsafe(`CREATE FUNCTION issuing_count_book_entries() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      ${upsert(
        "book_transfers",
        `pg_backend_pid() % ${SHARDS}`,
        `SELECT bt.program_id, x.k, 1 AS d
         FROM (SELECT r.book_transfer_id, ${entryKey("r")} AS k FROM new_rows r CROSS JOIN ${ENTRY_KEYS}
               WHERE NOT EXISTS (
                 SELECT 1 FROM issuing_book_entries e
                 WHERE e.book_transfer_id = r.book_transfer_id AND e.position <> r.position AND ${sameKey("e", "r")}
                   AND (e.position < r.position
                        OR NOT EXISTS (SELECT 1 FROM new_rows n WHERE n.book_transfer_id = e.book_transfer_id AND n.position = e.position)))) x
         JOIN issuing_book_transfers bt ON bt.id = x.book_transfer_id`
      )};
      RETURN NULL;
    END $$`)
  yield* sql`CREATE TRIGGER issuing_count_book_entries_insert AFTER INSERT ON issuing_book_entries
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION issuing_count_book_entries()`
})
