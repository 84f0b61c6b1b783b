import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Card-data access (docs/card-data.md): the `card_display` right of API keys (true for existing
 * admin and developer keys, false for viewers, which cannot create embed sessions anyway), the
 * client IP of each card audit record, and an index by key for the search-by-pan budget and miss
 * limit, which count a key's recent search_by_pan records.
 *
 * Numbered 0050, past every id already applied: the Migrator runs only ids above the latest one.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE issuing_api_keys ADD COLUMN card_display INTEGER NOT NULL DEFAULT 1`
  yield* sql`UPDATE issuing_api_keys SET card_display = 0 WHERE role = 'viewer'`
  yield* sql`ALTER TABLE issuing_card_audit_records ADD COLUMN client_ip TEXT`
  yield* sql`CREATE INDEX issuing_card_audit_records_by_key
    ON issuing_card_audit_records (api_key_id, action, created_at)`
})
