import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * One round trip per transfer on PostgreSQL (docs/ledger.md, Performance).
 *
 * `issuing_webhook_fan_out` is THE definition of the webhook fan-out on PostgreSQL: one queued
 * delivery per enabled subscription to the event's type, and a NOTIFY when any was queued. The
 * webhook store's `enqueueEvent` and `issuing_post_transfer` both call it, so they cannot drift.
 * (plpgsql resolves tables when it runs, so it may name the webhook tables created by 0030.)
 *
 * `issuing_post_transfer` writes one transfer with a NEW transaction: it locks both accounts'
 * balance rows in (account id, book) order, checks the source's principal balance under that lock
 * (when `p_check_funds`), then inserts the transaction, transfer, book transfer, its entries,
 * applies the balance deltas, inserts the events and fans them out. The rows themselves (ids,
 * entries, deltas, event payloads) are computed and asserted in TypeScript (PostingRules); this
 * function only writes them. On insufficient funds it writes nothing and returns posted = false
 * with the available balance. Called in autocommit it is its own transaction; inside a caller's
 * transaction it joins it.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE FUNCTION issuing_webhook_fan_out(
      p_event_id text, p_program_id text, p_event_type text, p_created_at timestamptz, p_channel text)
    RETURNS integer LANGUAGE plpgsql AS $$
    DECLARE n integer;
    BEGIN
      INSERT INTO issuing_webhook_deliveries
        (id, program_id, subscription_id, event_id, attempt_count, next_attempt_at, claim_token, created_at)
      SELECT p_event_id || ':' || et.subscription_id, et.program_id, et.subscription_id, p_event_id, 0, p_created_at, NULL, p_created_at
      FROM issuing_webhook_event_types et
      JOIN issuing_webhook_subscriptions s ON s.id = et.subscription_id
      WHERE et.program_id = p_program_id AND et.event_type = p_event_type AND s.disabled = false;
      GET DIAGNOSTICS n = ROW_COUNT;
      IF n > 0 THEN PERFORM pg_notify(p_channel, 'due'); END IF;
      RETURN n;
    END $$`
  yield* sql`CREATE FUNCTION issuing_post_transfer(
      p_program_id text, p_source text, p_target text, p_check_funds boolean, p_amount bigint, p_currency text,
      p_now timestamptz,
      p_transaction_id text, p_transaction_status text, p_card_id text, p_mcc text, p_merchant_name text,
      p_transfer_id text, p_rail text, p_transfer_status text, p_description text,
      p_book_transfer_id text,
      p_entry_accounts text[], p_entry_books text[], p_entry_types text[], p_entry_amounts bigint[],
      p_delta_accounts text[], p_delta_books text[], p_delta_debits bigint[], p_delta_credits bigint[],
      p_event_ids text[], p_event_types text[], p_event_data text[], p_channel text)
    RETURNS TABLE (posted boolean, available bigint) LANGUAGE plpgsql AS $$
    DECLARE v_available bigint;
    BEGIN
      -- Fixed lock order: transfers crossing in opposite directions cannot deadlock.
      PERFORM 1 FROM issuing_balances WHERE financial_account_id IN (p_source, p_target)
        ORDER BY financial_account_id, book FOR UPDATE;
      IF p_check_funds THEN
        SELECT b.credits_minor - b.debits_minor INTO v_available FROM issuing_balances b
          WHERE b.financial_account_id = p_source AND b.book = 'principal';
        v_available := coalesce(v_available, 0);
        IF v_available < p_amount THEN
          RETURN QUERY SELECT false, v_available;
          RETURN;
        END IF;
      END IF;
      INSERT INTO issuing_transactions
        (id, program_id, status, amount_minor, currency, card_id, decline_reason, mcc, merchant_name, created_at, updated_at)
        VALUES (p_transaction_id, p_program_id, p_transaction_status, p_amount, p_currency, p_card_id, NULL, p_mcc,
                p_merchant_name, p_now, p_now);
      INSERT INTO issuing_transfers
        (id, program_id, transaction_id, payment_rail, amount_minor, currency, from_financial_account_id,
         to_financial_account_id, status, description, created_at, updated_at)
        VALUES (p_transfer_id, p_program_id, p_transaction_id, p_rail, p_amount, p_currency, p_source, p_target,
                p_transfer_status, p_description, p_now, p_now);
      INSERT INTO issuing_book_transfers (id, program_id, transfer_id, transaction_id, amount_minor, currency, posted_at)
        VALUES (p_book_transfer_id, p_program_id, p_transfer_id, p_transaction_id, p_amount, p_currency, p_now);
      INSERT INTO issuing_book_entries (book_transfer_id, position, financial_account_id, book, entry_type, amount_minor, currency)
        SELECT p_book_transfer_id, e.ord - 1, e.account, e.book, e.entry_type, e.amount, p_currency
        FROM unnest(p_entry_accounts, p_entry_books, p_entry_types, p_entry_amounts)
          WITH ORDINALITY AS e(account, book, entry_type, amount, ord);
      INSERT INTO issuing_balances (financial_account_id, book, currency, debits_minor, credits_minor, updated_at)
        SELECT d.account, d.book, p_currency, d.debits, d.credits, p_now
        FROM unnest(p_delta_accounts, p_delta_books, p_delta_debits, p_delta_credits) AS d(account, book, debits, credits)
        ORDER BY d.account, d.book
        ON CONFLICT (financial_account_id, book) DO UPDATE SET
          debits_minor = issuing_balances.debits_minor + excluded.debits_minor,
          credits_minor = issuing_balances.credits_minor + excluded.credits_minor,
          updated_at = excluded.updated_at;
      FOR i IN 1 .. coalesce(array_length(p_event_ids, 1), 0) LOOP
        INSERT INTO issuing_events (id, program_id, type, created_at, data)
          VALUES (p_event_ids[i], p_program_id, p_event_types[i], p_now, p_event_data[i]);
        PERFORM issuing_webhook_fan_out(p_event_ids[i], p_program_id, p_event_types[i], p_now, p_channel);
      END LOOP;
      RETURN QUERY SELECT true, v_available;
    END $$`
})
