import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Settlement totals (docs/network.md#reconciliation): per program, UTC day, currency and kind
 * (`clearing`, `force_post`, `return`) the count and amount of the card transfers posted, kept by
 * a trigger on the transfers of rail `card` in the transaction that posts them, so
 * GET /v1/settlement-reports reads a few rows through the primary key and a refused or
 * rolled-back message counts nothing. The kind: a transfer settlement → wallet is a return
 * (linked or unlinked); wallet → settlement is a force post when its transaction authorized
 * nothing, else a clearing (a late presentment included). Each total is spread over 16 shard rows
 * (the backend's, as the list counts: docs/operations.md#exact-totals-at-any-size), so the
 * program's concurrent clearings do not queue on one row. The card transfers already posted are
 * counted once here, on shard 0. The same rules as the other store's migration of this id.
 *
 * The trigger's function is created here as first written, for the trigger to name; its living
 * text is src/functions/issuing_settlement_total.sql, applied after the migrations.
 *
 * Numbered 0560, past every id already applied: the Migrator runs only ids above the latest one.
 */
const SETTLEMENT_TOTAL = `CREATE OR REPLACE FUNCTION issuing_settlement_total()
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
    END $function$`

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE issuing_settlement_totals (
    program_id text NOT NULL,
    day date NOT NULL,
    currency text NOT NULL,
    kind text NOT NULL CHECK (kind IN ('clearing', 'force_post', 'return')),
    shard smallint NOT NULL,
    count bigint NOT NULL,
    amount_minor bigint NOT NULL,
    PRIMARY KEY (program_id, day, currency, kind, shard)
  )`
  yield* sql`INSERT INTO issuing_settlement_totals (program_id, day, currency, kind, shard, count, amount_minor)
    SELECT x.program_id, (x.created_at AT TIME ZONE 'UTC')::date, x.currency,
      CASE WHEN x.from_financial_account_id = t.financial_account_id
        THEN CASE WHEN t.authorized_minor = 0 THEN 'force_post' ELSE 'clearing' END
        ELSE 'return' END,
      0, count(*), sum(x.amount_minor)
    FROM issuing_transfers x JOIN issuing_transactions t ON t.id = x.transaction_id
    WHERE x.payment_rail = 'card'
    GROUP BY 1, 2, 3, 4`
  yield* sql.unsafe(SETTLEMENT_TOTAL)
  yield* sql`CREATE TRIGGER issuing_settlement_totals_card AFTER INSERT ON issuing_transfers
    FOR EACH ROW WHEN (NEW.payment_rail = 'card') EXECUTE FUNCTION issuing_settlement_total()`
})
