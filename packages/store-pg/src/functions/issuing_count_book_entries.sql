-- Counts a book transfer once per key of its entries (`=account|`, `|=book`, `=account|=book`):
-- an entry counts unless another entry of its book transfer stands for the same key
-- (docs/operations.md#exact-totals-at-any-size). `OFFSET 0` keeps that lookup a correlated subplan
-- read by key: pulled up into an anti join it read every entry of the table per batch (measured:
-- 1,583 ms per 1,000 book transfers at 1,000,000). Skips while the posting functions count their
-- own rows (issuing.posting_counted, the trigger's WHEN).
CREATE OR REPLACE FUNCTION issuing_count_book_entries()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
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
    END $function$;
