import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A wallet's `tag`: the program's customer it belongs to (docs/webhooks.md#customers-and-tags).
 * Every event about the wallet carries it, and a tagged webhook subscription receives only the
 * events of its tag. The same column, indexes and counts as the other store's migration of this id.
 *
 * - The partial indexes serve `GET /v1/wallets?tag=` in both of its orders, (tag, created_at, id)
 *   and (tag, updated_at, id), as ranges (docs/operations.md#volume); the first also serves the
 *   events' tagging, which asks whether a program has any tagged wallet at all before it looks
 *   further. Untagged wallets (NULL) are in neither: they are never listed by tag.
 * - The wallets' count gains the filter `tag` (key `=tag`, beside the key `''` of every wallet,
 *   which keeps its meaning and its rows): `issuing_count_wallets` is 0210's with one dimension, the
 *   shape of `issuing_count_cards`' two. Its update trigger is per statement and not limited to
 *   some columns, so a re-tag moves one from the old tag's key to the new one's, and an update that
 *   leaves the tag as it is nets to nothing (`HAVING SUM(d) <> 0`). No wallet had a tag before
 *   this migration: there is no `=tag` count to backfill.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE issuing_wallets ADD COLUMN tag TEXT`
  yield* sql`CREATE INDEX issuing_wallets_by_tag ON issuing_wallets (program_id, tag, created_at, id) WHERE tag IS NOT NULL`
  yield* sql`CREATE INDEX issuing_wallets_by_tag_update ON issuing_wallets (program_id, tag, updated_at, id) WHERE tag IS NOT NULL`
  yield* sql.unsafe(`CREATE OR REPLACE FUNCTION issuing_count_wallets() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT 'wallets', program_id, k, pg_backend_pid() % 16, SUM(d) FROM (SELECT program_id, k, 1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.tag END AS k FROM new_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0
          WHERE (d0.o <> 1 OR r.tag IS NOT NULL)) y) x
   GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT 'wallets', program_id, k, pg_backend_pid() % 16, SUM(d) FROM (SELECT program_id, k, -1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.tag END AS k FROM old_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0
          WHERE (d0.o <> 1 OR r.tag IS NOT NULL)) y) x
   GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      ELSE
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT 'wallets', program_id, k, pg_backend_pid() % 16, SUM(d) FROM (SELECT program_id, k, 1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.tag END AS k FROM new_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0
          WHERE (d0.o <> 1 OR r.tag IS NOT NULL)) y UNION ALL SELECT program_id, k, -1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.tag END AS k FROM old_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0
          WHERE (d0.o <> 1 OR r.tag IS NOT NULL)) y) x
   GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      END IF;
      RETURN NULL;
    END $$`)
})
