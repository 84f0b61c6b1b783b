import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The API key that consented to each OAuth grant (docs/oauth.md#incident-response): revoking the
 * key revokes its grants, and a grant whose key is revoked never authenticates. Null for grants
 * made before this migration, whose consenting key was not recorded.
 *
 * Numbered 0130, past every id already applied: the Migrator runs only ids above the latest one.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE issuing_oauth_grants ADD COLUMN api_key_id TEXT REFERENCES issuing_api_keys (id)`
  yield* sql`CREATE INDEX issuing_oauth_grants_by_api_key ON issuing_oauth_grants (api_key_id)`
  yield* sql`CREATE INDEX issuing_oauth_grants_by_organization ON issuing_oauth_grants (organization_id, created_at, id)`
})
