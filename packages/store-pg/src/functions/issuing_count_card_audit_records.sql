-- Keeps the card audit records' counts (docs/operations.md#exact-totals-at-any-size): per
-- statement, one upsert of every (program, key) its rows add or remove, keys `=card|=action` with
-- "any" ('') for each filter, on the backend's shard.
CREATE OR REPLACE FUNCTION issuing_count_card_audit_records()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT 'card_audit_records', program_id, k, pg_backend_pid() % 16, SUM(d) FROM (SELECT program_id, k, 1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.card_id END || '|' || CASE d1.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.action END AS k FROM new_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d1
          WHERE (d0.o <> 1 OR r.card_id IS NOT NULL) AND (d1.o <> 1 OR r.action IS NOT NULL)) y) x
   GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT 'card_audit_records', program_id, k, pg_backend_pid() % 16, SUM(d) FROM (SELECT program_id, k, -1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.card_id END || '|' || CASE d1.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.action END AS k FROM old_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d1
          WHERE (d0.o <> 1 OR r.card_id IS NOT NULL) AND (d1.o <> 1 OR r.action IS NOT NULL)) y) x
   GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      ELSE
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT 'card_audit_records', program_id, k, pg_backend_pid() % 16, SUM(d) FROM (SELECT program_id, k, 1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.card_id END || '|' || CASE d1.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.action END AS k FROM new_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d1
          WHERE (d0.o <> 1 OR r.card_id IS NOT NULL) AND (d1.o <> 1 OR r.action IS NOT NULL)) y UNION ALL SELECT program_id, k, -1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.card_id END || '|' || CASE d1.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.action END AS k FROM old_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d1
          WHERE (d0.o <> 1 OR r.card_id IS NOT NULL) AND (d1.o <> 1 OR r.action IS NOT NULL)) y) x
   GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      END IF;
      RETURN NULL;
    END $function$;
