import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The transfer list's filters as index ranges (docs/operations.md#volume): an account's transfers
 * are the merge of the ones it sends and the ones it receives, each a range of its own index
 * (account, created_at, id) — as one `from = ? OR to = ?` over the program's index, a rarely used
 * wallet's page walked the whole program; and `payment_rail` gets the range a status has
 * (program, rail, created_at, id), so a rare rail's page is no walk either. A posting writes 3 more
 * index entries per transfer (measured in docs/operations.md#volume). Built on the rows already
 * there; the same indexes as the other store's migration of this id.
 *
 * Numbered 0330, past every id already applied: the Migrator runs only ids above the latest one.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX issuing_transfers_by_from ON issuing_transfers (from_financial_account_id, created_at, id)`
  yield* sql`CREATE INDEX issuing_transfers_by_to ON issuing_transfers (to_financial_account_id, created_at, id)`
  yield* sql`CREATE INDEX issuing_transfers_by_rail ON issuing_transfers (program_id, payment_rail, created_at, id)`
})
