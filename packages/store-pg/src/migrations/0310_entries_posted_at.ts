import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
/**
 * 0300's \`issuing_post_transfer\`, its entries written with the book transfer's time (\`p_now\`):
 * the text this migration ran, written out whole.
 */
const POST_TRANSFER_0310 = `CREATE OR REPLACE FUNCTION issuing_post_transfer(
      p_program_id text, p_source text, p_target text, p_check_funds boolean, p_amount bigint, p_currency text,
      p_now timestamptz,
      p_transaction_write text, p_transaction_id text, p_transaction_status text, p_transaction_created_at timestamptz,
      p_card_id text, p_mcc text, p_merchant_name text,
      p_transfer_id text, p_rail text, p_transfer_status text, p_description text,
      p_book_transfer_id text,
      p_entry_accounts text[], p_entry_books text[], p_entry_types text[], p_entry_amounts bigint[],
      p_delta_accounts text[], p_delta_books text[], p_delta_debits bigint[], p_delta_credits bigint[],
      p_event_ids text[], p_event_types text[], p_event_data text[], p_channel text, p_active_card text,
      p_delta_pending bigint[], p_balance_event_ids text[], p_balance_event_accounts text[], p_metadata text)
    RETURNS TABLE (posted boolean, available bigint, refusal text) LANGUAGE plpgsql AS $$
    DECLARE v_available bigint; v_over boolean; v_card_state text; v_events integer := coalesce(array_length(p_event_ids, 1), 0);
      v_balance_events integer := coalesce(array_length(p_balance_event_ids, 1), 0);
      v_slot smallint := pg_backend_pid() % 16;
    BEGIN
      IF p_active_card IS NOT NULL THEN
        SELECT c.state INTO v_card_state FROM issuing_cards c WHERE c.id = p_active_card FOR SHARE;
        IF v_card_state IS DISTINCT FROM 'ACTIVE' THEN
          RETURN QUERY SELECT false, NULL::bigint,
            CASE WHEN v_card_state = 'FROZEN' THEN 'card_frozen' ELSE 'card_closed' END;
          RETURN;
        END IF;
      END IF;
      -- The rows this posting adds into: a wallet's (slot 0), this backend's slot of a settlement account.
      PERFORM 1 FROM issuing_balances l JOIN issuing_financial_accounts a ON a.id = l.financial_account_id
        WHERE l.financial_account_id IN (p_source, p_target)
          AND l.slot = CASE WHEN a.kind = 'settlement' THEN v_slot ELSE 0 END
        ORDER BY l.financial_account_id, l.book, l.slot FOR UPDATE OF l;
      -- Decided over each (account, book) summed over its slots: a wallet's one row is locked; a
      -- settlement account's other slots are as committed (it is never funds-checked).
      SELECT max(b.credits_minor - b.debits_minor - b.pending_minor) FILTER (WHERE b.account = p_source AND b.book = 'principal'),
             coalesce(bool_or(b.debits_minor + d.debits > 9007199254740991 OR b.credits_minor + d.credits > 9007199254740991), false)
        INTO v_available, v_over
        FROM (SELECT l.financial_account_id AS account, l.book, sum(l.debits_minor) AS debits_minor,
                     sum(l.credits_minor) AS credits_minor, sum(l.pending_minor) AS pending_minor
              FROM issuing_balances l
              WHERE l.financial_account_id IN (p_source, p_target)
              GROUP BY l.financial_account_id, l.book) b
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
           to_financial_account_id, status, description, metadata, created_at, updated_at)
          VALUES (p_transfer_id, p_program_id, p_transaction_id, p_rail, p_amount, p_currency, p_source, p_target,
                  p_transfer_status, p_description, p_metadata, p_now, p_now)
      ), inserted_book_transfer AS (
        INSERT INTO issuing_book_transfers (id, program_id, transfer_id, transaction_id, amount_minor, currency, posted_at)
          VALUES (p_book_transfer_id, p_program_id, p_transfer_id, p_transaction_id, p_amount, p_currency, p_now)
      ), inserted_entries AS (
        INSERT INTO issuing_book_entries (book_transfer_id, position, financial_account_id, book, entry_type, amount_minor, currency, posted_at)
          SELECT p_book_transfer_id, e.ord - 1, e.account, e.book, e.entry_type, e.amount, p_currency, p_now
          FROM unnest(p_entry_accounts, p_entry_books, p_entry_types, p_entry_amounts)
            WITH ORDINALITY AS e(account, book, entry_type, amount, ord)
      ), inserted_events AS (
        INSERT INTO issuing_events (id, program_id, type, created_at, data)
          SELECT v.id, p_program_id, v.type, p_now, v.data
          FROM unnest(p_event_ids, p_event_types, p_event_data) WITH ORDINALITY AS v(id, type, data, ord)
          ORDER BY v.ord
      )
      INSERT INTO issuing_balances (financial_account_id, book, slot, currency, debits_minor, credits_minor, pending_minor, updated_at)
        SELECT d.account, d.book, CASE WHEN a.kind = 'settlement' THEN v_slot ELSE 0 END, p_currency, d.debits, d.credits,
               d.pending, p_now
        FROM unnest(p_delta_accounts, p_delta_books, p_delta_debits, p_delta_credits, p_delta_pending)
          AS d(account, book, debits, credits, pending)
        JOIN issuing_financial_accounts a ON a.id = d.account
        ORDER BY d.account, d.book
        ON CONFLICT (financial_account_id, book, slot) DO UPDATE SET
          debits_minor = issuing_balances.debits_minor + excluded.debits_minor,
          credits_minor = issuing_balances.credits_minor + excluded.credits_minor,
          pending_minor = issuing_balances.pending_minor + excluded.pending_minor,
          updated_at = excluded.updated_at;
      IF v_balance_events > 0 THEN
        INSERT INTO issuing_events (id, program_id, type, created_at, data)
          SELECT v.id, p_program_id, 'balance.updated', p_now, json_build_object(
    'id', a.id, 'object', 'financial_account', 'program_id', a.program_id, 'wallet_id', a.wallet_id, 'kind', a.kind,
    'currency', a.currency,
    'balance', json_build_object('amount', b.credits_minor - b.debits_minor, 'currency', a.currency),
    'pending_balance', json_build_object('amount', b.pending_minor, 'currency', a.currency),
    'available_balance', json_build_object('amount', b.credits_minor - b.debits_minor - b.pending_minor, 'currency', a.currency),
    'created_at', to_char(a.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'updated_at', to_char(b.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text
          FROM unnest(p_balance_event_ids, p_balance_event_accounts) WITH ORDINALITY AS v(id, account, ord)
          JOIN issuing_financial_accounts a ON a.id = v.account
          CROSS JOIN LATERAL (SELECT sum(x.debits_minor) AS debits_minor, sum(x.credits_minor) AS credits_minor,
      sum(x.pending_minor) AS pending_minor, max(x.updated_at) AS updated_at
    FROM issuing_balances x WHERE x.financial_account_id = a.id AND x.book = 'principal') b
          ORDER BY v.ord;
      END IF;
      IF v_events + v_balance_events > 0 THEN
        PERFORM issuing_webhook_fan_out_events(p_event_ids || p_balance_event_ids,
          array_fill(p_program_id, ARRAY[v_events + v_balance_events]),
          p_event_types || array_fill('balance.updated'::text, ARRAY[v_balance_events]),
          array_fill(p_now, ARRAY[v_events + v_balance_events]), p_channel);
      END IF;
      RETURN QUERY SELECT true, v_available, NULL::text;
    END $$`

/**
 * 0300's \`issuing_write_postings\`, each entry's posted_at read from its row (the postings' rows
 * carry it): the text this migration ran, written out whole.
 */
const WRITE_POSTINGS_0310 = `CREATE OR REPLACE FUNCTION issuing_write_postings(p_rows jsonb, p_channel text)
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
         to_financial_account_id, status, description, metadata, created_at, updated_at)
        SELECT r.id, r.program_id, r.transaction_id, r.payment_rail, r.amount_minor, r.currency, r.from_financial_account_id,
          r.to_financial_account_id, r.status, r.description, coalesce(r.metadata, '{}'), r.created_at, r.created_at
        FROM jsonb_to_recordset(p_rows->'transfers') AS r(id text, program_id text, transaction_id text, payment_rail text,
          amount_minor bigint, currency text, from_financial_account_id text, to_financial_account_id text, status text,
          description text, metadata text, created_at timestamptz);
      INSERT INTO issuing_book_transfers (id, program_id, transfer_id, transaction_id, amount_minor, currency, posted_at)
        SELECT r.id, r.program_id, r.transfer_id, r.transaction_id, r.amount_minor, r.currency, r.posted_at
        FROM jsonb_to_recordset(p_rows->'book_transfers') AS r(id text, program_id text, transfer_id text, transaction_id text,
          amount_minor bigint, currency text, posted_at timestamptz);
      INSERT INTO issuing_book_entries (book_transfer_id, position, financial_account_id, book, entry_type, amount_minor, currency, posted_at)
        SELECT r.book_transfer_id, r.position, r.financial_account_id, r.book, r.entry_type, r.amount_minor, r.currency, r.posted_at
        FROM jsonb_to_recordset(p_rows->'entries') AS r(book_transfer_id text, position integer, financial_account_id text, book text,
          entry_type text, amount_minor bigint, currency text, posted_at timestamptz);
      INSERT INTO issuing_balances (financial_account_id, book, slot, currency, debits_minor, credits_minor, pending_minor, updated_at)
        SELECT r.financial_account_id, r.book, 0, r.currency, r.debits_minor, r.credits_minor, coalesce(r.pending_minor, 0), r.updated_at
        FROM jsonb_to_recordset(p_rows->'balances') AS r(financial_account_id text, book text, currency text, debits_minor bigint,
          credits_minor bigint, pending_minor bigint, updated_at timestamptz)
        ORDER BY r.financial_account_id, r.book
        ON CONFLICT (financial_account_id, book, slot) DO UPDATE SET
          debits_minor = issuing_balances.debits_minor + excluded.debits_minor,
          credits_minor = issuing_balances.credits_minor + excluded.credits_minor,
          pending_minor = issuing_balances.pending_minor + excluded.pending_minor,
          updated_at = excluded.updated_at;
      INSERT INTO issuing_events (id, program_id, type, created_at, data)
        SELECT r.id, r.program_id, r.type, r.created_at, r.data
        FROM jsonb_to_recordset(p_rows->'events') AS r(id text, program_id text, type text, created_at timestamptz, data text);
      INSERT INTO issuing_events (id, program_id, type, created_at, data)
        SELECT r.id, r.program_id, 'balance.updated', r.created_at, json_build_object(
    'id', a.id, 'object', 'financial_account', 'program_id', a.program_id, 'wallet_id', a.wallet_id, 'kind', a.kind,
    'currency', a.currency,
    'balance', json_build_object('amount', b.credits_minor - b.debits_minor, 'currency', a.currency),
    'pending_balance', json_build_object('amount', b.pending_minor, 'currency', a.currency),
    'available_balance', json_build_object('amount', b.credits_minor - b.debits_minor - b.pending_minor, 'currency', a.currency),
    'created_at', to_char(a.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'updated_at', to_char(b.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text
        FROM jsonb_to_recordset(p_rows->'balance_events') AS r(id text, program_id text, account text, created_at timestamptz)
        JOIN issuing_financial_accounts a ON a.id = r.account
        CROSS JOIN LATERAL (SELECT sum(x.debits_minor) AS debits_minor, sum(x.credits_minor) AS credits_minor,
      sum(x.pending_minor) AS pending_minor, max(x.updated_at) AS updated_at
    FROM issuing_balances x WHERE x.financial_account_id = a.id AND x.book = 'principal') b
        ORDER BY r.id;
      SELECT issuing_webhook_fan_out_events(array_agg(x.id), array_agg(x.program_id), array_agg(x.type), array_agg(x.created_at), p_channel)
        INTO n
        FROM (SELECT r.id, r.program_id, r.type, r.created_at
                FROM jsonb_to_recordset(p_rows->'events') AS r(id text, program_id text, type text, created_at timestamptz)
              UNION ALL
              SELECT r.id, r.program_id, 'balance.updated', r.created_at
                FROM jsonb_to_recordset(p_rows->'balance_events') AS r(id text, program_id text, created_at timestamptz)) x;
      RETURN coalesce(n, 0);
    END $$`

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
