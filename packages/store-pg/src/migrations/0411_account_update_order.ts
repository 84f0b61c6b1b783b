import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The financial-account list by `updated_at` as one index range (docs/operations.md#volume). An
 * account's updated_at is its principal balance row's (slot 0's), which every posting moves; the
 * list sorted the program's accounts — as many as its wallets — by it. The balance rows written at
 * an account's creation now carry its program (backfilled here; a settlement slot a posting adds
 * later leaves it null, outside the index), and a partial index of the principal slot-0 rows,
 * (program_id, updated_at, financial_account_id), is kept by the posting's own balance upsert: no
 * statement, trigger or posting function is changed. Its price is the index itself: balance
 * updates that change updated_at are no longer HOT (docs/ledger.md#the-account-order-index-on-postings
 * has the measured cost on the posting). The same column and index as the other store's migration
 * of this id.
 *
 * Numbered 0411, past every id already applied: the Migrator runs only ids above the latest one.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE issuing_balances ADD COLUMN program_id text`
  yield* sql`UPDATE issuing_balances b SET program_id = a.program_id
               FROM issuing_financial_accounts a WHERE a.id = b.financial_account_id AND b.slot = 0`
  yield* sql`CREATE INDEX issuing_balances_principal_by_update
               ON issuing_balances (program_id, updated_at, financial_account_id) WHERE book = 'principal' AND slot = 0`
})
