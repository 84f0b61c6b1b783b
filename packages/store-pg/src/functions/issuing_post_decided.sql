-- A batch decided in the process over balances read without locks, written in ONE statement that
-- holds the balance-row locks only briefly (docs/ledger.md#batches): the postings' new rows first
-- (issuing_write_postings), then every slot of the batch's accounts locked in (account, book, slot)
-- order, the batch decided again over their sums, and the summed deltas and balance.updated written
-- only if both decisions agree. Otherwise SQLSTATE IB409 rolls the statement back and the process
-- runs the batch the locked way. `p_rows`: issuing_write_postings' rows but the balance.updated
-- events, which are `p_balance_events` (written after the balances; a parameter of their own, as
-- taking them out of `p_rows` would copy the whole document). `p_postings`: each posting in order
-- as { source, amount, check_funds, posted, refusal, deltas: [{ account, book, debits, credits,
-- pending }] }. Answers each posting's available principal as read under the locks.
CREATE OR REPLACE FUNCTION issuing_post_decided(
    p_rows jsonb,
    p_balance_events jsonb,
    p_postings jsonb,
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
      SELECT array_agg(DISTINCT d->>'account') INTO v_accounts
        FROM jsonb_array_elements(p_postings) AS p, jsonb_array_elements(p->'deltas') AS d;
      PERFORM 1 FROM issuing_balances WHERE financial_account_id = ANY (v_accounts)
        ORDER BY financial_account_id, book, slot FOR UPDATE;
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
        FROM d LEFT JOIN (SELECT x.financial_account_id, x.book, sum(x.debits_minor) AS debits_minor,
                                 sum(x.credits_minor) AS credits_minor, sum(x.pending_minor) AS pending_minor
                          FROM issuing_balances x WHERE x.financial_account_id = ANY (v_accounts)
                          GROUP BY x.financial_account_id, x.book) b
          ON b.financial_account_id = d.account AND b.book = d.book
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
      PERFORM issuing_write_postings(jsonb_build_object('balances', p_balances, 'balance_events', p_balance_events), p_channel);
      RETURN v_available;
    END $function$;
