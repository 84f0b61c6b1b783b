-- The balance-row slot a posting adds into for an account of `p_kind`: a wallet's one row (slot 0),
-- a settlement account's row of this backend's slot (docs/ledger.md#settlement-slots), so that
-- concurrent postings through one settlement account lock different rows. The one place the slot
-- rule is written (issuing_lock_posting_rows, issuing_post_transfer); a SQL function of one
-- expression, inlined into each caller's statement.
CREATE OR REPLACE FUNCTION issuing_posting_slot(
    p_kind text
)
 RETURNS smallint
 LANGUAGE sql
 STABLE
AS $function$
  SELECT CASE WHEN p_kind = 'settlement' THEN (pg_backend_pid() % 16)::smallint ELSE 0::smallint END
$function$;
