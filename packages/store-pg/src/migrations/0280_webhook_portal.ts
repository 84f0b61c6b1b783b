import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The endpoint portal (docs/webhooks.md#the-endpoint-portal): a subscription's optional `tag` (the
 * customer it belongs to), indexed for `GET /v1/webhook-subscriptions?tag=`, and the portal
 * sessions — only each token's SHA-256 is stored, like embed sessions'. `allowed_event_types` is a
 * JSON array of event type names. No foreign key to the creating key: `api_key_id` holds an
 * OAuth grant's id for a session created with an access token (as embed sessions do).
 *
 * Numbered 0280, past every id already applied: the Migrator runs only ids above the latest one.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE issuing_webhook_subscriptions ADD COLUMN tag TEXT`
  yield* sql`CREATE INDEX issuing_webhook_subscriptions_by_tag
              ON issuing_webhook_subscriptions (program_id, tag, created_at, id)`
  yield* sql`CREATE TABLE issuing_webhook_portal_sessions (
    id TEXT PRIMARY KEY,
    program_id TEXT NOT NULL REFERENCES issuing_programs (id),
    token_hash TEXT NOT NULL UNIQUE,
    api_key_id TEXT NOT NULL,
    scope_tag TEXT NOT NULL,
    allowed_event_types TEXT NOT NULL,
    created_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone NOT NULL
  )`
  yield* sql`CREATE INDEX issuing_webhook_portal_sessions_by_expiry ON issuing_webhook_portal_sessions (expires_at)`
})
