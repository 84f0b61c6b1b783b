import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { replaceOnce } from "./functionText.js"
import { POST_TRANSFER_0300, WRITE_POSTINGS_0300 } from "./0300_settlement_slots.js"

const ENTRY_COLUMNS =
  "INSERT INTO issuing_book_entries (book_transfer_id, position, financial_account_id, book, entry_type, amount_minor, currency)"
const ENTRY_COLUMNS_0310 =
  "INSERT INTO issuing_book_entries (book_transfer_id, position, financial_account_id, book, entry_type, amount_minor, currency, posted_at)"

/** 0300's `issuing_post_transfer`, its entries written with the book transfer's time (`p_now`). */
export const POST_TRANSFER_0310 = replaceOnce(
  replaceOnce(POST_TRANSFER_0300, ENTRY_COLUMNS, ENTRY_COLUMNS_0310),
  "SELECT p_book_transfer_id, e.ord - 1, e.account, e.book, e.entry_type, e.amount, p_currency\n",
  "SELECT p_book_transfer_id, e.ord - 1, e.account, e.book, e.entry_type, e.amount, p_currency, p_now\n"
)

/** 0300's `issuing_write_postings`, each entry's posted_at read from its row (the postings' rows carry it). */
export const WRITE_POSTINGS_0310 = replaceOnce(
  replaceOnce(
    replaceOnce(WRITE_POSTINGS_0300, ENTRY_COLUMNS, ENTRY_COLUMNS_0310),
    "SELECT r.book_transfer_id, r.position, r.financial_account_id, r.book, r.entry_type, r.amount_minor, r.currency\n",
    "SELECT r.book_transfer_id, r.position, r.financial_account_id, r.book, r.entry_type, r.amount_minor, r.currency, r.posted_at\n"
  ),
  "entry_type text, amount_minor bigint, currency text);",
  "entry_type text, amount_minor bigint, currency text, posted_at timestamptz);"
)

/**
 * An account's book transfers in the order of its list (docs/ledger.md#an-accounts-book-transfers):
 * every entry carries its book transfer's `posted_at`, and the entries' by-account index becomes
 * (financial_account_id, book, posted_at, book_transfer_id), so a page of
 * `GET /v1/financial-accounts/{id}/book-transfers` is one range of it per book instead of a sort of
 * every entry of the account. A posting writes one more column, nothing else (an index for the
 * list's amount order as well was measured too dear for what it serves: docs/ledger.md).
 *
 * The entries written so far are backfilled under a SHARE lock (no entry is written between the
 * backfill and the NOT NULL), their immutability trigger disabled for that one UPDATE. The two
 * functions that write entries (`issuing_post_transfer`, and `issuing_write_postings`, which batches
 * and card messages go through) are 0300's with the column added; the same column as the SQLite
 * migration of this id.
 *
 * Numbered 0310, past every id already applied: the Migrator runs only ids above the latest one.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`LOCK TABLE issuing_book_entries IN SHARE MODE`
  yield* sql`ALTER TABLE issuing_book_entries ADD COLUMN posted_at timestamptz`
  yield* sql`ALTER TABLE issuing_book_entries DISABLE TRIGGER issuing_book_entries_immutable`
  yield* sql`UPDATE issuing_book_entries e SET posted_at = bt.posted_at
    FROM issuing_book_transfers bt WHERE bt.id = e.book_transfer_id`
  yield* sql`ALTER TABLE issuing_book_entries ENABLE TRIGGER issuing_book_entries_immutable`
  yield* sql`ALTER TABLE issuing_book_entries ALTER COLUMN posted_at SET NOT NULL`
  yield* sql`DROP INDEX issuing_book_entries_by_account`
  yield* sql`CREATE INDEX issuing_book_entries_by_account
    ON issuing_book_entries (financial_account_id, book, posted_at, book_transfer_id)`
  yield* sql.unsafe(POST_TRANSFER_0310)
  yield* sql.unsafe(WRITE_POSTINGS_0310)
})
