import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The program's transfer and transaction lists are read as the merge of their status (and rail)
 * ranges in every order (docs/decisions.md "The program's lists as merged status ranges"): without
 * a filter, by created_at, the transfers are the 9 (status, rail) ranges of
 * `issuing_transfers_by_status_rail` merged and the transactions the 5 status ranges of
 * `issuing_transactions_by_status`, as `order_by=updated_at` already read them. The program's own
 * (program_id, created_at, id) indexes of the two tables serve nothing else, so they go: a transfer
 * writes two index entries fewer (docs/operations.md#disk-per-transfer). The same indexes as the
 * other store's migration of this id.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const index of ["issuing_transfers_by_program", "issuing_transactions_by_program"]) yield* sql`DROP INDEX ${sql(index)}`
})
