import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Every filter and order combination of the transfer and transaction lists as index ranges
 * (docs/operations.md#volume), paying for it with as few index entries per posting as possible:
 * - a transfer's status has 2 values and its rail 5, so one index per order on (program, status,
 *   rail, order column, id) serves the order with both filters as one range, and with one filter or
 *   none as the merge of one range per value of the others (at most 10): these three replace the
 *   program's indexes by status, rail, amount and updated_at (4 entries per transfer become 3);
 * - an account's transfers are the merge of its two sides' ranges, and per side one index per
 *   order on (account, status, order column, id), merged per status too: with a status or without,
 *   in every order (the account's by created_at of migration 0330 give way to these, so 4 entries
 *   more, the by-amount and by-updated_at ones);
 * - a transaction's status has 5 values: (program, status, amount, id) and (program, status,
 *   updated_at, id) replace the program's by amount and by updated_at (no entry more), and a card's
 *   transactions get (card, amount, id) and (card, updated_at, id), partial like its by-created_at
 *   one (a transfer's transaction, which has no card, writes none).
 * Built on the rows already there (writes wait meanwhile); the same indexes as the other store's
 * migration of this id.
 *
 * Numbered 0400, past every id already applied: the Migrator runs only ids above the latest one.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX issuing_transfers_by_status_rail
    ON issuing_transfers (program_id, status, payment_rail, created_at, id)`
  yield* sql`CREATE INDEX issuing_transfers_by_status_rail_amount
    ON issuing_transfers (program_id, status, payment_rail, amount_minor, id)`
  yield* sql`CREATE INDEX issuing_transfers_by_status_rail_update
    ON issuing_transfers (program_id, status, payment_rail, updated_at, id)`
  yield* sql`DROP INDEX issuing_transfers_by_status`
  yield* sql`DROP INDEX issuing_transfers_by_rail`
  yield* sql`DROP INDEX issuing_transfers_by_amount`
  yield* sql`DROP INDEX issuing_transfers_by_update`
  for (const side of ["from", "to"]) {
    const account = `${side}_financial_account_id`
    yield* sql.unsafe(`CREATE INDEX issuing_transfers_by_${side}_status ON issuing_transfers (${account}, status, created_at, id)`)
    yield* sql.unsafe(`CREATE INDEX issuing_transfers_by_${side}_status_amount ON issuing_transfers (${account}, status, amount_minor, id)`)
    yield* sql.unsafe(`CREATE INDEX issuing_transfers_by_${side}_status_update ON issuing_transfers (${account}, status, updated_at, id)`)
    yield* sql.unsafe(`DROP INDEX issuing_transfers_by_${side}`)
  }
  yield* sql`CREATE INDEX issuing_transactions_by_status_amount ON issuing_transactions (program_id, status, amount_minor, id)`
  yield* sql`CREATE INDEX issuing_transactions_by_status_update ON issuing_transactions (program_id, status, updated_at, id)`
  yield* sql`DROP INDEX issuing_transactions_by_amount`
  yield* sql`DROP INDEX issuing_transactions_by_update`
  yield* sql`CREATE INDEX issuing_transactions_by_card_amount
    ON issuing_transactions (card_id, amount_minor, id) WHERE card_id IS NOT NULL`
  yield* sql`CREATE INDEX issuing_transactions_by_card_update
    ON issuing_transactions (card_id, updated_at, id) WHERE card_id IS NOT NULL`
})
