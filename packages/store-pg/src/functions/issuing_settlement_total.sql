-- The trigger function of issuing_settlement_totals (migration 0560, docs/network.md#reconciliation):
-- a transfer of rail `card` adds its count and amount to its program's UTC day, currency and kind
-- — a return when it moves settlement → wallet, else a force post when its transaction authorized
-- nothing, else a clearing — on the backend's shard of 16, so concurrent postings of one program
-- rarely wait on one row; a report sums the shards.
CREATE OR REPLACE FUNCTION issuing_settlement_total()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      INSERT INTO issuing_settlement_totals AS s (program_id, day, currency, kind, shard, count, amount_minor)
        SELECT NEW.program_id, (NEW.created_at AT TIME ZONE 'UTC')::date, NEW.currency,
          CASE WHEN NEW.from_financial_account_id = t.financial_account_id
            THEN CASE WHEN t.authorized_minor = 0 THEN 'force_post' ELSE 'clearing' END
            ELSE 'return' END,
          pg_backend_pid() % 16, 1, NEW.amount_minor
        FROM issuing_transactions t WHERE t.id = NEW.transaction_id
        ON CONFLICT (program_id, day, currency, kind, shard)
          DO UPDATE SET count = s.count + 1, amount_minor = s.amount_minor + EXCLUDED.amount_minor;
      RETURN NULL;
    END $function$;
