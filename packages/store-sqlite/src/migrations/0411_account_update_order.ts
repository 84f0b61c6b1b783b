import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The financial-account list by `updated_at` as one index range (docs/operations.md#volume). An
 * account's updated_at is its principal balance row's, which every posting moves; the list sorted
 * the program's accounts — as many as its wallets — by it. The balance rows now carry their
 * account's program (written with the rows at the account's creation, backfilled here), and a
 * partial index of the principal rows, (program_id, updated_at, financial_account_id), is kept by
 * the posting's own balance update: no statement, trigger or posting change is added, only that
 * index's entry on each principal row a posting moves (the cost on the posting:
 * docs/ledger.md#the-account-order-index-on-postings). The same column and index as the other
 * store's migration of this id.
 *
 * Numbered 0411, past every id already applied: the Migrator runs only ids above the latest one.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE issuing_balances ADD COLUMN program_id TEXT`
  yield* sql`UPDATE issuing_balances SET program_id =
               (SELECT a.program_id FROM issuing_financial_accounts a WHERE a.id = issuing_balances.financial_account_id)`
  yield* sql`CREATE INDEX issuing_balances_principal_by_update
               ON issuing_balances (program_id, updated_at, financial_account_id) WHERE book = 'principal' AND slot = 0`
})
