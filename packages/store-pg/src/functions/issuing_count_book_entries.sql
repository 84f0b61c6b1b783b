-- Counts a book transfer once per account of its entries, under the set of books that account's
-- entries have in it: key `=account|=cash+principal` (books sorted by code unit, joined with `+`;
-- core/src/sql/ListCounts.ts SUMMED_FILTERS), so an account's total sums its sets and a book's
-- total the sets holding it (docs/operations.md#exact-totals-at-any-size). Entries written to a
-- book transfer that has some already move its account from the set before to the set after.
-- The entries are read by their book transfer's key (`OFFSET 0` keeps each lookup a correlated
-- subplan: pulled up into a join it read every entry of the table per batch). Skips while the
-- posting functions count their own rows (issuing.posting_counted, the trigger's WHEN).
CREATE OR REPLACE FUNCTION issuing_count_book_entries()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      WITH sets AS (
        SELECT t.book_transfer_id, t.account,
               (SELECT string_agg(b.book, '+' ORDER BY b.book COLLATE "C")
                  FROM (SELECT DISTINCT e.book FROM issuing_book_entries e
                        WHERE e.book_transfer_id = t.book_transfer_id AND e.financial_account_id = t.account OFFSET 0) b) AS after,
               (SELECT string_agg(b.book, '+' ORDER BY b.book COLLATE "C")
                  FROM (SELECT DISTINCT e.book FROM issuing_book_entries e
                        WHERE e.book_transfer_id = t.book_transfer_id AND e.financial_account_id = t.account
                          AND NOT EXISTS (SELECT 1 FROM new_rows n WHERE n.book_transfer_id = e.book_transfer_id AND n.position = e.position) OFFSET 0) b) AS before
          FROM (SELECT DISTINCT r.book_transfer_id, r.financial_account_id AS account FROM new_rows r) t
      )
      INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
        SELECT 'book_transfers', program_id, k, pg_backend_pid() % 16, SUM(d) FROM (
          SELECT bt.program_id, '=' || s.account || '|=' || s.after AS k, 1 AS d
            FROM sets s JOIN issuing_book_transfers bt ON bt.id = s.book_transfer_id
            WHERE s.after IS DISTINCT FROM s.before
          UNION ALL
          SELECT bt.program_id, '=' || s.account || '|=' || s.before, -1
            FROM sets s JOIN issuing_book_transfers bt ON bt.id = s.book_transfer_id
            WHERE s.before IS NOT NULL AND s.after IS DISTINCT FROM s.before
        ) x
        GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
        ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      RETURN NULL;
    END $function$;
