import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * `GET /v1/wallets?holder_name=` and `?holder_email=` (docs/ledger.md#finding-a-wallet): a holder's
 * wallets found by the exact name or email, letter case aside. Each index leads with the program
 * and the lowered value, then the newest-first order, so a search is one index range of the
 * matches whatever the size of the program, in its order, and its count a count of that range.
 * The same indexes as the other store's migration of this id.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX issuing_wallets_by_holder_name ON issuing_wallets (program_id, lower(holder_name), created_at, id)`
  yield* sql`CREATE INDEX issuing_wallets_by_holder_email ON issuing_wallets (program_id, lower(holder_email), created_at, id)`
})
