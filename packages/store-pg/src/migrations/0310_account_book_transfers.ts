import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * An account's book transfers in the orders of its list (docs/ledger.md#an-accounts-book-transfers):
 * one row per (account, book, book transfer) that has an entry, carrying the book transfer's
 * posted_at and amount, so that a page of `GET /v1/financial-accounts/{id}/book-transfers` walks
 * (account, book, order key, id) through an index instead of every entry of the account. A
 * statement-level trigger with a transition table on the entries writes it, in the statement that
 * writes them, so the posting functions are unchanged; a second entry of the same account and book
 * in one book transfer adds nothing. It replaces `issuing_book_entries_by_account`, which only that
 * list read. Backfilled from the entries already written, under a SHARE lock so that no entry is
 * written between the backfill and the trigger.
 *
 * Numbered 0310, past every id already applied: the Migrator runs only ids above the latest one.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`LOCK TABLE issuing_book_entries IN SHARE MODE`
  yield* sql`CREATE TABLE issuing_account_book_transfers (
    financial_account_id text NOT NULL,
    book text NOT NULL,
    posted_at timestamptz NOT NULL,
    book_transfer_id text NOT NULL,
    amount_minor bigint NOT NULL,
    PRIMARY KEY (financial_account_id, book, posted_at, book_transfer_id)
  )`
  yield* sql`CREATE INDEX issuing_account_book_transfers_by_amount
    ON issuing_account_book_transfers (financial_account_id, book, amount_minor, book_transfer_id)`
  yield* sql`INSERT INTO issuing_account_book_transfers (financial_account_id, book, posted_at, book_transfer_id, amount_minor)
    SELECT DISTINCT e.financial_account_id, e.book, bt.posted_at, e.book_transfer_id, bt.amount_minor
    FROM issuing_book_entries e JOIN issuing_book_transfers bt ON bt.id = e.book_transfer_id`
  yield* sql`CREATE FUNCTION issuing_account_book_transfers_insert() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO issuing_account_book_transfers (financial_account_id, book, posted_at, book_transfer_id, amount_minor)
      SELECT DISTINCT r.financial_account_id, r.book, bt.posted_at, r.book_transfer_id, bt.amount_minor
      FROM new_rows r JOIN issuing_book_transfers bt ON bt.id = r.book_transfer_id
      ON CONFLICT DO NOTHING;
      RETURN NULL;
    END $$`
  yield* sql`CREATE TRIGGER issuing_account_book_transfers_insert AFTER INSERT ON issuing_book_entries
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION issuing_account_book_transfers_insert()`
  yield* sql`DROP INDEX issuing_book_entries_by_account`
})
