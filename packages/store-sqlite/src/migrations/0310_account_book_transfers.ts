import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * An account's book transfers in the orders of its list (docs/ledger.md#an-accounts-book-transfers):
 * one row per (account, book, book transfer) that has an entry, carrying the book transfer's
 * posted_at and amount, so that a page of `GET /v1/financial-accounts/{id}/book-transfers` walks
 * (account, book, order key, id) through an index instead of every entry of the account. A trigger
 * on the entries writes it, in the statement that writes them (the posting code is unchanged); a
 * second entry of the same account and book in one book transfer adds nothing. It replaces
 * `issuing_book_entries_by_account`, which only that list read. Backfilled from the entries already
 * written.
 *
 * Numbered 0310, past every id already applied: the Migrator runs only ids above the latest one.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE issuing_account_book_transfers (
    financial_account_id TEXT NOT NULL,
    book TEXT NOT NULL,
    posted_at TEXT NOT NULL,
    book_transfer_id TEXT NOT NULL,
    amount_minor INTEGER NOT NULL,
    PRIMARY KEY (financial_account_id, book, posted_at, book_transfer_id)
  ) WITHOUT ROWID`
  yield* sql`CREATE INDEX issuing_account_book_transfers_by_amount
    ON issuing_account_book_transfers (financial_account_id, book, amount_minor, book_transfer_id)`
  yield* sql`INSERT OR IGNORE INTO issuing_account_book_transfers (financial_account_id, book, posted_at, book_transfer_id, amount_minor)
    SELECT e.financial_account_id, e.book, bt.posted_at, e.book_transfer_id, bt.amount_minor
    FROM issuing_book_entries e JOIN issuing_book_transfers bt ON bt.id = e.book_transfer_id`
  yield* sql`CREATE TRIGGER issuing_account_book_transfers_insert AFTER INSERT ON issuing_book_entries
    BEGIN
      INSERT OR IGNORE INTO issuing_account_book_transfers (financial_account_id, book, posted_at, book_transfer_id, amount_minor)
      SELECT NEW.financial_account_id, NEW.book, bt.posted_at, NEW.book_transfer_id, bt.amount_minor
      FROM issuing_book_transfers bt WHERE bt.id = NEW.book_transfer_id;
    END`
  yield* sql`DROP INDEX issuing_book_entries_by_account`
})
