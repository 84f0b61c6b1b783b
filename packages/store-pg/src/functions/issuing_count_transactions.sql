-- Keeps the transactions' counts (docs/operations.md#exact-totals-at-any-size): keys `=status|`
-- and, with a card, `=status|=card`, status counted per value only (core/src/sql/ListCounts.ts
-- SUMMED_FILTERS), on the backend's shard. Skips while the posting function counts its own rows
-- (issuing.posting_counted, the triggers' WHEN).
-- Each key again in the row's UTC month, day and hour (issuing_count_periods, migration 0841).
CREATE OR REPLACE FUNCTION issuing_count_transactions()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
          SELECT pl.list, x.program_id, x.k, pg_backend_pid() % 16, SUM(x.d) FROM (SELECT program_id, k, at, 1 AS d FROM (SELECT r.program_id, '=' || r.status || '|' || c.v AS k, r.created_at AS at FROM new_rows r
            CROSS JOIN LATERAL (SELECT '' UNION ALL SELECT '=' || r.card_id WHERE r.card_id IS NOT NULL) c(v)) y) x
          CROSS JOIN LATERAL issuing_count_periods('transactions', x.at) pl(list)
          GROUP BY pl.list, x.program_id, x.k HAVING SUM(x.d) <> 0 ORDER BY pl.list, x.program_id, x.k
          ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
          SELECT pl.list, x.program_id, x.k, pg_backend_pid() % 16, SUM(x.d) FROM (SELECT program_id, k, at, -1 AS d FROM (SELECT r.program_id, '=' || r.status || '|' || c.v AS k, r.created_at AS at FROM old_rows r
            CROSS JOIN LATERAL (SELECT '' UNION ALL SELECT '=' || r.card_id WHERE r.card_id IS NOT NULL) c(v)) y) x
          CROSS JOIN LATERAL issuing_count_periods('transactions', x.at) pl(list)
          GROUP BY pl.list, x.program_id, x.k HAVING SUM(x.d) <> 0 ORDER BY pl.list, x.program_id, x.k
          ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      ELSE
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
          SELECT pl.list, x.program_id, x.k, pg_backend_pid() % 16, SUM(x.d) FROM (SELECT program_id, k, at, 1 AS d FROM (SELECT r.program_id, '=' || r.status || '|' || c.v AS k, r.created_at AS at FROM new_rows r
            CROSS JOIN LATERAL (SELECT '' UNION ALL SELECT '=' || r.card_id WHERE r.card_id IS NOT NULL) c(v)) y UNION ALL SELECT program_id, k, at, -1 AS d FROM (SELECT r.program_id, '=' || r.status || '|' || c.v AS k, r.created_at AS at FROM old_rows r
            CROSS JOIN LATERAL (SELECT '' UNION ALL SELECT '=' || r.card_id WHERE r.card_id IS NOT NULL) c(v)) y) x
          CROSS JOIN LATERAL issuing_count_periods('transactions', x.at) pl(list)
          GROUP BY pl.list, x.program_id, x.k HAVING SUM(x.d) <> 0 ORDER BY pl.list, x.program_id, x.k
          ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      END IF;
      RETURN NULL;
    END $function$;
