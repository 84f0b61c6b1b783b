-- Keeps the webhook attempts' counts (docs/operations.md#exact-totals-at-any-size), keys
-- `=subscription|=status`, on a shard nobody else is counting into (issuing_count_shard): the
-- delivery workers record attempts concurrently.
CREATE OR REPLACE FUNCTION issuing_count_webhook_attempts()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT 'webhook_attempts', program_id, k, issuing_count_shard('webhook_attempts'), SUM(d) FROM (SELECT program_id, k, 1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.subscription_id END || '|' || CASE d1.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.status END AS k FROM new_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d1
          WHERE (d0.o <> 1 OR r.subscription_id IS NOT NULL) AND (d1.o <> 1 OR r.status IS NOT NULL)) y) x
   GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT 'webhook_attempts', program_id, k, issuing_count_shard('webhook_attempts'), SUM(d) FROM (SELECT program_id, k, -1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.subscription_id END || '|' || CASE d1.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.status END AS k FROM old_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d1
          WHERE (d0.o <> 1 OR r.subscription_id IS NOT NULL) AND (d1.o <> 1 OR r.status IS NOT NULL)) y) x
   GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      ELSE
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT 'webhook_attempts', program_id, k, issuing_count_shard('webhook_attempts'), SUM(d) FROM (SELECT program_id, k, 1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.subscription_id END || '|' || CASE d1.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.status END AS k FROM new_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d1
          WHERE (d0.o <> 1 OR r.subscription_id IS NOT NULL) AND (d1.o <> 1 OR r.status IS NOT NULL)) y UNION ALL SELECT program_id, k, -1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.subscription_id END || '|' || CASE d1.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.status END AS k FROM old_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d1
          WHERE (d0.o <> 1 OR r.subscription_id IS NOT NULL) AND (d1.o <> 1 OR r.status IS NOT NULL)) y) x
   GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      END IF;
      RETURN NULL;
    END $function$;
