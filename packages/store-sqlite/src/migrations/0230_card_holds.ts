import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Card transactions as card networks run them (docs/card-transactions.md): holds in the ledger.
 *
 * - `issuing_balances.pending_minor`: on an account's principal row, what is posted but not
 *   available — the open holds of its card transactions and the inbound credits still PENDING on
 *   their rail. The funds check of every posting is `credits − debits − pending ≥ amount`.
 * - `issuing_transactions` gains the card transaction's lifecycle: `authorized_minor`,
 *   `pending_minor` (the open hold), `settled_minor` (cleared − returned), the wallet account
 *   the hold is on, `expires_at`, and `card_events` / `request_history` (JSON arrays, every
 *   message and every real-time decision in order), and the statuses VOIDED and EXPIRED.
 *
 * SQLite cannot alter a column's CHECK, and the 12-step table rebuild needs foreign keys off,
 * which cannot change inside the Migrator's transaction. So the status column is rebuilt in
 * place: its indexes and triggers are kept aside (their SQL, read from sqlite_master), the
 * values copied to a new column that carries the new CHECK, the old one dropped, and the indexes
 * and triggers made again from the SQL kept — exactly as they were.
 *
 * The card authorizations written before (APPROVED: approved and posted at once) become what they
 * were, single-message authorizations: SETTLED, authorized = settled = amount, one
 * FINANCIAL_AUTHORIZATION card event (its id the transfer's). DECLINED ones get their one
 * AUTHORIZATION event (its id the transaction's). The maintained list counts follow the status
 * change through the triggers.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE issuing_balances ADD COLUMN pending_minor INTEGER NOT NULL DEFAULT 0 CHECK (pending_minor >= 0)`

  const kept = yield* sql<{ sql: string }>`SELECT sql FROM sqlite_master
    WHERE tbl_name = 'issuing_transactions' AND type IN ('index', 'trigger') AND sql IS NOT NULL
    ORDER BY type, name`
  const names = yield* sql<{ type: string; name: string }>`SELECT type, name FROM sqlite_master
    WHERE tbl_name = 'issuing_transactions' AND type IN ('index', 'trigger') AND sql IS NOT NULL`
  for (const { name, type } of names) yield* sql.unsafe(`DROP ${type === "index" ? "INDEX" : "TRIGGER"} ${name}`)
  yield* sql`ALTER TABLE issuing_transactions ADD COLUMN status_was TEXT`
  yield* sql`UPDATE issuing_transactions SET status_was = status`
  yield* sql`ALTER TABLE issuing_transactions DROP COLUMN status`
  yield* sql`ALTER TABLE issuing_transactions ADD COLUMN status TEXT NOT NULL DEFAULT 'PENDING'
    CHECK (status IN ('PENDING', 'SETTLED', 'VOIDED', 'EXPIRED', 'APPROVED', 'DECLINED'))`
  yield* sql`UPDATE issuing_transactions SET status = status_was`
  yield* sql`ALTER TABLE issuing_transactions DROP COLUMN status_was`
  yield* sql`ALTER TABLE issuing_transactions ADD COLUMN authorized_minor INTEGER`
  yield* sql`ALTER TABLE issuing_transactions ADD COLUMN pending_minor INTEGER NOT NULL DEFAULT 0 CHECK (pending_minor >= 0)`
  yield* sql`ALTER TABLE issuing_transactions ADD COLUMN settled_minor INTEGER NOT NULL DEFAULT 0`
  yield* sql`ALTER TABLE issuing_transactions ADD COLUMN financial_account_id TEXT`
  yield* sql`ALTER TABLE issuing_transactions ADD COLUMN expires_at TEXT`
  yield* sql`ALTER TABLE issuing_transactions ADD COLUMN card_events TEXT NOT NULL DEFAULT '[]'`
  yield* sql`ALTER TABLE issuing_transactions ADD COLUMN request_history TEXT NOT NULL DEFAULT '[]'`
  for (const { sql: statement } of kept) yield* sql.unsafe(statement)
  // The holds the expiry worker releases, soonest first.
  yield* sql`CREATE INDEX issuing_transactions_holds_by_expiry ON issuing_transactions (expires_at, id)
    WHERE status = 'PENDING' AND expires_at IS NOT NULL`

  yield* sql`UPDATE issuing_transactions SET
      status = 'SETTLED', authorized_minor = amount_minor, settled_minor = amount_minor,
      financial_account_id = (SELECT t.from_financial_account_id FROM issuing_transfers t
                              WHERE t.transaction_id = issuing_transactions.id LIMIT 1),
      card_events = json_array(json_object(
        'id', coalesce((SELECT t.id FROM issuing_transfers t WHERE t.transaction_id = issuing_transactions.id LIMIT 1), id),
        'type', 'FINANCIAL_AUTHORIZATION', 'amount', amount_minor, 'result', 'APPROVED',
        'decline_reason', NULL, 'created_at', created_at))
    WHERE status = 'APPROVED' AND card_id IS NOT NULL`
  yield* sql`UPDATE issuing_transactions SET
      authorized_minor = amount_minor,
      card_events = json_array(json_object(
        'id', id, 'type', 'AUTHORIZATION', 'amount', amount_minor, 'result', 'DECLINED',
        'decline_reason', decline_reason, 'created_at', created_at))
    WHERE status = 'DECLINED' AND card_id IS NOT NULL`
})
