import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The book-entry counting trigger looks a batch's book transfers up by key instead of reading the
 * whole entries table (docs/operations.md#exact-totals-at-any-size).
 *
 * Migration 0210's `issuing_count_book_entries` counts an account's book transfers once per
 * (book transfer, account), (book transfer, book) and (book transfer, account, book): an entry
 * counts unless another entry of its book transfer already stands for the same key, which a
 * `NOT EXISTS` over `issuing_book_entries` decides. PostgreSQL pulled that `NOT EXISTS` up into a
 * hash anti join, building its hash from EVERY entry in the table, so each multi-row insert of
 * entries (a batch's, `issuing_write_postings`) read the whole table: 65 ms per 1,000 book
 * transfers at 10,000, 1,583 ms at 1,000,000 (EXPLAIN ANALYZE through auto_explain), and
 * `POST /v1/transfers/batch` fell from 1,893 to 493 transfers/s between 1,000 and 1,000,000
 * transfers (`npm run bench -- volume`). The single posting was spared: it counts its own rows
 * (0320) and the trigger skips.
 *
 * `OFFSET 0` keeps the subquery a correlated subplan, so each new entry reads its own book
 * transfer's few entries through the primary key (book_transfer_id, position): 74 ms per 1,000 at
 * 300,000, the same as at 10,000. The keys and counts are unchanged; only the plan is.
 *
 * Numbered 0390, past every id already applied: the Migrator runs only ids above the latest one.
 * PostgreSQL only: SQLite's counting triggers are per row and look entries up by key already.
 */

/**
 * 0210's \`issuing_count_book_entries\` with its subquery ended by \`OFFSET 0\`: the text this migration
 * made (it patched the body 0210 had generated), written out whole.
 */
const COUNT_BOOK_ENTRIES = `CREATE OR REPLACE FUNCTION issuing_count_book_entries() RETURNS trigger LANGUAGE plpgsql AS $body$
    BEGIN
      INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT 'book_transfers', program_id, k, pg_backend_pid() % 16, SUM(d) FROM (SELECT bt.program_id, x.k, 1 AS d
         FROM (SELECT r.book_transfer_id, CASE d.o WHEN 1 THEN '=' || r.financial_account_id || '|' WHEN 2 THEN '|=' || r.book
   ELSE '=' || r.financial_account_id || '|=' || r.book END AS k FROM new_rows r CROSS JOIN (SELECT 1 AS o UNION ALL SELECT 2 UNION ALL SELECT 3) d
               WHERE NOT EXISTS (
                 SELECT 1 FROM issuing_book_entries e
                 WHERE e.book_transfer_id = r.book_transfer_id AND e.position <> r.position AND CASE d.o WHEN 1 THEN e.financial_account_id = r.financial_account_id WHEN 2 THEN e.book = r.book
   ELSE e.financial_account_id = r.financial_account_id AND e.book = r.book END
                   AND (e.position < r.position
                        OR NOT EXISTS (SELECT 1 FROM new_rows n WHERE n.book_transfer_id = e.book_transfer_id AND n.position = e.position)) OFFSET 0)) x
         JOIN issuing_book_transfers bt ON bt.id = x.book_transfer_id) x
   GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      RETURN NULL;
    END $body$`

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(COUNT_BOOK_ENTRIES)
})
