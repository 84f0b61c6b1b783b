-- Many postings in ONE statement (a batch's run that is not all new transfers): each element of
-- `p_postings` posted by issuing_post_transfer in order, one answer row per posting (its position in
-- `ord`); a refused posting writes nothing and the next goes on.
CREATE OR REPLACE FUNCTION issuing_post_transfers(
    p_postings jsonb,
    p_channel text
)
 RETURNS TABLE(ord integer, posted boolean, available bigint, refusal text)
 LANGUAGE plpgsql
AS $function$
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
    END $function$;
