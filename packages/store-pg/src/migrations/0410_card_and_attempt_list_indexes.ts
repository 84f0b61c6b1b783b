import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The remaining filter and order combinations of the card, webhook-attempt and card-audit lists
 * as index ranges (docs/operations.md#volume); the same indexes as the other store's migration of
 * this id, built on the rows already there.
 *
 * - Cards by `updated_at` with `wallet_id` or `state` were a sort of the wallet's cards or a walk
 *   of the program's `by_update` index: two indexes, on the rarely written card row.
 * - An attempt's `status` (SUCCESS or FAILED) and an audit record's `action` (four) sit in their
 *   indexes between the equalities and the order column, so the list filtered by the value is one
 *   range and the list without it the merge of one range per value (MergedRanges.ts): attempts are
 *   written on every delivery, so the program's, the subscription's and the attempted_at indexes
 *   are replaced rather than joined by status-first twins, and the one index added is the
 *   subscription's by attempted_at (before: a sort of the subscription's attempts). Audit records
 *   (one per reveal) keep their two indexes, with the action in each.
 *
 * Numbered 0410, past every id already applied: the Migrator runs only ids above the latest one.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX issuing_cards_by_wallet_update ON issuing_cards (program_id, wallet_id, updated_at, id)`
  yield* sql`CREATE INDEX issuing_cards_by_state_update ON issuing_cards (program_id, state, updated_at, id)`

  yield* sql`DROP INDEX issuing_webhook_attempts_by_program`
  yield* sql`DROP INDEX issuing_webhook_attempts_by_attempt`
  yield* sql`DROP INDEX issuing_webhook_attempts_by_subscription`
  yield* sql`CREATE INDEX issuing_webhook_attempts_by_status ON issuing_webhook_attempts (program_id, status, created_at, id)`
  yield* sql`CREATE INDEX issuing_webhook_attempts_by_status_attempt
               ON issuing_webhook_attempts (program_id, status, attempted_at, id)`
  yield* sql`CREATE INDEX issuing_webhook_attempts_by_subscription
               ON issuing_webhook_attempts (program_id, subscription_id, status, created_at, id)`
  yield* sql`CREATE INDEX issuing_webhook_attempts_by_subscription_attempt
               ON issuing_webhook_attempts (program_id, subscription_id, status, attempted_at, id)`

  yield* sql`DROP INDEX issuing_card_audit_records_by_program`
  yield* sql`DROP INDEX issuing_card_audit_records_by_card`
  yield* sql`CREATE INDEX issuing_card_audit_records_by_action ON issuing_card_audit_records (program_id, action, created_at, id)`
  yield* sql`CREATE INDEX issuing_card_audit_records_by_card
               ON issuing_card_audit_records (program_id, card_id, action, created_at, id)`
})
