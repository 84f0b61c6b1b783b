import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * `metadata` on wallets, cards, transfers and webhook subscriptions (docs/api.md#metadata): the
 * caller's key-value pairs as JSON text, `{}` for every row written before. The same columns as
 * the SQLite migration of this id. No index: metadata is never searched.
 *
 * The posting functions write the transfer row, so they learn the column (their bodies otherwise
 * as 0230 made them):
 * - `issuing_post_transfer` takes `p_metadata text` last (a new argument: dropped and created);
 * - `issuing_post_transfers` passes each posting's `metadata` (`{}` when absent);
 * - `issuing_write_postings` reads `metadata` from each row of `p_rows->'transfers'` (`{}` when
 *   absent). `issuing_post_decided` hands its rows to it unchanged and is not redefined.
 * A transfer without metadata writes `'{}'` in the one column: nothing else is added to the hot path.
 */
/** The financial_account JSON of 0230's functions for account row `a` and its principal balance row `b`, as this migration ran it. */
const ACCOUNT_JSON = `json_build_object(
    'id', a.id, 'object', 'financial_account', 'program_id', a.program_id, 'wallet_id', a.wallet_id, 'kind', a.kind,
    'currency', a.currency,
    'balance', json_build_object('amount', b.credits_minor - b.debits_minor, 'currency', a.currency),
    'pending_balance', json_build_object('amount', b.pending_minor, 'currency', a.currency),
    'available_balance', json_build_object('amount', b.credits_minor - b.debits_minor - b.pending_minor, 'currency', a.currency),
    'created_at', to_char(a.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'updated_at', to_char(b.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text`

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const table of ["issuing_wallets", "issuing_cards", "issuing_transfers", "issuing_webhook_subscriptions"]) {
    yield* sql.unsafe(`ALTER TABLE ${table} ADD COLUMN metadata text NOT NULL DEFAULT '{}'`)
  }

  yield* sql`DROP FUNCTION issuing_post_transfer(text, text, text, boolean, bigint, text, timestamptz, text, text, text,
    timestamptz, text, text, text, text, text, text, text, text, text[], text[], text[], bigint[], text[], text[], bigint[],
    bigint[], text[], text[], text[], text, text, bigint[], text[], text[])`
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
      p_delta_pending bigint[], p_balance_event_ids text[], p_balance_event_accounts text[], p_metadata text)
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
           to_financial_account_id, status, description, metadata, created_at, updated_at)
          VALUES (p_transfer_id, p_program_id, p_transaction_id, p_rail, p_amount, p_currency, p_source, p_target,
                  p_transfer_status, p_description, p_metadata, p_now, p_now)
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

  // 0230's loop over a run of postings, passing each one's metadata.
  yield* sql`CREATE OR REPLACE FUNCTION issuing_post_transfers(p_postings jsonb, p_channel text)
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
          ARRAY(SELECT x FROM jsonb_array_elements_text(p->'balance_event_accounts') WITH ORDINALITY AS a(x, n) ORDER BY a.n),
          coalesce(p->>'metadata', '{}'));
        ord := i; posted := r.posted; available := r.available; refusal := r.refusal;
        RETURN NEXT;
      END LOOP;
    END $$`

  // 0230's rows of a batch, with each transfer's metadata.
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
})
