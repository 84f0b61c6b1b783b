-- Counts every new book transfer under key `|` of the book transfers' list
-- (docs/operations.md#exact-totals-at-any-size), on the backend's shard.
CREATE OR REPLACE FUNCTION issuing_count_book_transfers()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT 'book_transfers', program_id, k, pg_backend_pid() % 16, SUM(d) FROM (SELECT program_id, '|' AS k, 1 AS d FROM new_rows) x
   GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      RETURN NULL;
    END $function$;
