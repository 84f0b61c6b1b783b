-- The balance rows a posting between two accounts adds into, locked in the one order every write
-- takes them (docs/ledger.md#posting-rules): each wallet's rows (slot 0) and this backend's slot of
-- a settlement account's (issuing_posting_slot), by (account, book, slot), for a card message's
-- transfer (issuing_post_card_message; issuing_post_transfer locks in the statement that sums them).
-- Returns this backend's slot. Each row's account is a lookup by key (`OFFSET 0`), never a pass over
-- the program's accounts.
CREATE OR REPLACE FUNCTION issuing_lock_posting_rows(
    p_source text,
    p_target text
)
 RETURNS smallint
 LANGUAGE plpgsql
AS $function$
    DECLARE v_slot smallint := pg_backend_pid() % 16;
    BEGIN
      PERFORM 1 FROM issuing_balances l
        CROSS JOIN LATERAL (SELECT a.kind FROM issuing_financial_accounts a WHERE a.id = l.financial_account_id OFFSET 0) a
        WHERE l.financial_account_id IN (p_source, p_target)
          AND l.slot = issuing_posting_slot(a.kind)
        ORDER BY l.financial_account_id, l.book, l.slot FOR UPDATE OF l;
      RETURN v_slot;
    END $function$;
