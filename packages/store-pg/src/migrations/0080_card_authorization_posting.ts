import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Card authorizations without a transaction held open (docs/ledger.md#card-authorizations):
 * `issuing_post_transfer` takes `p_active_card` — a card authorization's card, refused
 * (`card_frozen` / `card_closed`, nothing written) unless it is still ACTIVE, read FOR SHARE in
 * the posting itself. An authorization of a card without a spending window is then one statement
 * in autocommit, so the program's settlement balance row is locked only for that statement and
 * its commit, not across the round trips of a transaction. Otherwise the same function as 0040
 * (whose text it repeats: migrations are append-only); `issuing_post_transfers` passes the new
 * argument from each posting's `active_card`.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`DROP FUNCTION issuing_post_transfers(jsonb, text)`
  yield* sql`DROP FUNCTION issuing_post_transfer(
      text, text, text, boolean, bigint, text, timestamptz, text, text, text, timestamptz, text, text, text,
      text, text, text, text, text, text[], text[], text[], bigint[], text[], text[], bigint[], bigint[],
      text[], text[], text[], text)`
  yield* sql`CREATE FUNCTION issuing_post_transfer(
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
    DECLARE v_available bigint; v_over boolean := false; r record; v_card_state text;
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
      -- One pass over the locked balance rows, taken in a fixed order (transfers crossing in
      -- opposite directions cannot deadlock): the source's available balance, and whether any
      -- running total would pass 2^53 - 1 (so the API's JSON numbers stay exact). Reading them in
      -- the lock query itself saves two statements per transfer.
      FOR r IN SELECT b.financial_account_id AS account, b.book, b.debits_minor, b.credits_minor FROM issuing_balances b
          WHERE b.financial_account_id IN (p_source, p_target) ORDER BY b.financial_account_id, b.book FOR UPDATE LOOP
        IF p_check_funds AND r.account = p_source AND r.book = 'principal' THEN
          v_available := r.credits_minor - r.debits_minor;
        END IF;
        FOR i IN 1 .. coalesce(array_length(p_delta_accounts, 1), 0) LOOP
          IF p_delta_accounts[i] = r.account AND p_delta_books[i] = r.book
             AND (r.debits_minor + p_delta_debits[i] > 9007199254740991 OR r.credits_minor + p_delta_credits[i] > 9007199254740991) THEN
            v_over := true;
          END IF;
        END LOOP;
      END LOOP;
      IF p_check_funds THEN
        v_available := coalesce(v_available, 0);
        IF v_available < p_amount THEN
          RETURN QUERY SELECT false, v_available, 'insufficient_funds';
          RETURN;
        END IF;
      END IF;
      IF v_over THEN
        RETURN QUERY SELECT false, v_available, 'balance_limit_exceeded';
        RETURN;
      END IF;
      IF p_transaction_write = 'insert' THEN
        INSERT INTO issuing_transactions
          (id, program_id, status, amount_minor, currency, card_id, decline_reason, mcc, merchant_name, created_at, updated_at)
          VALUES (p_transaction_id, p_program_id, p_transaction_status, p_amount, p_currency, p_card_id, NULL, p_mcc,
                  p_merchant_name, p_transaction_created_at, p_now);
      ELSIF p_transaction_write = 'update' THEN
        UPDATE issuing_transactions SET status = p_transaction_status, updated_at = p_now WHERE id = p_transaction_id;
      END IF;
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
      RETURN QUERY SELECT true, v_available, NULL::text;
    END $$`
  // Many postings in ONE statement (a batch's run of transfers): each posted by issuing_post_transfer
  // in order; a refused one writes nothing and the next goes on. The postings come as one jsonb
  // array, so a run of a hundred transfers is one round trip instead of a hundred.
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
          p_channel, p->>'active_card');
        ord := i; posted := r.posted; available := r.available; refusal := r.refusal;
        RETURN NEXT;
      END LOOP;
    END $$`
})
