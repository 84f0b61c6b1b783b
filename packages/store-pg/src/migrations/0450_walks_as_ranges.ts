import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The lists that were still walks as index ranges (docs/operations.md#volume); the same indexes as
 * the other store's migration of this id, built on the rows already there (writes wait meanwhile).
 *
 * - An account's transfers with `payment_rail`: the rail read along the account's ranges walked
 *   every transfer of the account for a rare rail. Its six indexes (a side, status, order column,
 *   id) become (a side, status, rail, order column, id): the same entries per posting, and the list
 *   with any of its filters one range per side and status and rail left open, merged (20 without a
 *   filter).
 * - A card's transactions with `status`: its three partial indexes (card, order column, id) become
 *   (card, status, order column, id), the status's range or the merge of the five statuses'.
 * - A subscription's webhook attempts: a deep page steps through one index entry per attempt it
 *   skips, so the entry's width is the page's cost; the two subscription indexes lose the program
 *   (a subscription's attempts are all of its program, checked on the page's rows), 30 % fewer
 *   index pages, and one id less written per attempt.
 * - The accounts by updated_at with `currency`: the currency was read along the program's range of
 *   the principal balance rows (0411), a walk past every account of the other currencies. The
 *   balance row holds its account's currency, so that index becomes (program, currency,
 *   updated_at, account): the same entry per balance row a posting moves, a currency's accounts
 *   one range, and the program's the merge of one range per currency it holds.
 * - An organization's OAuth clients: its index of every client walked past the deleted ones; two
 *   partial indexes of live clients (by created_at and by name) replace it, as 0412 did for grants.
 *
 * Numbered 0450, past every id already applied: the Migrator runs only ids above the latest one.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const side of ["from", "to"]) {
    const account = `${side}_financial_account_id`
    for (const [suffix, column] of [
      ["", "created_at"],
      ["_amount", "amount_minor"],
      ["_update", "updated_at"]
    ] as const) {
      yield* sql.unsafe(`DROP INDEX issuing_transfers_by_${side}_status${suffix}`)
      yield* sql.unsafe(
        `CREATE INDEX issuing_transfers_by_${side}_status_rail${suffix} ON issuing_transfers (${account}, status, payment_rail, ${column}, id)`
      )
    }
  }
  for (const [suffix, column] of [
    ["", "created_at"],
    ["_amount", "amount_minor"],
    ["_update", "updated_at"]
  ] as const) {
    yield* sql.unsafe(`DROP INDEX issuing_transactions_by_card${suffix}`)
    yield* sql.unsafe(
      `CREATE INDEX issuing_transactions_by_card_status${suffix} ON issuing_transactions (card_id, status, ${column}, id) WHERE card_id IS NOT NULL`
    )
  }
  yield* sql`DROP INDEX issuing_webhook_attempts_by_subscription`
  yield* sql`DROP INDEX issuing_webhook_attempts_by_subscription_attempt`
  yield* sql`CREATE INDEX issuing_webhook_attempts_by_subscription ON issuing_webhook_attempts (subscription_id, status, created_at, id)`
  yield* sql`CREATE INDEX issuing_webhook_attempts_by_subscription_attempt
               ON issuing_webhook_attempts (subscription_id, status, attempted_at, id)`
  yield* sql`DROP INDEX issuing_balances_principal_by_update`
  yield* sql`CREATE INDEX issuing_balances_principal_by_currency_update
               ON issuing_balances (program_id, currency, updated_at, financial_account_id) WHERE book = 'principal' AND slot = 0`
  yield* sql`DROP INDEX issuing_oauth_clients_by_organization`
  yield* sql`CREATE INDEX issuing_oauth_clients_live ON issuing_oauth_clients (organization_id, created_at, id) WHERE deleted_at IS NULL`
  yield* sql`CREATE INDEX issuing_oauth_clients_live_by_name ON issuing_oauth_clients (organization_id, name, id) WHERE deleted_at IS NULL`
})
