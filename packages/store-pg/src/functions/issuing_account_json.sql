-- The financial_account object of the API (core ledger/Records.ts FinancialAccount) for account
-- row `a` and its principal book's totals: the data of every balance.updated this store writes,
-- defined once for issuing_post_transfer, issuing_post_card_message and issuing_write_postings
-- (test/ledger/balance-events.test.ts decodes it with the TypeScript schema and compares it with
-- GET /v1/financial-accounts/{id}). A SQL function of one expression, so the planner inlines it
-- into each caller's statement.
CREATE OR REPLACE FUNCTION issuing_account_json(
    a issuing_financial_accounts,
    p_debits_minor numeric,
    p_credits_minor numeric,
    p_pending_minor numeric,
    p_updated_at timestamp with time zone
)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
  SELECT json_build_object(
    'id', a.id, 'object', 'financial_account', 'program_id', a.program_id, 'wallet_id', a.wallet_id, 'kind', a.kind,
    'currency', a.currency,
    'balance', json_build_object('amount', p_credits_minor - p_debits_minor, 'currency', a.currency),
    'pending_balance', json_build_object('amount', p_pending_minor, 'currency', a.currency),
    'available_balance', json_build_object('amount', p_credits_minor - p_debits_minor - p_pending_minor, 'currency', a.currency),
    'created_at', to_char(a.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'updated_at', to_char(p_updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text
$function$;
