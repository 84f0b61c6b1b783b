import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The balance rows a posting between two accounts adds into, locked in the one order every write
 * takes them (docs/ledger.md#posting-rules): each wallet's rows (slot 0) and this backend's slot of
 * a settlement account's (docs/ledger.md#settlement-slots), by (account, book, slot). Returns the
 * slot, which the posting then adds into. The one place the slot rule is written.
 */
const LOCK_POSTING_ROWS = `CREATE FUNCTION issuing_lock_posting_rows(p_source text, p_target text)
    RETURNS smallint LANGUAGE plpgsql AS $$
    DECLARE v_slot smallint := pg_backend_pid() % 16;
    BEGIN
      PERFORM 1 FROM issuing_balances l JOIN issuing_financial_accounts a ON a.id = l.financial_account_id
        WHERE l.financial_account_id IN (p_source, p_target)
          AND l.slot = CASE WHEN a.kind = 'settlement' THEN v_slot ELSE 0 END
        ORDER BY l.financial_account_id, l.book, l.slot FOR UPDATE OF l;
      RETURN v_slot;
    END $$`

/**
 * 0320's `issuing_post_transfer`, its rows locked (and its slot chosen) by `issuing_lock_posting_rows`:
 * the text this migration ran, written out whole.
 */
const POST_TRANSFER_0470 = `CREATE OR REPLACE FUNCTION issuing_post_transfer(
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
      v_slot smallint;
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
      v_slot := issuing_lock_posting_rows(p_source, p_target);
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
      PERFORM set_config('issuing.posting_counted',
        CASE WHEN p_transaction_write = 'insert' THEN ' transactions ' ELSE '' END || ' transfers book_transfers events ', true);
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
      INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
        SELECT c.list, p_program_id, c.key, pg_backend_pid() % 16, count(*)
        FROM (
          SELECT 1 AS rank, 'transactions' AS list, s.v || '|' || cd.v AS key
            FROM (VALUES (''), ('=' || p_transaction_status)) s(v)
            CROSS JOIN (SELECT '' UNION ALL SELECT '=' || p_card_id WHERE p_card_id IS NOT NULL) cd(v)
            WHERE p_transaction_write = 'insert'
          UNION ALL
          SELECT 2, 'transfers', s.v || '|' || r.v || '|' || a.v
            FROM (VALUES (''), ('=' || p_transfer_status)) s(v)
            CROSS JOIN (VALUES (''), ('=' || p_rail)) r(v)
            CROSS JOIN (SELECT '' UNION SELECT '=' || x FROM unnest(ARRAY[p_source, p_target]) x WHERE x IS NOT NULL) a(v)
          UNION ALL
          SELECT 3, 'book_transfers', '|'
          UNION ALL
          SELECT DISTINCT 4, 'book_transfers', k.v
            FROM unnest(p_entry_accounts, p_entry_books) e(account, book)
            CROSS JOIN LATERAL (VALUES ('=' || e.account || '|'), ('|=' || e.book), ('=' || e.account || '|=' || e.book)) k(v)
          UNION ALL
          SELECT 5, 'events', k.v
            FROM unnest(coalesce(p_event_types, '{}') || array_fill('balance.updated'::text, ARRAY[v_balance_events])) t(type)
            CROSS JOIN LATERAL (VALUES (''), ('=' || t.type)) k(v)
        ) c
        GROUP BY c.list, c.key
        ORDER BY min(c.rank), c.key
        ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      PERFORM set_config('issuing.posting_counted', '', true);
      IF v_events + v_balance_events > 0 THEN
        PERFORM issuing_webhook_fan_out_events(p_event_ids || p_balance_event_ids,
          array_fill(p_program_id, ARRAY[v_events + v_balance_events]),
          p_event_types || array_fill('balance.updated'::text, ARRAY[v_balance_events]),
          array_fill(p_now, ARRAY[v_events + v_balance_events]), p_channel);
      END IF;
      RETURN QUERY SELECT true, v_available, NULL::text;
    END $$`

/**
 * 0230's `issuing_post_card_message`, taking its transfer (`p_transfer`, one element of
 * `issuing_post_transfers`' array, NULL for none) and that transfer's locks first, then posting it
 * after the transaction row: the text this migration ran, written out whole.
 */
const POST_CARD_MESSAGE_0470 = `CREATE FUNCTION issuing_post_card_message(
      p_transaction jsonb, p_write text, p_account text, p_pending_delta bigint, p_require_available bigint,
      p_active_card text, p_now timestamptz,
      p_event_ids text[], p_event_types text[], p_event_data text[], p_balance_event_id text, p_channel text,
      p_transfer jsonb)
    RETURNS TABLE (posted boolean, available bigint, refusal text) LANGUAGE plpgsql AS $$
    DECLARE v_available bigint; v_card_state text; v_program text := p_transaction->>'program_id';
      v_ids text[] := p_event_ids; v_types text[] := p_event_types; v_transfer record;
    BEGIN
      IF p_active_card IS NOT NULL THEN
        SELECT c.state INTO v_card_state FROM issuing_cards c WHERE c.id = p_active_card FOR SHARE;
        IF v_card_state IS DISTINCT FROM 'ACTIVE' THEN
          RETURN QUERY SELECT false, NULL::bigint,
            CASE WHEN v_card_state = 'FROZEN' THEN 'card_frozen' ELSE 'card_closed' END;
          RETURN;
        END IF;
      END IF;
      -- The wallet's principal row, locked when the message moves its hold or needs its funds (a
      -- decline does neither: it locks nothing).
      IF p_require_available > 0 OR p_pending_delta <> 0 THEN
        IF p_transfer IS NOT NULL THEN
          PERFORM issuing_lock_posting_rows(p_transfer->>'source', p_transfer->>'target');
        END IF;
        SELECT b.credits_minor - b.debits_minor - b.pending_minor INTO v_available FROM issuing_balances b
          WHERE b.financial_account_id = p_account AND b.book = 'principal' FOR UPDATE;
        v_available := coalesce(v_available, 0);
        IF p_require_available > 0 AND v_available < p_require_available THEN
          RETURN QUERY SELECT false, v_available, 'insufficient_funds';
          RETURN;
        END IF;
      END IF;
      IF p_write = 'insert' THEN
        INSERT INTO issuing_transactions SELECT * FROM jsonb_populate_record(NULL::issuing_transactions, p_transaction);
      ELSE
        UPDATE issuing_transactions t SET status = r.status, amount_minor = r.amount_minor, decline_reason = r.decline_reason,
            authorized_minor = r.authorized_minor, pending_minor = r.pending_minor, settled_minor = r.settled_minor,
            expires_at = r.expires_at, card_events = r.card_events, request_history = r.request_history, updated_at = r.updated_at
          FROM jsonb_populate_record(NULL::issuing_transactions, p_transaction) r
          WHERE t.id = r.id;
      END IF;
      IF p_pending_delta <> 0 THEN
        UPDATE issuing_balances SET pending_minor = pending_minor + p_pending_delta, updated_at = p_now
          WHERE financial_account_id = p_account AND book = 'principal';
      END IF;
      INSERT INTO issuing_events (id, program_id, type, created_at, data)
        SELECT v.id, v_program, v.type, p_now, v.data
        FROM unnest(p_event_ids, p_event_types, p_event_data) WITH ORDINALITY AS v(id, type, data, ord)
        ORDER BY v.ord;
      IF p_balance_event_id IS NOT NULL THEN
        INSERT INTO issuing_events (id, program_id, type, created_at, data)
          SELECT p_balance_event_id, v_program, 'balance.updated', p_now, json_build_object(
    'id', a.id, 'object', 'financial_account', 'program_id', a.program_id, 'wallet_id', a.wallet_id, 'kind', a.kind,
    'currency', a.currency,
    'balance', json_build_object('amount', b.credits_minor - b.debits_minor, 'currency', a.currency),
    'pending_balance', json_build_object('amount', b.pending_minor, 'currency', a.currency),
    'available_balance', json_build_object('amount', b.credits_minor - b.debits_minor - b.pending_minor, 'currency', a.currency),
    'created_at', to_char(a.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'updated_at', to_char(b.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text
          FROM issuing_financial_accounts a
          JOIN issuing_balances b ON b.financial_account_id = a.id AND b.book = 'principal'
          WHERE a.id = p_account;
        v_ids := v_ids || p_balance_event_id;
        v_types := v_types || 'balance.updated'::text;
      END IF;
      IF coalesce(array_length(v_ids, 1), 0) > 0 THEN
        PERFORM issuing_webhook_fan_out_events(v_ids, array_fill(v_program, ARRAY[array_length(v_ids, 1)]), v_types,
          array_fill(p_now, ARRAY[array_length(v_ids, 1)]), p_channel);
      END IF;
      IF p_transfer IS NOT NULL THEN
        SELECT x.posted, x.available, x.refusal INTO v_transfer FROM issuing_post_transfers(jsonb_build_array(p_transfer), p_channel) x;
        IF NOT v_transfer.posted THEN
          RETURN QUERY SELECT false, v_transfer.available, v_transfer.refusal;
          RETURN;
        END IF;
      END IF;
      RETURN QUERY SELECT true, v_available, NULL::text;
    END $$`

/**
 * Migration 0470: a card message is ONE statement, its transfer included
 * (docs/card-transactions.md#what-a-message-writes).
 *
 * `issuing_post_card_message` gains `p_transfer`: the message's transfer as one element of
 * `issuing_post_transfers`' array (NULL when the message moves no money), posted through that
 * function after the message's rows, in the same statement. Before, the store sent the message and
 * then its transfer as two statements of the caller's transaction, and — for a message that both
 * locks the wallet's row and posts a transfer (a clearing, a single-message approval) — a third
 * before them that locked the transfer's balance rows, repeating in TypeScript the lock statement
 * and slot rule of `issuing_post_transfer`. That lock is now `issuing_lock_posting_rows`, which both
 * functions call: the message takes the transfer's rows in (account, book, slot) order before the
 * wallet's row, as a return from the settlement account into the wallet takes them, so the two
 * cannot deadlock; and a message's rows and its transfer are written by one statement.
 *
 * The rest of the message is 0230's text with the four changes above: the card still ACTIVE (FOR
 * SHARE), the wallet's principal row locked when the hold moves or funds are needed, the
 * transaction written, the pending amount moved, the events written and fanned out. When its
 * transfer is refused (only the balance bounds can refuse it: it has no funds check), the call
 * answers the transfer's refusal and the caller's transaction rolls the message back, as before.
 *
 * Functions only, no row changes: it runs the same on a populated database.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(LOCK_POSTING_ROWS)
  yield* sql.unsafe(POST_TRANSFER_0470)
  yield* sql`DROP FUNCTION issuing_post_card_message(jsonb, text, text, bigint, bigint, text, timestamptz, text[], text[], text[], text, text)`
  yield* sql.unsafe(POST_CARD_MESSAGE_0470)
})
