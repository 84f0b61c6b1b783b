import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Counting triggers that do not wait for each other (docs/operations.md#exact-totals-at-any-size).
 *
 * Migration 0210's triggers add to the shard `pg_backend_pid() % 16` of a key's count. Two
 * backends whose pids agree modulo 16 share every counter row (among 10 pooled connections with
 * random pids, such a pair exists 97 times in 100); the second writer's upsert then waits on the first's row
 * until the first transaction ends — its WAL flush included. Events were the hot case: at 200 lone
 * emits a second, the server logged up to 59 such waits a run (up to ~30 ms each at load 4–8), every one inside
 * an emitting commit (docs/webhooks.md#the-emitting-commit-on-postgresql).
 *
 * `issuing_count_shard(list)` instead takes a shard nobody else is counting into: it tries the
 * transaction-level advisory locks of the list's 16 shards, starting at the backend's own, and
 * returns the first it gets (held, like a row lock, until the transaction ends; asked again in the
 * same transaction it gets the same one back, advisory locks being re-entrant). Only when all 16
 * are taken does it fall back to the backend's own shard and wait there, as before. `pg_try_…`
 * never waits, so the locks add no deadlock. The counts themselves are unchanged: any shard of a
 * key is as good as another, and reads sum them all.
 *
 * The events' and webhook attempts' triggers take their shard this way (the lists written by an
 * emit and by the delivery worker's recorder); the other lists keep 0210's choice. The posting
 * function `issuing_post_transfer` counts its own events on its backend's shard (0320) without the
 * advisory lock: such a posting may still wait for, or be waited for by, an emit on that one
 * shard, as before. The advisory keys are (hashtext('issuing_list_counts.' || list), shard).
 *
 * Numbered 0370, past every id already applied: the Migrator runs only ids above the latest one.
 * PostgreSQL only: SQLite has one writer at a time and no shards to wait on.
 */

const SHARDS = 16

/**
 * 0210's counting function of the events, its shard chosen by \`issuing_count_shard('events')\`
 * instead of \`pg_backend_pid() % 16\`: the text this migration made (it patched the body 0210
 * had generated), written out whole.
 */
const COUNT_EVENTS = `CREATE OR REPLACE FUNCTION issuing_count_events() RETURNS trigger LANGUAGE plpgsql AS $body$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT 'events', program_id, k, issuing_count_shard('events'), SUM(d) FROM (SELECT program_id, k, 1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.type END AS k FROM new_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0
          WHERE (d0.o <> 1 OR r.type IS NOT NULL)) y) x
   GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT 'events', program_id, k, issuing_count_shard('events'), SUM(d) FROM (SELECT program_id, k, -1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.type END AS k FROM old_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0
          WHERE (d0.o <> 1 OR r.type IS NOT NULL)) y) x
   GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      ELSE
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT 'events', program_id, k, issuing_count_shard('events'), SUM(d) FROM (SELECT program_id, k, 1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.type END AS k FROM new_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0
          WHERE (d0.o <> 1 OR r.type IS NOT NULL)) y UNION ALL SELECT program_id, k, -1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.type END AS k FROM old_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0
          WHERE (d0.o <> 1 OR r.type IS NOT NULL)) y) x
   GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      END IF;
      RETURN NULL;
    END $body$`

/** 0210's counting function of the webhook attempts, its shard chosen the same way (\`'webhook_attempts'\`). */
const COUNT_WEBHOOK_ATTEMPTS = `CREATE OR REPLACE FUNCTION issuing_count_webhook_attempts() RETURNS trigger LANGUAGE plpgsql AS $body$
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
    END $body$`

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`CREATE FUNCTION issuing_count_shard(p_list text) RETURNS integer LANGUAGE plpgsql AS $$
    DECLARE
      v_home integer := pg_backend_pid() % ${SHARDS};
      v_space integer := hashtext('issuing_list_counts.' || p_list);
    BEGIN
      FOR i IN 0..${SHARDS - 1} LOOP
        IF pg_try_advisory_xact_lock(v_space, (v_home + i) % ${SHARDS}) THEN
          RETURN (v_home + i) % ${SHARDS};
        END IF;
      END LOOP;
      RETURN v_home;
    END $$`)
  yield* sql.unsafe(COUNT_EVENTS)
  yield* sql.unsafe(COUNT_WEBHOOK_ATTEMPTS)
})
