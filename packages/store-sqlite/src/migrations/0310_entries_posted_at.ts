import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * An account's book transfers in the order of its list (docs/ledger.md#an-accounts-book-transfers):
 * every entry carries its book transfer's `posted_at`, and the entries' by-account index becomes
 * (financial_account_id, book, posted_at, book_transfer_id), so a page of
 * `GET /v1/financial-accounts/{id}/book-transfers` is one range of it per book instead of a sort of
 * every entry of the account. A posting writes one more column, nothing else (an index for the
 * list's amount order as well was measured too dear for what it serves: docs/ledger.md).
 *
 * SQLite cannot add a NOT NULL column without a default, so the table is rebuilt: the entries
 * copied with their book transfer's posted_at, the old table dropped (no foreign key points at it),
 * the new one renamed in its place, and its index and triggers (immutability, maintained counts)
 * created again from their own text in sqlite_master.
 *
 * Numbered 0310, past every id already applied: the Migrator runs only ids above the latest one.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const triggers = yield* sql<{ readonly sql: string }>`SELECT sql FROM sqlite_master
    WHERE type = 'trigger' AND tbl_name = 'issuing_book_entries' ORDER BY name`
  yield* sql`CREATE TABLE issuing_book_entries_0310 (
    book_transfer_id TEXT NOT NULL REFERENCES issuing_book_transfers (id),
    position INTEGER NOT NULL,
    financial_account_id TEXT NOT NULL REFERENCES issuing_financial_accounts (id),
    book TEXT NOT NULL,
    entry_type TEXT NOT NULL CHECK (entry_type IN ('DEBIT', 'CREDIT')),
    amount_minor INTEGER NOT NULL CHECK (amount_minor > 0),
    currency TEXT NOT NULL,
    posted_at TEXT NOT NULL,
    PRIMARY KEY (book_transfer_id, position)
  )`
  yield* sql`INSERT INTO issuing_book_entries_0310
    (book_transfer_id, position, financial_account_id, book, entry_type, amount_minor, currency, posted_at)
    SELECT e.book_transfer_id, e.position, e.financial_account_id, e.book, e.entry_type, e.amount_minor, e.currency, bt.posted_at
    FROM issuing_book_entries e JOIN issuing_book_transfers bt ON bt.id = e.book_transfer_id
    ORDER BY e.book_transfer_id, e.position`
  yield* sql`DROP TABLE issuing_book_entries`
  yield* sql`ALTER TABLE issuing_book_entries_0310 RENAME TO issuing_book_entries`
  yield* sql`CREATE INDEX issuing_book_entries_by_account
    ON issuing_book_entries (financial_account_id, book, posted_at, book_transfer_id)`
  for (const trigger of triggers) yield* sql.unsafe(trigger.sql)
})
