import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Disputes of card transactions (docs/disputes.md). The same table, indexes and column as the
 * other store's migration of this id.
 *
 * - `issuing_disputes`: one row per dispute, its provisional credit's transfer and, once LOST,
 *   the transfer that took it back. The indexes serve `GET /v1/disputes` in its two orders
 *   (created_at, updated_at) as ranges: the program's, a status's, a transaction's
 *   (docs/operations.md#volume). Its totals are counted by the dispute store's own writes, in
 *   `issuing_list_counts` under the list `disputes`: no dispute existed before, nothing to backfill.
 * - `issuing_transactions.disputed_minor`: the sum of the transaction's disputes' amounts, read
 *   and grown under the transaction's row lock by a conditional update. Nullable without a
 *   default (NULL reads as 0): added without rewriting the table, and the posting functions'
 *   inserts, which name their columns or populate the whole row from a record, need no change.
 *
 * Numbered 0690, past every id already applied: the Migrator runs only ids above the latest one.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE issuing_transactions ADD COLUMN disputed_minor BIGINT`
  yield* sql`CREATE TABLE issuing_disputes (
    id TEXT PRIMARY KEY,
    program_id TEXT NOT NULL REFERENCES issuing_programs (id),
    transaction_id TEXT NOT NULL REFERENCES issuing_transactions (id),
    amount_minor BIGINT NOT NULL CHECK (amount_minor > 0),
    currency TEXT NOT NULL,
    reason TEXT NOT NULL CHECK (reason IN ('FRAUD', 'NOT_RECEIVED', 'DUPLICATE', 'INCORRECT_AMOUNT', 'CANCELED', 'OTHER')),
    explanation TEXT,
    status TEXT NOT NULL CHECK (status IN ('SUBMITTED', 'WON', 'LOST')),
    provisional_credit_transfer_id TEXT NOT NULL REFERENCES issuing_transfers (id),
    reversal_transfer_id TEXT REFERENCES issuing_transfers (id),
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
  )`
  yield* sql`CREATE INDEX issuing_disputes_by_program ON issuing_disputes (program_id, created_at, id)`
  yield* sql`CREATE INDEX issuing_disputes_by_program_update ON issuing_disputes (program_id, updated_at, id)`
  yield* sql`CREATE INDEX issuing_disputes_by_status ON issuing_disputes (program_id, status, created_at, id)`
  yield* sql`CREATE INDEX issuing_disputes_by_status_update ON issuing_disputes (program_id, status, updated_at, id)`
  yield* sql`CREATE INDEX issuing_disputes_by_transaction ON issuing_disputes (transaction_id, created_at, id)`
  yield* sql`CREATE INDEX issuing_disputes_by_transaction_update ON issuing_disputes (transaction_id, updated_at, id)`
})
