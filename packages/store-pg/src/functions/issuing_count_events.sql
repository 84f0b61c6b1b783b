-- Keeps the events' counts (docs/operations.md#exact-totals-at-any-size), key `=type` only (the
-- program's total sums its types), on a shard nobody else is counting into (issuing_count_shard):
-- emits were the hot case of two backends sharing a shard and waiting on each other's counter row
-- until commit.
-- Each key again in the row's UTC month, day and hour (issuing_count_periods, migration 0841).
CREATE OR REPLACE FUNCTION issuing_count_events()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
          SELECT pl.list, x.program_id, x.k, issuing_count_shard('events'), SUM(x.d) FROM (SELECT program_id, k, at, 1 AS d FROM (SELECT r.program_id, '=' || r.type AS k, r.created_at AS at FROM new_rows r) y) x
          CROSS JOIN LATERAL issuing_count_periods('events', x.at) pl(list)
          GROUP BY pl.list, x.program_id, x.k HAVING SUM(x.d) <> 0 ORDER BY pl.list, x.program_id, x.k
          ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
          SELECT pl.list, x.program_id, x.k, issuing_count_shard('events'), SUM(x.d) FROM (SELECT program_id, k, at, -1 AS d FROM (SELECT r.program_id, '=' || r.type AS k, r.created_at AS at FROM old_rows r) y) x
          CROSS JOIN LATERAL issuing_count_periods('events', x.at) pl(list)
          GROUP BY pl.list, x.program_id, x.k HAVING SUM(x.d) <> 0 ORDER BY pl.list, x.program_id, x.k
          ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      ELSE
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
          SELECT pl.list, x.program_id, x.k, issuing_count_shard('events'), SUM(x.d) FROM (SELECT program_id, k, at, 1 AS d FROM (SELECT r.program_id, '=' || r.type AS k, r.created_at AS at FROM new_rows r) y UNION ALL SELECT program_id, k, at, -1 AS d FROM (SELECT r.program_id, '=' || r.type AS k, r.created_at AS at FROM old_rows r) y) x
          CROSS JOIN LATERAL issuing_count_periods('events', x.at) pl(list)
          GROUP BY pl.list, x.program_id, x.k HAVING SUM(x.d) <> 0 ORDER BY pl.list, x.program_id, x.k
          ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      END IF;
      RETURN NULL;
    END $function$;
