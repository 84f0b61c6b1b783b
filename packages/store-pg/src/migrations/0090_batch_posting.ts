import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Set-based writes for transfer batches (docs/ledger.md#batches). A batch's postings are decided
 * in the process under the batch's balance-row locks (store-pg PgPosting.ts); the ones that post
 * are then written by `issuing_write_postings` in ONE call: one INSERT per table for the whole
 * batch (transactions, transfers, book transfers, entries, events), one upsert of the balance
 * deltas summed per (account, book), and one webhook fan-out for every event.
 *
 * `issuing_webhook_fan_out_events` is now THE definition of the webhook fan-out on PostgreSQL (one
 * queued delivery per enabled subscription to each event's type, and one NOTIFY when any was
 * queued); `issuing_webhook_fan_out` (0011) is redefined as a call to it, so the fan-out of a lone
 * event, of `issuing_post_transfer` and of a batch cannot drift apart.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE FUNCTION issuing_webhook_fan_out_events(
      p_event_ids text[], p_program_ids text[], p_event_types text[], p_created_at timestamptz[], p_channel text)
    RETURNS integer LANGUAGE plpgsql AS $$
    DECLARE n integer;
    BEGIN
      INSERT INTO issuing_webhook_deliveries
        (id, program_id, subscription_id, event_id, attempt_count, next_attempt_at, claim_token, created_at)
      SELECT e.id || ':' || et.subscription_id, et.program_id, et.subscription_id, e.id, 0, e.created_at, NULL, e.created_at
      FROM unnest(p_event_ids, p_program_ids, p_event_types, p_created_at) AS e(id, program_id, type, created_at)
      JOIN issuing_webhook_event_types et ON et.program_id = e.program_id AND et.event_type = e.type
      JOIN issuing_webhook_subscriptions s ON s.id = et.subscription_id
      WHERE s.disabled = false;
      GET DIAGNOSTICS n = ROW_COUNT;
      IF n > 0 THEN PERFORM pg_notify(p_channel, 'due'); END IF;
      RETURN n;
    END $$`
  yield* sql`CREATE OR REPLACE FUNCTION issuing_webhook_fan_out(
      p_event_id text, p_program_id text, p_event_type text, p_created_at timestamptz, p_channel text)
    RETURNS integer LANGUAGE plpgsql AS $$
    BEGIN
      RETURN issuing_webhook_fan_out_events(ARRAY[p_event_id], ARRAY[p_program_id], ARRAY[p_event_type], ARRAY[p_created_at], p_channel);
    END $$`
  yield* sql`CREATE FUNCTION issuing_write_postings(p_rows jsonb, p_channel text)
    RETURNS integer LANGUAGE plpgsql AS $$
    DECLARE n integer;
    BEGIN
      INSERT INTO issuing_transactions
        (id, program_id, status, amount_minor, currency, card_id, decline_reason, mcc, merchant_name, created_at, updated_at)
        SELECT r.id, r.program_id, r.status, r.amount_minor, r.currency, r.card_id, NULL, r.mcc, r.merchant_name, r.created_at, r.updated_at
        FROM jsonb_to_recordset(p_rows->'transactions') AS r(id text, program_id text, status text, amount_minor bigint, currency text,
          card_id text, mcc text, merchant_name text, created_at timestamptz, updated_at timestamptz);
      INSERT INTO issuing_transfers
        (id, program_id, transaction_id, payment_rail, amount_minor, currency, from_financial_account_id,
         to_financial_account_id, status, description, created_at, updated_at)
        SELECT r.id, r.program_id, r.transaction_id, r.payment_rail, r.amount_minor, r.currency, r.from_financial_account_id,
          r.to_financial_account_id, r.status, r.description, r.created_at, r.created_at
        FROM jsonb_to_recordset(p_rows->'transfers') AS r(id text, program_id text, transaction_id text, payment_rail text,
          amount_minor bigint, currency text, from_financial_account_id text, to_financial_account_id text, status text,
          description text, created_at timestamptz);
      INSERT INTO issuing_book_transfers (id, program_id, transfer_id, transaction_id, amount_minor, currency, posted_at)
        SELECT r.id, r.program_id, r.transfer_id, r.transaction_id, r.amount_minor, r.currency, r.posted_at
        FROM jsonb_to_recordset(p_rows->'book_transfers') AS r(id text, program_id text, transfer_id text, transaction_id text,
          amount_minor bigint, currency text, posted_at timestamptz);
      INSERT INTO issuing_book_entries (book_transfer_id, position, financial_account_id, book, entry_type, amount_minor, currency)
        SELECT r.book_transfer_id, r.position, r.financial_account_id, r.book, r.entry_type, r.amount_minor, r.currency
        FROM jsonb_to_recordset(p_rows->'entries') AS r(book_transfer_id text, position integer, financial_account_id text, book text,
          entry_type text, amount_minor bigint, currency text);
      INSERT INTO issuing_balances (financial_account_id, book, currency, debits_minor, credits_minor, updated_at)
        SELECT r.financial_account_id, r.book, r.currency, r.debits_minor, r.credits_minor, r.updated_at
        FROM jsonb_to_recordset(p_rows->'balances') AS r(financial_account_id text, book text, currency text, debits_minor bigint,
          credits_minor bigint, updated_at timestamptz)
        ORDER BY r.financial_account_id, r.book
        ON CONFLICT (financial_account_id, book) DO UPDATE SET
          debits_minor = issuing_balances.debits_minor + excluded.debits_minor,
          credits_minor = issuing_balances.credits_minor + excluded.credits_minor,
          updated_at = excluded.updated_at;
      INSERT INTO issuing_events (id, program_id, type, created_at, data)
        SELECT r.id, r.program_id, r.type, r.created_at, r.data
        FROM jsonb_to_recordset(p_rows->'events') AS r(id text, program_id text, type text, created_at timestamptz, data text);
      SELECT issuing_webhook_fan_out_events(array_agg(r.id), array_agg(r.program_id), array_agg(r.type), array_agg(r.created_at), p_channel)
        INTO n
        FROM jsonb_to_recordset(p_rows->'events') AS r(id text, program_id text, type text, created_at timestamptz);
      RETURN coalesce(n, 0);
    END $$`
})
