-- Keeps the transfers' counts (docs/operations.md#exact-totals-at-any-size): keys
-- `=status|=rail|` and `=status|=rail|=account` for each of its two accounts (which differ), status
-- and rail counted per value only (core/src/sql/ListCounts.ts SUMMED_FILTERS: a total without them
-- sums their values), on the backend's shard. Skips while a posting function counts its own rows.
CREATE OR REPLACE FUNCTION issuing_count_transfers()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
          SELECT 'transfers', program_id, k, pg_backend_pid() % 16, SUM(d) FROM (SELECT program_id, k, 1 AS d FROM (SELECT r.program_id, '=' || r.status || '|=' || r.payment_rail || '|' || a.v AS k FROM new_rows r
            CROSS JOIN LATERAL (SELECT '' UNION SELECT '=' || r.from_financial_account_id UNION SELECT '=' || r.to_financial_account_id) a(v)) y) x
          GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
          ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
          SELECT 'transfers', program_id, k, pg_backend_pid() % 16, SUM(d) FROM (SELECT program_id, k, -1 AS d FROM (SELECT r.program_id, '=' || r.status || '|=' || r.payment_rail || '|' || a.v AS k FROM old_rows r
            CROSS JOIN LATERAL (SELECT '' UNION SELECT '=' || r.from_financial_account_id UNION SELECT '=' || r.to_financial_account_id) a(v)) y) x
          GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
          ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      ELSE
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
          SELECT 'transfers', program_id, k, pg_backend_pid() % 16, SUM(d) FROM (SELECT program_id, k, 1 AS d FROM (SELECT r.program_id, '=' || r.status || '|=' || r.payment_rail || '|' || a.v AS k FROM new_rows r
            CROSS JOIN LATERAL (SELECT '' UNION SELECT '=' || r.from_financial_account_id UNION SELECT '=' || r.to_financial_account_id) a(v)) y UNION ALL SELECT program_id, k, -1 AS d FROM (SELECT r.program_id, '=' || r.status || '|=' || r.payment_rail || '|' || a.v AS k FROM old_rows r
            CROSS JOIN LATERAL (SELECT '' UNION SELECT '=' || r.from_financial_account_id UNION SELECT '=' || r.to_financial_account_id) a(v)) y) x
          GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
          ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      END IF;
      RETURN NULL;
    END $function$;
