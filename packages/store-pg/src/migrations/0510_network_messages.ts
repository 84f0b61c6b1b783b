import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Card network messages (docs/network.md), the same columns and indexes as the other store's
 * migration of this id:
 * - a card transaction keeps the `merchant` object its messages sent (JSON text, as its card events
 *   are, so `issuing_post_card_message`'s jsonb_populate_record of the transaction fills it) and the
 *   `network_transaction_id` that links them, unique per program and found by it (the index leads
 *   with the id, so a message that names no card finds its transaction in one probe);
 * - an idempotency record keeps its own end of retention, `expires_at`: an Idempotency-Key is kept
 *   24 h, a `network_message_id` 35 days (docs/api.md#idempotency). Records written before this
 *   migration get created_at + 24 h; one an older release writes after it has none and is purged 24 h
 *   after its creation, found through a partial index of its own (the purge reads only what it
 *   deletes, never the 35 days of network messages).
 *
 * Numbered 0510, past every id already applied: the Migrator runs only ids above the latest one.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE issuing_transactions ADD COLUMN merchant text`
  yield* sql`ALTER TABLE issuing_transactions ADD COLUMN network_transaction_id text`
  yield* sql`CREATE UNIQUE INDEX issuing_transactions_by_network_id
    ON issuing_transactions (network_transaction_id, program_id) WHERE network_transaction_id IS NOT NULL`
  yield* sql`ALTER TABLE issuing_idempotency_keys ADD COLUMN expires_at timestamp with time zone`
  yield* sql`UPDATE issuing_idempotency_keys SET expires_at = created_at + interval '1 day'`
  yield* sql`CREATE INDEX issuing_idempotency_keys_by_expiry ON issuing_idempotency_keys (expires_at)`
  yield* sql`DROP INDEX issuing_idempotency_keys_by_created`
  yield* sql`CREATE INDEX issuing_idempotency_keys_unexpiring ON issuing_idempotency_keys (created_at) WHERE expires_at IS NULL`
})
