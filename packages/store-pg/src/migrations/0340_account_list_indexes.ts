import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The financial-account list's filters as index ranges (docs/operations.md#volume): a program has
 * an account per wallet, so at a million wallets `?wallet_id=`, `?kind=settlement` or a rare
 * `?currency=` walked the program's index to find a handful of rows. Accounts are written once, at
 * a wallet's creation, so these indexes cost no posting anything. Built on the rows already there;
 * the same indexes as the other store's migration of this id.
 *
 * Numbered 0340, past every id already applied: the Migrator runs only ids above the latest one.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX issuing_financial_accounts_by_wallet ON issuing_financial_accounts (wallet_id)`
  yield* sql`CREATE INDEX issuing_financial_accounts_by_kind ON issuing_financial_accounts (program_id, kind, created_at, id)`
  yield* sql`CREATE INDEX issuing_financial_accounts_by_currency ON issuing_financial_accounts (program_id, currency, created_at, id)`
})
