import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A leaner `issuing_post_transfer` (docs/ledger.md#postgresql-posting-and-batches): the same
 * arguments, results, locks and guarantees as 0080, in four statements instead of up to fifteen.
 * Profiled under load, the 0080 body ran, per transfer of three events, 12 statements and 6
 * nested plpgsql calls (each event: an INSERT, then `issuing_webhook_fan_out`, which calls
 * `issuing_webhook_fan_out_events` for that one event) besides the lock loop. Now:
 *   1. the card check (card authorizations only), as before;
 *   2. ONE statement locks the balance rows of both accounts FOR UPDATE in (account, book) order
 *      and, over what they hold, gives the source's available principal and whether any running
 *      total would pass 2^53 - 1 (a join with the deltas instead of a plpgsql loop over a cursor);
 *   3. after the funds and bound checks, ONE statement writes every row: the transaction (insert
 *      or update), the transfer, the book transfer, its entries, the events (set-based) and the
 *      balance deltas, as data-modifying CTEs around the balances' upsert;
 *   4. ONE call of `issuing_webhook_fan_out_events` for all the events (the fan-out of 0110: with
 *      a NULL channel it marks the transaction for the wake after commit).
 * Nothing else changes: the state change, the events and the deliveries commit in one transaction
 * with the checks made under the locks that transaction holds.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE OR REPLACE FUNCTION issuing_post_transfer(
      p_program_id text, p_source text, p_target text, p_check_funds boolean, p_amount bigint, p_currency text,
      p_now timestamptz,
      p_transaction_write text, p_transaction_id text, p_transaction_status text, p_transaction_created_at timestamptz,
      p_card_id text, p_mcc text, p_merchant_name text,
      p_transfer_id text, p_rail text, p_transfer_status text, p_description text,
      p_book_transfer_id text,
      p_entry_accounts text[], p_entry_books text[], p_entry_types text[], p_entry_amounts bigint[],
      p_delta_accounts text[], p_delta_books text[], p_delta_debits bigint[], p_delta_credits bigint[],
      p_event_ids text[], p_event_types text[], p_event_data text[], p_channel text, p_active_card text)
    RETURNS TABLE (posted boolean, available bigint, refusal text) LANGUAGE plpgsql AS $$
    DECLARE v_available bigint; v_over boolean; v_card_state text; v_events integer := coalesce(array_length(p_event_ids, 1), 0);
    BEGIN
      -- A card authorization decided without the card's row lock: the card must still be ACTIVE.
      -- FOR SHARE waits for a freeze or close in flight (they update the row) and holds theirs off
      -- until this commits, so no approval commits after a freeze that committed before it.
      IF p_active_card IS NOT NULL THEN
        SELECT c.state INTO v_card_state FROM issuing_cards c WHERE c.id = p_active_card FOR SHARE;
        IF v_card_state IS DISTINCT FROM 'ACTIVE' THEN
          RETURN QUERY SELECT false, NULL::bigint,
            CASE WHEN v_card_state = 'FROZEN' THEN 'card_frozen' ELSE 'card_closed' END;
          RETURN;
        END IF;
      END IF;
      -- The balance rows locked in a fixed order (transfers crossing in opposite directions cannot
      -- deadlock), and read in the same statement: the source's available principal, and whether
      -- any running total would pass 2^53 - 1 (so the API's JSON numbers stay exact).
      SELECT max(b.credits_minor - b.debits_minor) FILTER (WHERE b.account = p_source AND b.book = 'principal'),
             coalesce(bool_or(b.debits_minor + d.debits > 9007199254740991 OR b.credits_minor + d.credits > 9007199254740991), false)
        INTO v_available, v_over
        FROM (SELECT l.financial_account_id AS account, l.book, l.debits_minor, l.credits_minor FROM issuing_balances l
              WHERE l.financial_account_id IN (p_source, p_target)
              ORDER BY l.financial_account_id, l.book FOR UPDATE) b
        LEFT JOIN unnest(p_delta_accounts, p_delta_books, p_delta_debits, p_delta_credits) AS d(account, book, debits, credits)
          ON d.account = b.account AND d.book = b.book;
      IF p_check_funds THEN
        v_available := coalesce(v_available, 0);
        IF v_available < p_amount THEN
          RETURN QUERY SELECT false, v_available, 'insufficient_funds';
          RETURN;
        END IF;
      ELSE
        v_available := NULL;
      END IF;
      IF v_over THEN
        RETURN QUERY SELECT false, v_available, 'balance_limit_exceeded';
        RETURN;
      END IF;
      -- Every row in one statement; the foreign keys are checked at its end, when all are in.
      WITH inserted_transaction AS (
        INSERT INTO issuing_transactions
          (id, program_id, status, amount_minor, currency, card_id, decline_reason, mcc, merchant_name, created_at, updated_at)
          SELECT p_transaction_id, p_program_id, p_transaction_status, p_amount, p_currency, p_card_id, NULL, p_mcc,
                 p_merchant_name, p_transaction_created_at, p_now
          WHERE p_transaction_write = 'insert'
      ), updated_transaction AS (
        UPDATE issuing_transactions SET status = p_transaction_status, updated_at = p_now
          WHERE id = p_transaction_id AND p_transaction_write = 'update'
      ), inserted_transfer AS (
        INSERT INTO issuing_transfers
          (id, program_id, transaction_id, payment_rail, amount_minor, currency, from_financial_account_id,
           to_financial_account_id, status, description, created_at, updated_at)
          VALUES (p_transfer_id, p_program_id, p_transaction_id, p_rail, p_amount, p_currency, p_source, p_target,
                  p_transfer_status, p_description, p_now, p_now)
      ), inserted_book_transfer AS (
        INSERT INTO issuing_book_transfers (id, program_id, transfer_id, transaction_id, amount_minor, currency, posted_at)
          VALUES (p_book_transfer_id, p_program_id, p_transfer_id, p_transaction_id, p_amount, p_currency, p_now)
      ), inserted_entries AS (
        INSERT INTO issuing_book_entries (book_transfer_id, position, financial_account_id, book, entry_type, amount_minor, currency)
          SELECT p_book_transfer_id, e.ord - 1, e.account, e.book, e.entry_type, e.amount, p_currency
          FROM unnest(p_entry_accounts, p_entry_books, p_entry_types, p_entry_amounts)
            WITH ORDINALITY AS e(account, book, entry_type, amount, ord)
      ), inserted_events AS (
        INSERT INTO issuing_events (id, program_id, type, created_at, data)
          SELECT v.id, p_program_id, v.type, p_now, v.data
          FROM unnest(p_event_ids, p_event_types, p_event_data) WITH ORDINALITY AS v(id, type, data, ord)
          ORDER BY v.ord
      )
      INSERT INTO issuing_balances (financial_account_id, book, currency, debits_minor, credits_minor, updated_at)
        SELECT d.account, d.book, p_currency, d.debits, d.credits, p_now
        FROM unnest(p_delta_accounts, p_delta_books, p_delta_debits, p_delta_credits) AS d(account, book, debits, credits)
        ORDER BY d.account, d.book
        ON CONFLICT (financial_account_id, book) DO UPDATE SET
          debits_minor = issuing_balances.debits_minor + excluded.debits_minor,
          credits_minor = issuing_balances.credits_minor + excluded.credits_minor,
          updated_at = excluded.updated_at;
      IF v_events > 0 THEN
        PERFORM issuing_webhook_fan_out_events(p_event_ids, array_fill(p_program_id, ARRAY[v_events]), p_event_types,
                                               array_fill(p_now, ARRAY[v_events]), p_channel);
      END IF;
      RETURN QUERY SELECT true, v_available, NULL::text;
    END $$`
})
