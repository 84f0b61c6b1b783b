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
 *   which keeps its meaning and its rows): 0210's three triggers of issuing_wallets are made again
 *   as 0210 makes them for a list of one filter (the cards' are of two), written out here. The
 *   update trigger fires when the program or the tag changes and moves one from the old key to the
 *   new. No wallet had a tag before this migration: there is no `=tag` count to backfill.
 */

/** The (program_id, k) of the row `r`: key '' always, `=tag` when it has one. */
const keysOf = (row: "NEW" | "OLD") =>
  `SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.tag END AS k FROM (SELECT ${row}.program_id AS program_id, ${row}.tag AS tag) r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0
          WHERE (d0.o <> 1 OR r.tag IS NOT NULL)`

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE issuing_wallets ADD COLUMN tag TEXT`
  yield* sql`CREATE INDEX issuing_wallets_by_tag ON issuing_wallets (program_id, tag, created_at, id) WHERE tag IS NOT NULL`
  yield* sql`CREATE INDEX issuing_wallets_by_tag_update ON issuing_wallets (program_id, tag, updated_at, id) WHERE tag IS NOT NULL`
  for (const trigger of ["insert", "delete", "update"]) yield* sql.unsafe(`DROP TRIGGER issuing_count_wallets_${trigger}`)
  yield* sql.unsafe(`CREATE TRIGGER issuing_count_wallets_insert AFTER INSERT ON issuing_wallets
      BEGIN INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT 'wallets', program_id, k, 0, 1 FROM (${keysOf("NEW")}) x WHERE true
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n; END`)
  yield* sql.unsafe(`CREATE TRIGGER issuing_count_wallets_delete AFTER DELETE ON issuing_wallets
      BEGIN INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT 'wallets', program_id, k, 0, -1 FROM (${keysOf("OLD")}) x WHERE true
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n; END`)
  yield* sql.unsafe(`CREATE TRIGGER issuing_count_wallets_update AFTER UPDATE OF program_id, tag ON issuing_wallets
      WHEN OLD.program_id IS NOT NEW.program_id OR OLD.tag IS NOT NEW.tag
      BEGIN INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT 'wallets', program_id, k, 0, SUM(d) FROM (SELECT program_id, k, 1 AS d FROM (${keysOf("NEW")}) y UNION ALL SELECT program_id, k, -1 AS d FROM (${keysOf("OLD")}) y) x
   GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n; END`)
})
