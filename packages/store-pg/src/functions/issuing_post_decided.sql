-- A batch decided in the process over balances read without locks, written in ONE statement that
-- holds the balance-row locks only briefly (docs/ledger.md#batches): the postings' new rows first
-- (issuing_write_postings), then every slot of the batch's accounts locked in (account, book, slot)
-- order, the batch's decision checked against what those rows hold now, and the summed deltas and
-- balance.updated written only if it stands. Otherwise SQLSTATE IB409 rolls the statement back and
-- the process runs the batch the locked way. `p_rows`: issuing_write_postings' rows but the
-- balance.updated events, which are `p_balance_events` (written after the balances; a parameter of
-- their own, as taking them out of `p_rows` would copy the whole document). `p_postings`: each
-- posting in order as { source, amount, check_funds, posted, refusal, available } (`available`: its
-- source's available principal before it, as the process decided it). `p_read`: every (account,
-- book) the postings touch as { account, book, debits, credits, pending }, the totals the process
-- decided over (0 where it read no row). `p_balances`: the summed deltas of the postings that post.
-- The decision stands when every total moved only by debits and credits added (which never shrink)
-- and pending changed, each posting's available principal is what it was plus what its source's
-- moved, the funds check gives the same answers over that, and no total after the batch is over the
-- limit (a posting over it then was still over it now; none under it now is over it before its
-- turn, as totals only grow along the batch): a check per posting and per row, no running totals.
-- Answers each posting's available principal as read under the locks.
CREATE OR REPLACE FUNCTION issuing_post_decided(
    p_rows jsonb,
    p_balance_events jsonb,
    p_postings jsonb,
    p_read jsonb,
    p_balances jsonb,
    p_channel text
)
 RETURNS bigint[]
 LANGUAGE plpgsql
AS $function$
    DECLARE
      v_accounts text[];
      v_disagree boolean;
      v_available bigint[];
    BEGIN
      PERFORM issuing_write_postings(p_rows, p_channel);
      SELECT array_agg(DISTINCT r.account) INTO v_accounts FROM jsonb_to_recordset(p_read) AS r(account text);
      PERFORM 1 FROM issuing_balances WHERE financial_account_id = ANY (v_accounts)
        ORDER BY financial_account_id, book, slot FOR UPDATE;
      WITH moved AS (
        SELECT r.account, r.book,
               coalesce(n.debits_minor, 0) - r.debits AS debits, coalesce(n.credits_minor, 0) - r.credits AS credits,
               coalesce(n.pending_minor, 0) - r.pending AS pending,
               coalesce(n.debits_minor, 0) + coalesce(b.debits_minor, 0) > 9007199254740991
                 OR coalesce(n.credits_minor, 0) + coalesce(b.credits_minor, 0) > 9007199254740991 AS over
        FROM jsonb_to_recordset(p_read) AS r(account text, book text, debits numeric, credits numeric, pending numeric)
        LEFT JOIN (SELECT x.financial_account_id, x.book, sum(x.debits_minor) AS debits_minor,
                          sum(x.credits_minor) AS credits_minor, sum(x.pending_minor) AS pending_minor
                   FROM issuing_balances x WHERE x.financial_account_id = ANY (v_accounts)
                   GROUP BY x.financial_account_id, x.book) n
          ON n.financial_account_id = r.account AND n.book = r.book
        LEFT JOIN jsonb_to_recordset(p_balances) AS b(financial_account_id text, book text, debits_minor numeric, credits_minor numeric)
          ON b.financial_account_id = r.account AND b.book = r.book
      ), principal AS (
        -- What each account's principal moved by, looked up by key per posting: a join with
        -- `moved` is planned as a nested loop (its filtered CTE estimated at one row), a scan of
        -- every row per posting.
        SELECT jsonb_object_agg(m.account, m.credits - m.debits - m.pending) AS moved FROM moved m WHERE m.book = 'principal'
      ), verdict AS (
        SELECT p.ord, p.amount, p.check_funds, p.posted, p.refusal,
               p.available + coalesce((pr.moved ->> p.source)::numeric, 0) AS available
        FROM ROWS FROM (jsonb_to_recordset(p_postings) AS (source text, amount numeric, check_funds boolean, posted boolean,
                        refusal text, available numeric)) WITH ORDINALITY AS p(source, amount, check_funds, posted, refusal, available, ord)
        CROSS JOIN principal pr
      )
      SELECT (SELECT bool_or(m.debits < 0 OR m.credits < 0 OR m.over) FROM moved m)
             OR bool_or(CASE WHEN check_funds AND available < amount THEN refusal IS DISTINCT FROM 'insufficient_funds'
                             WHEN refusal = 'balance_limit_exceeded' THEN false
                             ELSE NOT posted OR refusal IS NOT NULL END),
             array_agg(CASE WHEN check_funds THEN available ELSE 0 END::bigint ORDER BY ord)
        INTO v_disagree, v_available
        FROM verdict;
      IF v_disagree THEN
        RAISE EXCEPTION 'the batch was decided otherwise under the balance locks' USING ERRCODE = 'IB409';
      END IF;
      PERFORM issuing_write_postings(jsonb_build_object('balances', p_balances, 'balance_events', p_balance_events), p_channel);
      RETURN v_available;
    END $function$;
