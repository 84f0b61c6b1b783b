import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Settlement totals (docs/network.md#reconciliation): per program, UTC day, currency and kind
 * (`clearing`, `force_post`, `return`) the count and amount of the card transfers posted, kept by
 * a trigger on the transfers of rail `card` in the transaction that posts them, so
 * GET /v1/settlement-reports reads at most three rows and a refused or rolled-back message counts
 * nothing. One shard (0): SQLite has one writer at a time, so no two postings wait on a row; the
 * column keeps the table the other store's. The kind: a transfer settlement → wallet is a return
 * (linked or unlinked); wallet → settlement is a force post when its transaction authorized
 * nothing, else a clearing (a late presentment included). The card transfers already posted are counted once here. The same table
 * and rules as the other store's migration of this id.
 *
 * Numbered 0560, past every id already applied: the Migrator runs only ids above the latest one.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE issuing_settlement_totals (
    program_id TEXT NOT NULL,
    day TEXT NOT NULL,
    currency TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('clearing', 'force_post', 'return')),
    shard INTEGER NOT NULL,
    count INTEGER NOT NULL,
    amount_minor INTEGER NOT NULL,
    PRIMARY KEY (program_id, day, currency, kind, shard)
  ) WITHOUT ROWID`
  yield* sql`INSERT INTO issuing_settlement_totals (program_id, day, currency, kind, shard, count, amount_minor)
    SELECT x.program_id, substr(x.created_at, 1, 10), x.currency,
      CASE WHEN x.from_financial_account_id = t.financial_account_id
        THEN CASE WHEN t.authorized_minor = 0 THEN 'force_post' ELSE 'clearing' END
        ELSE 'return' END AS kind,
      0, count(*), sum(x.amount_minor)
    FROM issuing_transfers x JOIN issuing_transactions t ON t.id = x.transaction_id
    WHERE x.payment_rail = 'card'
    GROUP BY 1, 2, 3, 4`
  yield* sql`CREATE TRIGGER issuing_settlement_totals_card AFTER INSERT ON issuing_transfers
    WHEN NEW.payment_rail = 'card'
    BEGIN
      INSERT INTO issuing_settlement_totals (program_id, day, currency, kind, shard, count, amount_minor)
        SELECT NEW.program_id, substr(NEW.created_at, 1, 10), NEW.currency,
          CASE WHEN NEW.from_financial_account_id = t.financial_account_id
            THEN CASE WHEN t.authorized_minor = 0 THEN 'force_post' ELSE 'clearing' END
            ELSE 'return' END,
          0, 1, NEW.amount_minor
        FROM issuing_transactions t WHERE t.id = NEW.transaction_id
        ON CONFLICT (program_id, day, currency, kind, shard)
          DO UPDATE SET count = count + 1, amount_minor = amount_minor + excluded.amount_minor;
    END`
})
