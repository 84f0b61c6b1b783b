-- One message of a card transaction in ONE statement (docs/card-transactions.md#what-a-message-writes):
-- the card still ACTIVE (FOR SHARE, which a freeze waits for), the wallet's principal row locked and
-- its available amount checked when the message moves its hold or needs funds (the transfer's rows
-- first, in the order every posting takes them, so a return cannot deadlock against it), the
-- transaction row, the hold's change, the events and their fan-out, the account's balance.updated,
-- then the message's transfer (`p_transfer`, a posting record of issuing_post_transfer, NULL when
-- the message moves no money). A refusal answers (false, available, refusal) and writes nothing of
-- its own; a refused transfer is answered too, and the caller's transaction rolls the message back.
CREATE OR REPLACE FUNCTION issuing_post_card_message(
    p_transaction jsonb,
    p_write text,
    p_account text,
    p_pending_delta bigint,
    p_require_available bigint,
    p_active_card text,
    p_now timestamp with time zone,
    p_event_ids text[],
    p_event_types text[],
    p_event_data text[],
    p_balance_event_id text,
    p_channel text,
    p_transfer jsonb
)
 RETURNS TABLE(posted boolean, available bigint, refusal text)
 LANGUAGE plpgsql
AS $function$
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
          SELECT p_balance_event_id, v_program, 'balance.updated', p_now,
                 issuing_account_json(a, b.debits_minor, b.credits_minor, b.pending_minor, b.updated_at)
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
        SELECT x.posted, x.available, x.refusal INTO v_transfer FROM issuing_post_transfer(p_transfer, p_channel) x;
        IF NOT v_transfer.posted THEN
          RETURN QUERY SELECT false, v_transfer.available, v_transfer.refusal;
          RETURN;
        END IF;
      END IF;
      RETURN QUERY SELECT true, v_available, NULL::text;
    END $function$;
