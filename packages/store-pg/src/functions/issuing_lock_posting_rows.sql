-- The balance rows a posting between two accounts adds into, locked in the one order every write
-- takes them (docs/ledger.md#posting-rules): each wallet's rows (slot 0) and this backend's slot of
-- a settlement account's (docs/ledger.md#settlement-slots), by (account, book, slot). Returns the
-- slot the posting then adds into: the one place the slot rule is written. Each row's account is a
-- lookup by key (`OFFSET 0`), never a pass over the program's accounts.
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
          AND l.slot = CASE WHEN a.kind = 'settlement' THEN v_slot ELSE 0 END
        ORDER BY l.financial_account_id, l.book, l.slot FOR UPDATE OF l;
      RETURN v_slot;
    END $function$;
