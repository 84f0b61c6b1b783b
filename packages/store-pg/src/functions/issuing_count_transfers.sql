-- Keeps the transfers' counts (docs/operations.md#exact-totals-at-any-size): keys
-- `=status|=rail|` and `=status|=rail|=account` for each of its two accounts (which differ), status
-- and rail counted per value only (core/src/sql/ListCounts.ts SUMMED_FILTERS: a total without them
-- sums their values), on the backend's shard. Skips while a posting function counts its own rows.
-- Each key again in the row's UTC month, day and hour (issuing_count_periods, migration 0841).
CREATE OR REPLACE FUNCTION issuing_count_transfers()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
          SELECT pl.list, x.program_id, x.k, pg_backend_pid() % 16, SUM(x.d) FROM (SELECT program_id, k, at, 1 AS d FROM (SELECT r.program_id, '=' || r.status || '|=' || r.payment_rail || '|' || a.v AS k, r.created_at AS at FROM new_rows r
            CROSS JOIN LATERAL (SELECT '' UNION SELECT '=' || r.from_financial_account_id UNION SELECT '=' || r.to_financial_account_id) a(v)) y) x
          CROSS JOIN LATERAL issuing_count_periods('transfers', x.at) pl(list)
          GROUP BY pl.list, x.program_id, x.k HAVING SUM(x.d) <> 0 ORDER BY pl.list, x.program_id, x.k
          ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
          SELECT pl.list, x.program_id, x.k, pg_backend_pid() % 16, SUM(x.d) FROM (SELECT program_id, k, at, -1 AS d FROM (SELECT r.program_id, '=' || r.status || '|=' || r.payment_rail || '|' || a.v AS k, r.created_at AS at FROM old_rows r
            CROSS JOIN LATERAL (SELECT '' UNION SELECT '=' || r.from_financial_account_id UNION SELECT '=' || r.to_financial_account_id) a(v)) y) x
          CROSS JOIN LATERAL issuing_count_periods('transfers', x.at) pl(list)
          GROUP BY pl.list, x.program_id, x.k HAVING SUM(x.d) <> 0 ORDER BY pl.list, x.program_id, x.k
          ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      ELSE
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
          SELECT pl.list, x.program_id, x.k, pg_backend_pid() % 16, SUM(x.d) FROM (SELECT program_id, k, at, 1 AS d FROM (SELECT r.program_id, '=' || r.status || '|=' || r.payment_rail || '|' || a.v AS k, r.created_at AS at FROM new_rows r
            CROSS JOIN LATERAL (SELECT '' UNION SELECT '=' || r.from_financial_account_id UNION SELECT '=' || r.to_financial_account_id) a(v)) y UNION ALL SELECT program_id, k, at, -1 AS d FROM (SELECT r.program_id, '=' || r.status || '|=' || r.payment_rail || '|' || a.v AS k, r.created_at AS at FROM old_rows r
            CROSS JOIN LATERAL (SELECT '' UNION SELECT '=' || r.from_financial_account_id UNION SELECT '=' || r.to_financial_account_id) a(v)) y) x
          CROSS JOIN LATERAL issuing_count_periods('transfers', x.at) pl(list)
          GROUP BY pl.list, x.program_id, x.k HAVING SUM(x.d) <> 0 ORDER BY pl.list, x.program_id, x.k
          ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      END IF;
      RETURN NULL;
    END $function$;
