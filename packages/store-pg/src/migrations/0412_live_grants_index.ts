import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * An organization's grants list (`GET /v1/oauth/grants`) shows its live grants only, so the
 * organization's index walked past every grant revoked since, newest first, to fill a page: a
 * walk bounded by how many were revoked. The index is now partial, of live grants alone, so the
 * page and its exact count are one range of it (docs/operations.md#volume). Replaced, not added:
 * no other query reads grants by organization, and a revocation now removes its grant's entry.
 * The same index as the other store's migration of this id.
 *
 * Numbered 0412, past every id already applied: the Migrator runs only ids above the latest one.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`DROP INDEX issuing_oauth_grants_by_organization`
  yield* sql`CREATE INDEX issuing_oauth_grants_live ON issuing_oauth_grants (organization_id, created_at, id) WHERE revoked_at IS NULL`
})
