import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Indexes for the lists at volume (docs/operations.md#volume): for a list's filter and order, an
 * index led by its equality filters (program, then the filter) and then the order column and id,
 * so page 1, a page after `starting_after` and a deep OFFSET page are each a range of one index,
 * never a sort of the whole filtered set. Only orders and filters the lists take, on the tables a
 * transfer writes only where a list needs one (each index is paid by every transfer):
 * transfers and transactions by status, by amount and by updated_at; webhook attempts by
 * attempted_at, and their by-event and by-subscription indexes end on id now (the ones they
 * replace are dropped); cards by state and by updated_at, wallets by updated_at. The PostgreSQL store
 * has the same indexes under the same migration id.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX issuing_transfers_by_status ON issuing_transfers (program_id, status, created_at, id)`
  yield* sql`CREATE INDEX issuing_transfers_by_amount ON issuing_transfers (program_id, amount_minor, id)`
  yield* sql`CREATE INDEX issuing_transfers_by_update ON issuing_transfers (program_id, updated_at, id)`
  yield* sql`CREATE INDEX issuing_transactions_by_status ON issuing_transactions (program_id, status, created_at, id)`
  yield* sql`CREATE INDEX issuing_transactions_by_amount ON issuing_transactions (program_id, amount_minor, id)`
  yield* sql`CREATE INDEX issuing_transactions_by_update ON issuing_transactions (program_id, updated_at, id)`
  yield* sql`DROP INDEX issuing_webhook_attempts_by_event`
  yield* sql`CREATE INDEX issuing_webhook_attempts_by_event ON issuing_webhook_attempts (program_id, event_id, created_at, id)`
  yield* sql`DROP INDEX issuing_webhook_attempts_by_subscription`
  yield* sql`CREATE INDEX issuing_webhook_attempts_by_subscription ON issuing_webhook_attempts (program_id, subscription_id, created_at, id)`
  yield* sql`CREATE INDEX issuing_webhook_attempts_by_attempt ON issuing_webhook_attempts (program_id, attempted_at, id)`
  yield* sql`CREATE INDEX issuing_cards_by_state ON issuing_cards (program_id, state, created_at, id)`
  yield* sql`CREATE INDEX issuing_cards_by_update ON issuing_cards (program_id, updated_at, id)`
  yield* sql`CREATE INDEX issuing_wallets_by_update ON issuing_wallets (program_id, updated_at, id)`
})
