import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Card transactions as card networks run them (docs/card-transactions.md): holds in the ledger.
 * The same columns as the SQLite migration of this id:
 *
 * - `issuing_balances.pending_minor`: on an account's principal row, what is posted but not
 *   available — the open holds of its card transactions and the inbound credits still PENDING on
 *   their rail. Every funds check is `credits − debits − pending ≥ amount`.
 * - `issuing_transactions` gains the card transaction's lifecycle (authorized, pending, settled
 *   amounts, the wallet account of the hold, `expires_at`, `card_events`, `request_history`) and
 *   the statuses VOIDED and EXPIRED.
 *
 * The posting functions learn the pending amounts:
 * - `issuing_post_transfer` checks funds against `credits − debits − pending`, adds each delta's
 *   pending change (`p_delta_pending`: an inbound credit PENDING on its rail is not available
 *   until it settles), and writes `balance.updated` for each wallet account it names in
 *   `p_balance_events` (the account as it stands after, composed here from its rows);
 * - `issuing_write_postings` and `issuing_post_decided` (a batch) do the same per batch: the
 *   pending deltas, the funds check against available, and one `balance.updated` per wallet
 *   account with the account as the batch leaves it;
 * - `issuing_post_card_message` (new) writes one message of a card transaction: the card still
 *   ACTIVE (FOR SHARE, as 0080), the wallet's principal row locked and its available amount
 *   checked when the message needs funds, the transaction row, the hold's change, the events and
 *   the account's `balance.updated` — one statement, so an authorization stays one round trip.
 *
 * The card authorizations written before (APPROVED: approved and posted at once) become what they
 * were, single-message authorizations: SETTLED, one FINANCIAL_AUTHORIZATION card event.
 */

/** The financial_account JSON of the API (ledger/Records.ts) for account row `a` and its principal balance row `b`. */
const ACCOUNT_JSON = `json_build_object(
    'id', a.id, 'object', 'financial_account', 'program_id', a.program_id, 'wallet_id', a.wallet_id, 'kind', a.kind,
    'currency', a.currency,
    'balance', json_build_object('amount', b.credits_minor - b.debits_minor, 'currency', a.currency),
    'pending_balance', json_build_object('amount', b.pending_minor, 'currency', a.currency),
    'available_balance', json_build_object('amount', b.credits_minor - b.debits_minor - b.pending_minor, 'currency', a.currency),
    'created_at', to_char(a.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'updated_at', to_char(b.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text`

/** `issuing_post_card_message` as this migration defines it. */
const POST_CARD_MESSAGE_0230 = `CREATE FUNCTION issuing_post_card_message(
      p_transaction jsonb, p_write text, p_account text, p_pending_delta bigint, p_require_available bigint,
      p_active_card text, p_now timestamptz,
      p_event_ids text[], p_event_types text[], p_event_data text[], p_balance_event_id text, p_channel text)
    RETURNS TABLE (posted boolean, available bigint, refusal text) LANGUAGE plpgsql AS $$
    DECLARE v_available bigint; v_card_state text; v_program text := p_transaction->>'program_id';
      v_ids text[] := p_event_ids; v_types text[] := p_event_types;
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
          SELECT p_balance_event_id, v_program, 'balance.updated', p_now, ${ACCOUNT_JSON}
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
      RETURN QUERY SELECT true, v_available, NULL::text;
    END $$`

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE issuing_balances ADD COLUMN pending_minor bigint NOT NULL DEFAULT 0 CHECK (pending_minor >= 0)`
  yield* sql`ALTER TABLE issuing_transactions DROP CONSTRAINT issuing_transactions_status_check`
  yield* sql`ALTER TABLE issuing_transactions ADD CONSTRAINT issuing_transactions_status_check
    CHECK (status IN ('PENDING', 'SETTLED', 'VOIDED', 'EXPIRED', 'APPROVED', 'DECLINED'))`
  yield* sql`ALTER TABLE issuing_transactions
    ADD COLUMN authorized_minor bigint,
    ADD COLUMN pending_minor bigint NOT NULL DEFAULT 0 CHECK (pending_minor >= 0),
    ADD COLUMN settled_minor bigint NOT NULL DEFAULT 0,
    ADD COLUMN financial_account_id text,
    ADD COLUMN expires_at timestamptz,
    ADD COLUMN card_events text NOT NULL DEFAULT '[]',
    ADD COLUMN request_history text NOT NULL DEFAULT '[]'`
  // The holds the expiry worker releases, soonest first.
  yield* sql`CREATE INDEX issuing_transactions_holds_by_expiry ON issuing_transactions (expires_at, id)
    WHERE status = 'PENDING' AND expires_at IS NOT NULL`
  yield* sql`UPDATE issuing_transactions t SET
      status = 'SETTLED', authorized_minor = t.amount_minor, settled_minor = t.amount_minor,
      financial_account_id = tr.from_financial_account_id,
      card_events = json_build_array(json_build_object(
        'id', coalesce(tr.id, t.id), 'type', 'FINANCIAL_AUTHORIZATION', 'amount', t.amount_minor, 'result', 'APPROVED',
        'decline_reason', NULL,
        'created_at', to_char(t.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')))::text
    FROM (SELECT t2.id AS transaction_id, (SELECT x.id FROM issuing_transfers x WHERE x.transaction_id = t2.id LIMIT 1) AS id,
                 (SELECT x.from_financial_account_id FROM issuing_transfers x WHERE x.transaction_id = t2.id LIMIT 1)
                   AS from_financial_account_id
          FROM issuing_transactions t2 WHERE t2.status = 'APPROVED' AND t2.card_id IS NOT NULL) tr
    WHERE tr.transaction_id = t.id`
  yield* sql`UPDATE issuing_transactions SET
      authorized_minor = amount_minor,
      card_events = json_build_array(json_build_object(
        'id', id, 'type', 'AUTHORIZATION', 'amount', amount_minor, 'result', 'DECLINED', 'decline_reason', decline_reason,
        'created_at', to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')))::text
    WHERE status = 'DECLINED' AND card_id IS NOT NULL`

  yield* sql`DROP FUNCTION issuing_post_transfers(jsonb, text)`
  yield* sql`DROP FUNCTION issuing_post_transfer(text, text, text, boolean, bigint, text, timestamptz, text, text, text,
    timestamptz, text, text, text, text, text, text, text, text, text[], text[], text[], bigint[], text[], text[], bigint[],
    bigint[], text[], text[], text[], text, text)`
  yield* sql.unsafe(`CREATE FUNCTION issuing_post_transfer(
      p_program_id text, p_source text, p_target text, p_check_funds boolean, p_amount bigint, p_currency text,
      p_now timestamptz,
      p_transaction_write text, p_transaction_id text, p_transaction_status text, p_transaction_created_at timestamptz,
      p_card_id text, p_mcc text, p_merchant_name text,
      p_transfer_id text, p_rail text, p_transfer_status text, p_description text,
      p_book_transfer_id text,
      p_entry_accounts text[], p_entry_books text[], p_entry_types text[], p_entry_amounts bigint[],
      p_delta_accounts text[], p_delta_books text[], p_delta_debits bigint[], p_delta_credits bigint[],
      p_event_ids text[], p_event_types text[], p_event_data text[], p_channel text, p_active_card text,
      p_delta_pending bigint[], p_balance_event_ids text[], p_balance_event_accounts text[])
    RETURNS TABLE (posted boolean, available bigint, refusal text) LANGUAGE plpgsql AS $$
    DECLARE v_available bigint; v_over boolean; v_card_state text; v_events integer := coalesce(array_length(p_event_ids, 1), 0);
      v_balance_events integer := coalesce(array_length(p_balance_event_ids, 1), 0);
    BEGIN
      IF p_active_card IS NOT NULL THEN
        SELECT c.state INTO v_card_state FROM issuing_cards c WHERE c.id = p_active_card FOR SHARE;
        IF v_card_state IS DISTINCT FROM 'ACTIVE' THEN
          RETURN QUERY SELECT false, NULL::bigint,
            CASE WHEN v_card_state = 'FROZEN' THEN 'card_frozen' ELSE 'card_closed' END;
          RETURN;
        END IF;
      END IF;
      SELECT max(b.credits_minor - b.debits_minor - b.pending_minor) FILTER (WHERE b.account = p_source AND b.book = 'principal'),
             coalesce(bool_or(b.debits_minor + d.debits > 9007199254740991 OR b.credits_minor + d.credits > 9007199254740991), false)
        INTO v_available, v_over
        FROM (SELECT l.financial_account_id AS account, l.book, l.debits_minor, l.credits_minor, l.pending_minor
              FROM issuing_balances l
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
      INSERT INTO issuing_balances (financial_account_id, book, currency, debits_minor, credits_minor, pending_minor, updated_at)
        SELECT d.account, d.book, p_currency, d.debits, d.credits, d.pending, p_now
        FROM unnest(p_delta_accounts, p_delta_books, p_delta_debits, p_delta_credits, p_delta_pending)
          AS d(account, book, debits, credits, pending)
        ORDER BY d.account, d.book
        ON CONFLICT (financial_account_id, book) DO UPDATE SET
          debits_minor = issuing_balances.debits_minor + excluded.debits_minor,
          credits_minor = issuing_balances.credits_minor + excluded.credits_minor,
          pending_minor = issuing_balances.pending_minor + excluded.pending_minor,
          updated_at = excluded.updated_at;
      IF v_balance_events > 0 THEN
        INSERT INTO issuing_events (id, program_id, type, created_at, data)
          SELECT v.id, p_program_id, 'balance.updated', p_now, ${ACCOUNT_JSON}
          FROM unnest(p_balance_event_ids, p_balance_event_accounts) WITH ORDINALITY AS v(id, account, ord)
          JOIN issuing_financial_accounts a ON a.id = v.account
          JOIN issuing_balances b ON b.financial_account_id = a.id AND b.book = 'principal'
          ORDER BY v.ord;
      END IF;
      IF v_events + v_balance_events > 0 THEN
        PERFORM issuing_webhook_fan_out_events(p_event_ids || p_balance_event_ids,
          array_fill(p_program_id, ARRAY[v_events + v_balance_events]),
          p_event_types || array_fill('balance.updated'::text, ARRAY[v_balance_events]),
          array_fill(p_now, ARRAY[v_events + v_balance_events]), p_channel);
      END IF;
      RETURN QUERY SELECT true, v_available, NULL::text;
    END $$`)

  // 0080's loop over a run of postings, passing the new arguments.
  yield* sql`CREATE FUNCTION issuing_post_transfers(p_postings jsonb, p_channel text)
    RETURNS TABLE (ord integer, posted boolean, available bigint, refusal text) LANGUAGE plpgsql AS $$
    DECLARE p jsonb; r record; i integer := 0;
    BEGIN
      FOR p IN SELECT e.value FROM jsonb_array_elements(p_postings) WITH ORDINALITY AS e(value, n) ORDER BY e.n LOOP
        i := i + 1;
        SELECT * INTO r FROM issuing_post_transfer(
          p->>'program_id', p->>'source', p->>'target', (p->>'check_funds')::boolean, (p->>'amount')::bigint, p->>'currency',
          (p->>'now')::timestamptz,
          p->>'transaction_write', p->>'transaction_id', p->>'transaction_status', (p->>'transaction_created_at')::timestamptz,
          p->>'card_id', p->>'mcc', p->>'merchant_name',
          p->>'transfer_id', p->>'rail', p->>'transfer_status', p->>'description',
          p->>'book_transfer_id',
          ARRAY(SELECT x FROM jsonb_array_elements_text(p->'entry_accounts') WITH ORDINALITY AS a(x, n) ORDER BY a.n),
          ARRAY(SELECT x FROM jsonb_array_elements_text(p->'entry_books') WITH ORDINALITY AS a(x, n) ORDER BY a.n),
          ARRAY(SELECT x FROM jsonb_array_elements_text(p->'entry_types') WITH ORDINALITY AS a(x, n) ORDER BY a.n),
          ARRAY(SELECT x::bigint FROM jsonb_array_elements_text(p->'entry_amounts') WITH ORDINALITY AS a(x, n) ORDER BY a.n),
          ARRAY(SELECT x FROM jsonb_array_elements_text(p->'delta_accounts') WITH ORDINALITY AS a(x, n) ORDER BY a.n),
          ARRAY(SELECT x FROM jsonb_array_elements_text(p->'delta_books') WITH ORDINALITY AS a(x, n) ORDER BY a.n),
          ARRAY(SELECT x::bigint FROM jsonb_array_elements_text(p->'delta_debits') WITH ORDINALITY AS a(x, n) ORDER BY a.n),
          ARRAY(SELECT x::bigint FROM jsonb_array_elements_text(p->'delta_credits') WITH ORDINALITY AS a(x, n) ORDER BY a.n),
          ARRAY(SELECT x FROM jsonb_array_elements_text(p->'event_ids') WITH ORDINALITY AS a(x, n) ORDER BY a.n),
          ARRAY(SELECT x FROM jsonb_array_elements_text(p->'event_types') WITH ORDINALITY AS a(x, n) ORDER BY a.n),
          ARRAY(SELECT x FROM jsonb_array_elements_text(p->'event_data') WITH ORDINALITY AS a(x, n) ORDER BY a.n),
          p_channel, p->>'active_card',
          ARRAY(SELECT x::bigint FROM jsonb_array_elements_text(p->'delta_pending') WITH ORDINALITY AS a(x, n) ORDER BY a.n),
          ARRAY(SELECT x FROM jsonb_array_elements_text(p->'balance_event_ids') WITH ORDINALITY AS a(x, n) ORDER BY a.n),
          ARRAY(SELECT x FROM jsonb_array_elements_text(p->'balance_event_accounts') WITH ORDINALITY AS a(x, n) ORDER BY a.n));
        ord := i; posted := r.posted; available := r.available; refusal := r.refusal;
        RETURN NEXT;
      END LOOP;
    END $$`

  // A batch's rows (0090), with the pending deltas and a balance.updated per wallet account
  // (p_rows->'balance_events': {id, program_id, account, created_at}) as the batch leaves it.
  yield* sql.unsafe(`CREATE OR REPLACE FUNCTION issuing_write_postings(p_rows jsonb, p_channel text)
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
      INSERT INTO issuing_balances (financial_account_id, book, currency, debits_minor, credits_minor, pending_minor, updated_at)
        SELECT r.financial_account_id, r.book, r.currency, r.debits_minor, r.credits_minor, coalesce(r.pending_minor, 0), r.updated_at
        FROM jsonb_to_recordset(p_rows->'balances') AS r(financial_account_id text, book text, currency text, debits_minor bigint,
          credits_minor bigint, pending_minor bigint, updated_at timestamptz)
        ORDER BY r.financial_account_id, r.book
        ON CONFLICT (financial_account_id, book) DO UPDATE SET
          debits_minor = issuing_balances.debits_minor + excluded.debits_minor,
          credits_minor = issuing_balances.credits_minor + excluded.credits_minor,
          pending_minor = issuing_balances.pending_minor + excluded.pending_minor,
          updated_at = excluded.updated_at;
      INSERT INTO issuing_events (id, program_id, type, created_at, data)
        SELECT r.id, r.program_id, r.type, r.created_at, r.data
        FROM jsonb_to_recordset(p_rows->'events') AS r(id text, program_id text, type text, created_at timestamptz, data text);
      INSERT INTO issuing_events (id, program_id, type, created_at, data)
        SELECT r.id, r.program_id, 'balance.updated', r.created_at, ${ACCOUNT_JSON}
        FROM jsonb_to_recordset(p_rows->'balance_events') AS r(id text, program_id text, account text, created_at timestamptz)
        JOIN issuing_financial_accounts a ON a.id = r.account
        JOIN issuing_balances b ON b.financial_account_id = a.id AND b.book = 'principal'
        ORDER BY r.id;
      SELECT issuing_webhook_fan_out_events(array_agg(x.id), array_agg(x.program_id), array_agg(x.type), array_agg(x.created_at), p_channel)
        INTO n
        FROM (SELECT r.id, r.program_id, r.type, r.created_at
                FROM jsonb_to_recordset(p_rows->'events') AS r(id text, program_id text, type text, created_at timestamptz)
              UNION ALL
              SELECT r.id, r.program_id, 'balance.updated', r.created_at
                FROM jsonb_to_recordset(p_rows->'balance_events') AS r(id text, program_id text, created_at timestamptz)) x;
      RETURN coalesce(n, 0);
    END $$`)

  // 0100's re-decision under the locks, with the pending amounts.
  yield* sql`CREATE OR REPLACE FUNCTION issuing_post_decided(p_rows jsonb, p_postings jsonb, p_balances jsonb, p_channel text)
    RETURNS bigint[] LANGUAGE plpgsql AS $$
    DECLARE
      v_accounts text[];
      v_disagree boolean;
      v_available bigint[];
    BEGIN
      PERFORM issuing_write_postings(p_rows - 'balance_events', p_channel);
      SELECT array_agg(DISTINCT d->>'account') INTO v_accounts
        FROM jsonb_array_elements(p_postings) AS p, jsonb_array_elements(p->'deltas') AS d;
      PERFORM 1 FROM issuing_balances WHERE financial_account_id = ANY (v_accounts)
        ORDER BY financial_account_id, book FOR UPDATE;
      WITH p AS (
        SELECT ord, x->>'source' AS source, (x->>'amount')::numeric AS amount, (x->>'check_funds')::boolean AS check_funds,
               (x->>'posted')::boolean AS posted, x->>'refusal' AS refusal, x->'deltas' AS deltas
        FROM jsonb_array_elements(p_postings) WITH ORDINALITY AS t(x, ord)
      ), d AS (
        SELECT p.ord, p.posted, p.source, e->>'account' AS account, e->>'book' AS book,
               (e->>'debits')::numeric AS debits, (e->>'credits')::numeric AS credits,
               coalesce((e->>'pending')::numeric, 0) AS pending
        FROM p, jsonb_array_elements(p.deltas) AS e
      ), running AS (
        SELECT d.*,
               coalesce(b.debits_minor, 0) + coalesce(sum(CASE WHEN d.posted THEN d.debits ELSE 0 END) OVER w, 0) AS debits_before,
               coalesce(b.credits_minor, 0) + coalesce(sum(CASE WHEN d.posted THEN d.credits ELSE 0 END) OVER w, 0) AS credits_before,
               coalesce(b.pending_minor, 0) + coalesce(sum(CASE WHEN d.posted THEN d.pending ELSE 0 END) OVER w, 0) AS pending_before
        FROM d LEFT JOIN issuing_balances b ON b.financial_account_id = d.account AND b.book = d.book
        WINDOW w AS (PARTITION BY d.account, d.book ORDER BY d.ord ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
      ), per AS (
        SELECT ord,
               max(CASE WHEN account = source AND book = 'principal' THEN credits_before - debits_before - pending_before END) AS available,
               bool_or(debits_before + debits > 9007199254740991 OR credits_before + credits > 9007199254740991) AS over
        FROM running GROUP BY ord
      ), verdict AS (
        SELECT p.ord, p.check_funds, p.posted, p.refusal, coalesce(per.available, 0) AS available,
               CASE WHEN p.check_funds AND coalesce(per.available, 0) < p.amount THEN 'insufficient_funds'
                    WHEN coalesce(per.over, false) THEN 'balance_limit_exceeded' END AS refusal_now
        FROM p LEFT JOIN per ON per.ord = p.ord
      )
      SELECT bool_or((refusal_now IS NULL) <> posted OR refusal_now IS DISTINCT FROM refusal),
             array_agg(CASE WHEN check_funds THEN available ELSE 0 END::bigint ORDER BY ord)
        INTO v_disagree, v_available
        FROM verdict;
      IF v_disagree THEN
        RAISE EXCEPTION 'the batch was decided otherwise under the balance locks' USING ERRCODE = 'IB409';
      END IF;
      PERFORM issuing_write_postings(jsonb_build_object('balances', p_balances, 'balance_events', p_rows->'balance_events'), p_channel);
      RETURN v_available;
    END $$`

  yield* sql.unsafe(POST_CARD_MESSAGE_0230)
})
