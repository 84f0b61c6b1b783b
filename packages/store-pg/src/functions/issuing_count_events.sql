-- Keeps the events' counts (docs/operations.md#exact-totals-at-any-size), key `=type` only (the
-- program's total sums its types), on a shard nobody else is counting into (issuing_count_shard):
-- emits were the hot case of two backends sharing a shard and waiting on each other's counter row
-- until commit.
CREATE OR REPLACE FUNCTION issuing_count_events()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
          SELECT 'events', program_id, k, issuing_count_shard('events'), SUM(d) FROM (SELECT program_id, k, 1 AS d FROM (SELECT r.program_id, '=' || r.type AS k FROM new_rows r) y) x
          GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
          ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
          SELECT 'events', program_id, k, issuing_count_shard('events'), SUM(d) FROM (SELECT program_id, k, -1 AS d FROM (SELECT r.program_id, '=' || r.type AS k FROM old_rows r) y) x
          GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
          ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      ELSE
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
          SELECT 'events', program_id, k, issuing_count_shard('events'), SUM(d) FROM (SELECT program_id, k, 1 AS d FROM (SELECT r.program_id, '=' || r.type AS k FROM new_rows r) y UNION ALL SELECT program_id, k, -1 AS d FROM (SELECT r.program_id, '=' || r.type AS k FROM old_rows r) y) x
          GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
          ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      END IF;
      RETURN NULL;
    END $function$;
