-- Many postings in ONE statement (a batch's run that is not all new transfers): each posting record
-- of `p_postings` (store-pg/src/PostingRecord.ts) posted by issuing_post_transfer in order, one
-- answer row per posting (its position in `ord`); a refused posting writes nothing and the next
-- goes on.
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
        SELECT * INTO r FROM issuing_post_transfer(p, p_channel);
        ord := i; posted := r.posted; available := r.available; refusal := r.refusal;
        RETURN NEXT;
      END LOOP;
    END $function$;
