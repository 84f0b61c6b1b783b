import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The money-movement lists' counts kept per value of their closed filters only
 * (docs/operations.md#the-databases-work-per-transfer-postgresql): status and rail of a transfer,
 * status of a transaction, type of an event and the books of a book transfer's account are no
 * longer counted under "any" as well; a total without such a filter is the sum of its values'
 * counts (core/src/sql/ListCounts.ts SUMMED_FILTERS), at most 15 keys read. Keys now:
 *
 * - transfers `=status|=rail|` and `=status|=rail|=account` for each of its accounts (3, was 12);
 * - transactions `=status|` and, with a card, `=status|=card` (1 or 2, was 2 or 4);
 * - events `=type` (was `` and `=type`);
 * - book transfers `=account|=books` once per account of its entries, `books` the set of books
 *   that account's entries have in it, sorted and joined with `+` (2 for a transfer between two
 *   wallets, was 9: `|`, `|=book`, `=account|` and `=account|=book` each as many as they differed).
 *
 * The same keys as the other store's migration of this id. The counts of those lists are
 * recounted from their rows here, under SHARE locks so that no row is written between the count and
 * the triggers; the living trigger functions (src/functions/issuing_count_{transfers,transactions,
 * events,book_entries}.sql) and the posting functions, which write the new keys, are applied after
 * the migrations in the same transaction. The book transfers' own counting trigger goes: it kept
 * only `|`, which no list reads (a book-transfer list is always an account's or a transaction's).
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`LOCK TABLE issuing_events, issuing_transfers, issuing_transactions, issuing_book_transfers, issuing_book_entries IN SHARE MODE`
  yield* sql`DROP TRIGGER issuing_count_book_transfers_insert ON issuing_book_transfers`
  yield* sql`DROP FUNCTION issuing_count_book_transfers()`
  yield* sql`DELETE FROM issuing_list_counts WHERE list IN ('events', 'transfers', 'transactions', 'book_transfers')`
  yield* sql`INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
    SELECT 'events', program_id, '=' || type, 0, count(*) FROM issuing_events GROUP BY program_id, type`
  yield* sql`INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
    SELECT 'transfers', program_id, k, 0, count(*) FROM (
      SELECT program_id, '=' || status || '|=' || payment_rail || '|' AS k FROM issuing_transfers
      UNION ALL
      SELECT program_id, '=' || status || '|=' || payment_rail || '|=' || from_financial_account_id FROM issuing_transfers
      UNION ALL
      SELECT program_id, '=' || status || '|=' || payment_rail || '|=' || to_financial_account_id FROM issuing_transfers
        WHERE to_financial_account_id <> from_financial_account_id
    ) x GROUP BY program_id, k`
  yield* sql`INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
    SELECT 'transactions', program_id, k, 0, count(*) FROM (
      SELECT program_id, '=' || status || '|' AS k FROM issuing_transactions
      UNION ALL
      SELECT program_id, '=' || status || '|=' || card_id FROM issuing_transactions WHERE card_id IS NOT NULL
    ) x GROUP BY program_id, k`
  yield* sql`INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
    SELECT 'book_transfers', bt.program_id, '=' || s.account || '|=' || s.books, 0, count(*)
    FROM (SELECT d.book_transfer_id, d.account, string_agg(d.book, '+' ORDER BY d.book COLLATE "C") AS books
          FROM (SELECT DISTINCT book_transfer_id, financial_account_id AS account, book FROM issuing_book_entries) d
          GROUP BY d.book_transfer_id, d.account) s
    JOIN issuing_book_transfers bt ON bt.id = s.book_transfer_id
    GROUP BY bt.program_id, s.account, s.books`
})
