-- Keeps the financial accounts' counts (docs/operations.md#exact-totals-at-any-size): keys
-- `=kind|=wallet|=currency` with "any" ('') for each filter, on the backend's shard.
CREATE OR REPLACE FUNCTION issuing_count_financial_accounts()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT 'financial_accounts', program_id, k, pg_backend_pid() % 16, SUM(d) FROM (SELECT program_id, k, 1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.kind END || '|' || CASE d1.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.wallet_id END || '|' || CASE d2.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.currency END AS k FROM new_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d1 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d2
          WHERE (d0.o <> 1 OR r.kind IS NOT NULL) AND (d1.o <> 1 OR r.wallet_id IS NOT NULL) AND (d2.o <> 1 OR r.currency IS NOT NULL)) y) x
   GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT 'financial_accounts', program_id, k, pg_backend_pid() % 16, SUM(d) FROM (SELECT program_id, k, -1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.kind END || '|' || CASE d1.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.wallet_id END || '|' || CASE d2.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.currency END AS k FROM old_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d1 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d2
          WHERE (d0.o <> 1 OR r.kind IS NOT NULL) AND (d1.o <> 1 OR r.wallet_id IS NOT NULL) AND (d2.o <> 1 OR r.currency IS NOT NULL)) y) x
   GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      ELSE
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT 'financial_accounts', program_id, k, pg_backend_pid() % 16, SUM(d) FROM (SELECT program_id, k, 1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.kind END || '|' || CASE d1.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.wallet_id END || '|' || CASE d2.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.currency END AS k FROM new_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d1 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d2
          WHERE (d0.o <> 1 OR r.kind IS NOT NULL) AND (d1.o <> 1 OR r.wallet_id IS NOT NULL) AND (d2.o <> 1 OR r.currency IS NOT NULL)) y UNION ALL SELECT program_id, k, -1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.kind END || '|' || CASE d1.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.wallet_id END || '|' || CASE d2.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.currency END AS k FROM old_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d1 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d2
          WHERE (d0.o <> 1 OR r.kind IS NOT NULL) AND (d1.o <> 1 OR r.wallet_id IS NOT NULL) AND (d2.o <> 1 OR r.currency IS NOT NULL)) y) x
   GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      END IF;
      RETURN NULL;
    END $function$;
