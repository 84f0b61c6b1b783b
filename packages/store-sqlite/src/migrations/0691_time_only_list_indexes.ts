import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Lists that grow with money movement order by time only
 * (docs/ledger.md#endpoints-filters-and-order-fields): the indexes that served only their order by
 * amount go — the transfers' by (program | from account | to account, status, rail, amount), the
 * transactions' by (program | card, status, amount) and an account's principal entries by
 * (account, amount, book transfer). So does `issuing_book_transfers_by_program` (program,
 * posted_at, id): every list of book transfers is an account's (its principal entries' index) or a
 * transaction's (`issuing_book_transfers_by_transaction`); no route lists a program's. A book
 * transfer writes 7 index entries fewer (3 for its transfer, 1 for its transaction, 1 for itself, 2
 * for its principal entries), and the disk they took, 1.4 KB of the 9.2 KB a transfer took at
 * 1,000,000 on PostgreSQL, is freed (docs/operations.md#volume). The same indexes as the other
 * store's migration of this id.
 *
 * Numbered 0691, past every id already applied (0690 landed first): the Migrator runs only ids above
 * the latest one.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const index of [
    "issuing_transfers_by_status_rail_amount",
    "issuing_transfers_by_from_status_rail_amount",
    "issuing_transfers_by_to_status_rail_amount",
    "issuing_transactions_by_status_amount",
    "issuing_transactions_by_card_status_amount",
    "issuing_book_entries_principal_by_amount",
    "issuing_book_transfers_by_program"
  ])
    yield* sql`DROP INDEX ${sql(index)}`
})
