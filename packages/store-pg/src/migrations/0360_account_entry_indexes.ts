import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * An account's book transfers by an index range in every order they list by
 * (docs/ledger.md#an-accounts-book-transfers). Every account a book transfer moves has one entry in
 * each book, so the account's principal entries alone name its book transfers: the index of all its
 * entries by (account, book, posted_at, book transfer) gives way to two partial indexes of the
 * principal entries, by (account, posted_at, book transfer) and by (account, amount, book transfer)
 * — by amount the list sorted all of the account's entries (2.5 s for page 1 of an account of
 * 500,000 book transfers). A posting adds 2 + 2 index entries instead of 4. Built on the rows already
 * there (writes wait meanwhile); the same indexes as the other store's migration of this id.
 *
 * Numbered 0360, past every id already applied: the Migrator runs only ids above the latest one.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX issuing_book_entries_principal_by_posted_at
    ON issuing_book_entries (financial_account_id, posted_at, book_transfer_id) WHERE book = 'principal'`
  yield* sql`CREATE INDEX issuing_book_entries_principal_by_amount
    ON issuing_book_entries (financial_account_id, amount_minor, book_transfer_id) WHERE book = 'principal'`
  yield* sql`DROP INDEX issuing_book_entries_by_account`
})
