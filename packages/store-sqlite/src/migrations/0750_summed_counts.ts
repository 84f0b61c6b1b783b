import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The money-movement lists' counts kept per value of their closed filters only
 * (docs/operations.md#the-databases-work-per-transfer-postgresql): the same keys as the other
 * store's migration of this id, which says what they are and why. Here the row triggers of those
 * lists are made again to write them, the book transfers' own (key `|`, which no list reads) goes,
 * and the counts of those lists are recounted from their rows (the migration holds the write lock).
 *
 * A book entry's trigger moves its account's count in its book transfer from the set of books the
 * entries before it had (none: no count) to the set with its own book, when that is another set.
 */
const upsert = (list: string, select: string) =>
  `INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT '${list}', program_id, k, 0, SUM(d) FROM (${select}) x
   GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n`

interface Counted {
  readonly list: string
  readonly table: string
  /** The columns a key reads (an update of another column leaves the counts alone). */
  readonly columns: ReadonlyArray<string>
  /** The keys of the row `r` (NEW or OLD) as (program_id, k) rows. */
  readonly keys: (r: "NEW" | "OLD") => string
}

const COUNTED: ReadonlyArray<Counted> = [
  {
    list: "events",
    table: "issuing_events",
    columns: ["program_id", "type"],
    keys: (r) => `SELECT ${r}.program_id AS program_id, '=' || ${r}.type AS k`
  },
  {
    list: "transfers",
    table: "issuing_transfers",
    columns: ["program_id", "status", "payment_rail", "from_financial_account_id", "to_financial_account_id"],
    keys: (r) => `SELECT ${r}.program_id AS program_id, '=' || ${r}.status || '|=' || ${r}.payment_rail || '|' || a.v AS k
      FROM (SELECT '' AS v UNION SELECT '=' || ${r}.from_financial_account_id UNION SELECT '=' || ${r}.to_financial_account_id) a`
  },
  {
    list: "transactions",
    table: "issuing_transactions",
    columns: ["program_id", "status", "card_id"],
    keys: (r) => `SELECT ${r}.program_id AS program_id, '=' || ${r}.status || '|' || c.v AS k
      FROM (SELECT '' AS v UNION ALL SELECT '=' || ${r}.card_id WHERE ${r}.card_id IS NOT NULL) c`
  }
]

/** The set of books of an account's entries in a book transfer, sorted and joined with `+` (NULL: none). */
const booksOf = (bookTransfer: string, account: string, condition: string) =>
  `(SELECT group_concat(d.book, '+' ORDER BY d.book) FROM (SELECT DISTINCT e.book FROM issuing_book_entries e
     WHERE e.book_transfer_id = ${bookTransfer} AND e.financial_account_id = ${account}${condition}) d)`

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`DROP TRIGGER issuing_count_book_transfers_insert`
  yield* sql`DROP TRIGGER issuing_count_book_entries_insert`
  for (const { list, table, columns, keys } of COUNTED) {
    for (const event of ["insert", "update", "delete"]) yield* sql.unsafe(`DROP TRIGGER issuing_count_${list}_${event}`)
    yield* sql.unsafe(`CREATE TRIGGER issuing_count_${list}_insert AFTER INSERT ON ${table}
      BEGIN ${upsert(list, `SELECT program_id, k, 1 AS d FROM (${keys("NEW")}) y`)}; END`)
    yield* sql.unsafe(`CREATE TRIGGER issuing_count_${list}_delete AFTER DELETE ON ${table}
      BEGIN ${upsert(list, `SELECT program_id, k, -1 AS d FROM (${keys("OLD")}) y`)}; END`)
    yield* sql.unsafe(`CREATE TRIGGER issuing_count_${list}_update AFTER UPDATE OF ${columns.join(", ")} ON ${table}
      WHEN ${columns.map((c) => `OLD.${c} IS NOT NEW.${c}`).join(" OR ")}
      BEGIN ${upsert(
        list,
        `SELECT program_id, k, 1 AS d FROM (${keys("NEW")}) y UNION ALL SELECT program_id, k, -1 AS d FROM (${keys("OLD")}) y`
      )}; END`)
  }
  yield* sql.unsafe(`CREATE TRIGGER issuing_count_book_entries_insert AFTER INSERT ON issuing_book_entries
    BEGIN ${upsert(
      "book_transfers",
      `SELECT bt.program_id AS program_id, '=' || NEW.financial_account_id || '|=' || s.v AS k, s.d AS d
       FROM (SELECT ${booksOf("NEW.book_transfer_id", "NEW.financial_account_id", "")} AS v, 1 AS d
             UNION ALL
             SELECT ${booksOf("NEW.book_transfer_id", "NEW.financial_account_id", " AND e.position <> NEW.position")}, -1) s
       JOIN issuing_book_transfers bt ON bt.id = NEW.book_transfer_id
       WHERE s.v IS NOT NULL`
    )}; END`)

  yield* sql`DELETE FROM issuing_list_counts WHERE list IN ('events', 'transfers', 'transactions', 'book_transfers')`
  yield* sql`INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
    SELECT 'events', program_id, '=' || type, 0, count(*) FROM issuing_events GROUP BY program_id, type`
  yield* sql`INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
    SELECT 'transfers', program_id, k, 0, count(*) FROM (
      SELECT program_id, '=' || status || '|=' || payment_rail || '|' AS k FROM issuing_transfers
      UNION ALL
      SELECT program_id, '=' || status || '|=' || payment_rail || '|=' || from_financial_account_id FROM issuing_transfers
      UNION ALL
      SELECT program_id, '=' || status || '|=' || payment_rail || '|=' || to_financial_account_id FROM issuing_transfers
        WHERE to_financial_account_id <> from_financial_account_id
    ) x GROUP BY program_id, k`
  yield* sql`INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
    SELECT 'transactions', program_id, k, 0, count(*) FROM (
      SELECT program_id, '=' || status || '|' AS k FROM issuing_transactions
      UNION ALL
      SELECT program_id, '=' || status || '|=' || card_id FROM issuing_transactions WHERE card_id IS NOT NULL
    ) x GROUP BY program_id, k`
  yield* sql`INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
    SELECT 'book_transfers', bt.program_id, '=' || s.account || '|=' || s.books, 0, count(*)
    FROM (SELECT d.book_transfer_id, d.account, group_concat(d.book, '+' ORDER BY d.book) AS books
          FROM (SELECT DISTINCT book_transfer_id, financial_account_id AS account, book FROM issuing_book_entries) d
          GROUP BY d.book_transfer_id, d.account) s
    JOIN issuing_book_transfers bt ON bt.id = s.book_transfer_id
    GROUP BY bt.program_id, s.account, s.books`
})
