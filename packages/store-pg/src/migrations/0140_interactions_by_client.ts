import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The pending OAuth interactions of a client, counted on every authorization request to cap them
 * (docs/oauth.md#the-authorization-request).
 *
 * Numbered 0140, past every id already applied: the Migrator runs only ids above the latest one.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX issuing_oauth_interactions_by_client ON issuing_oauth_interactions (oauth_client_id, status, expires_at)`
})
