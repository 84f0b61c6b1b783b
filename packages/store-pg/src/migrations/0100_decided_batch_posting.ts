import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Batches that hold their balance-row locks only briefly (docs/ledger.md#batches). Every batch
 * touching the same accounts waits for their balance rows, so a batch that locked them first and
 * then wrote its thousand-odd rows made every concurrent batch queue behind its whole write.
 *
 * The process decides a batch over totals read WITHOUT locks, then calls
 * `issuing_post_decided` as ONE statement in a transaction of its own, which:
 * 1. writes the new rows of the postings decided to post (`issuing_write_postings` with no
 *    balances: transactions, transfers, book transfers, entries, events and their webhook
 *    deliveries) — the long part, while other batches do the same;
 * 2. locks the balance rows of every account the batch touches, in (account, book) order;
 * 3. decides the batch again over what they hold now — each posting in order, over the totals
 *    the earlier posted ones left: the source's principal must cover the amount when it checks
 *    funds, and no debit or credit total may pass 2^53 − 1 — and compares with the process's
 *    decisions (posted, refusal);
 * 4. if they agree, adds the summed deltas to the balances (`issuing_write_postings` again, with
 *    the balances only) and answers each posting's available principal; if not (another writer
 *    moved a balance in between), raises SQLSTATE IB409 and the whole statement is rolled back:
 *    the process then runs the batch the locked way.
 * The locks are held from step 2 to the commit, with no round trip to the process in between.
 *
 * `p_postings`: every posting of the batch in order, as
 * `{ source, amount, check_funds, posted, refusal, deltas: [{ account, book, debits, credits }] }`.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE FUNCTION issuing_post_decided(p_rows jsonb, p_postings jsonb, p_balances jsonb, p_channel text)
    RETURNS bigint[] LANGUAGE plpgsql AS $$
    DECLARE
      v_accounts text[];
      v_disagree boolean;
      v_available bigint[];
    BEGIN
      PERFORM issuing_write_postings(p_rows, p_channel);
      SELECT array_agg(DISTINCT d->>'account') INTO v_accounts
        FROM jsonb_array_elements(p_postings) AS p, jsonb_array_elements(p->'deltas') AS d;
      PERFORM 1 FROM issuing_balances WHERE financial_account_id = ANY (v_accounts)
        ORDER BY financial_account_id, book FOR UPDATE;
      WITH p AS (
        SELECT ord, x->>'source' AS source, (x->>'amount')::numeric AS amount, (x->>'check_funds')::boolean AS check_funds,
               (x->>'posted')::boolean AS posted, x->>'refusal' AS refusal, x->'deltas' AS deltas
        FROM jsonb_array_elements(p_postings) WITH ORDINALITY AS t(x, ord)
      ), d AS (
        SELECT p.ord, p.posted, p.source, e->>'account' AS account, e->>'book' AS book,
               (e->>'debits')::numeric AS debits, (e->>'credits')::numeric AS credits
        FROM p, jsonb_array_elements(p.deltas) AS e
      ), running AS (
        -- Each delta with its row's totals before it: what is locked now plus the earlier posted ones.
        SELECT d.*,
               coalesce(b.debits_minor, 0) + coalesce(sum(CASE WHEN d.posted THEN d.debits ELSE 0 END) OVER w, 0) AS debits_before,
               coalesce(b.credits_minor, 0) + coalesce(sum(CASE WHEN d.posted THEN d.credits ELSE 0 END) OVER w, 0) AS credits_before
        FROM d LEFT JOIN issuing_balances b ON b.financial_account_id = d.account AND b.book = d.book
        WINDOW w AS (PARTITION BY d.account, d.book ORDER BY d.ord ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
      ), per AS (
        SELECT ord,
               max(CASE WHEN account = source AND book = 'principal' THEN credits_before - debits_before END) AS available,
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
      PERFORM issuing_write_postings(jsonb_build_object('balances', p_balances), p_channel);
      RETURN v_available;
    END $$`
})
