-- Keeps the transfers' counts (docs/operations.md#exact-totals-at-any-size): keys
-- `=status|=rail|=account` with "any" ('') for each filter, a transfer counted once for each of its
-- two accounts, on the backend's shard. Skips while a posting function counts its own rows.
CREATE OR REPLACE FUNCTION issuing_count_transfers()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT 'transfers', program_id, k, pg_backend_pid() % 16, SUM(d) FROM (SELECT program_id, k, 1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.status END || '|' || CASE d1.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.payment_rail END || '|' || CASE d2.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.from_financial_account_id WHEN 2 THEN '=' || r.to_financial_account_id END AS k FROM new_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d1 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1 UNION ALL SELECT 2) d2
          WHERE (d0.o <> 1 OR r.status IS NOT NULL) AND (d1.o <> 1 OR r.payment_rail IS NOT NULL) AND (d2.o <> 1 OR r.from_financial_account_id IS NOT NULL) AND (d2.o <> 2 OR r.to_financial_account_id IS NOT NULL) AND (d2.o <> 2 OR r.to_financial_account_id IS DISTINCT FROM r.from_financial_account_id)) y) x
   GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT 'transfers', program_id, k, pg_backend_pid() % 16, SUM(d) FROM (SELECT program_id, k, -1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.status END || '|' || CASE d1.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.payment_rail END || '|' || CASE d2.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.from_financial_account_id WHEN 2 THEN '=' || r.to_financial_account_id END AS k FROM old_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d1 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1 UNION ALL SELECT 2) d2
          WHERE (d0.o <> 1 OR r.status IS NOT NULL) AND (d1.o <> 1 OR r.payment_rail IS NOT NULL) AND (d2.o <> 1 OR r.from_financial_account_id IS NOT NULL) AND (d2.o <> 2 OR r.to_financial_account_id IS NOT NULL) AND (d2.o <> 2 OR r.to_financial_account_id IS DISTINCT FROM r.from_financial_account_id)) y) x
   GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      ELSE
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT 'transfers', program_id, k, pg_backend_pid() % 16, SUM(d) FROM (SELECT program_id, k, 1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.status END || '|' || CASE d1.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.payment_rail END || '|' || CASE d2.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.from_financial_account_id WHEN 2 THEN '=' || r.to_financial_account_id END AS k FROM new_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d1 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1 UNION ALL SELECT 2) d2
          WHERE (d0.o <> 1 OR r.status IS NOT NULL) AND (d1.o <> 1 OR r.payment_rail IS NOT NULL) AND (d2.o <> 1 OR r.from_financial_account_id IS NOT NULL) AND (d2.o <> 2 OR r.to_financial_account_id IS NOT NULL) AND (d2.o <> 2 OR r.to_financial_account_id IS DISTINCT FROM r.from_financial_account_id)) y UNION ALL SELECT program_id, k, -1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.status END || '|' || CASE d1.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.payment_rail END || '|' || CASE d2.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.from_financial_account_id WHEN 2 THEN '=' || r.to_financial_account_id END AS k FROM old_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d1 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1 UNION ALL SELECT 2) d2
          WHERE (d0.o <> 1 OR r.status IS NOT NULL) AND (d1.o <> 1 OR r.payment_rail IS NOT NULL) AND (d2.o <> 1 OR r.from_financial_account_id IS NOT NULL) AND (d2.o <> 2 OR r.to_financial_account_id IS NOT NULL) AND (d2.o <> 2 OR r.to_financial_account_id IS DISTINCT FROM r.from_financial_account_id)) y) x
   GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      END IF;
      RETURN NULL;
    END $function$;
