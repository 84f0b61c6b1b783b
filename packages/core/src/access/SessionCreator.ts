import type { SqlClient } from "@effect/sql"
import type { Fragment } from "@effect/sql/Statement"

/**
 * Whether the creator of a session row `s` still stands, read with the session on every use, in
 * every process (docs/card-data.md, docs/webhooks.md#the-endpoint-portal): `s.api_key_id` names
 * an API key — not revoked and holding `keyRight` — or, for a session made with an access token,
 * an OAuth grant — not revoked, its client not deleted, the key that consented to it not revoked.
 * Shared by the card display's embed sessions and the endpoint portal's sessions.
 */
export const liveCreator = (sql: SqlClient.SqlClient, keyRight: Fragment) => ({
  joins: sql`LEFT JOIN issuing_api_keys k ON k.id = s.api_key_id
        LEFT JOIN issuing_oauth_grants g ON g.id = s.api_key_id
        LEFT JOIN issuing_oauth_clients c ON c.id = g.oauth_client_id
        LEFT JOIN issuing_api_keys gk ON gk.id = g.api_key_id`,
  condition: sql`((k.id IS NOT NULL AND k.revoked_at IS NULL AND ${keyRight})
            OR (g.id IS NOT NULL AND g.revoked_at IS NULL AND c.deleted_at IS NULL AND gk.revoked_at IS NULL))`
})
