import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A wallet's `tag`: the program's customer it belongs to (docs/webhooks.md#customers-and-tags).
 * Every event about the wallet carries it, and a tagged webhook subscription receives only the
 * events of its tag. The partial index serves `GET /v1/wallets?tag=` and the events' tagging,
 * which asks whether a program has any tagged wallet at all before it looks further. The same
 * column and index as the other store's migration of this id.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE issuing_wallets ADD COLUMN tag TEXT`
  yield* sql`CREATE INDEX issuing_wallets_by_tag ON issuing_wallets (program_id, tag, created_at, id) WHERE tag IS NOT NULL`
})
