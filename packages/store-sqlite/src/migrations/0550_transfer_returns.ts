import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Rail returns (docs/ledger.md#returns): a transfer's status may be RETURNED, and the transfer keeps
 * the rail's `return_code` and the `return_reason` sent with it (both NULL otherwise). The same
 * columns and statuses as the other store's migration of this id.
 *
 * SQLite cannot change a CHECK constraint in place (and writing sqlite_schema is refused: the
 * driver opens databases in defensive mode), so the table is rebuilt, as 0310 rebuilt the entries:
 * its rows copied aside, the table dropped and created again under its own name with the wider
 * CHECK and the two columns, the rows copied back, and its indexes and triggers (maintained counts)
 * created again from their own text in sqlite_schema — after the copy, so the counts do not count
 * the rows twice. The book transfers' foreign key names the table, so it holds again once the rows
 * are back: dropping the table deletes its rows first, which the deferred foreign keys count as
 * violations until the same ids are inserted again, all before the migrations' transaction
 * commits. (Renaming a copy into place would not do: with foreign keys on, renaming the old table
 * away takes the book transfers' references with it.)
 *
 * Numbered 0550, past every id already applied: the Migrator runs only ids above the latest one.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const dependents = yield* sql<{ readonly sql: string }>`SELECT sql FROM sqlite_schema
    WHERE type IN ('index', 'trigger') AND tbl_name = 'issuing_transfers' AND sql IS NOT NULL ORDER BY type, name`
  yield* sql`PRAGMA defer_foreign_keys = ON`
  yield* sql`CREATE TABLE issuing_transfers_0550 AS SELECT * FROM issuing_transfers`
  yield* sql`DROP TABLE issuing_transfers`
  yield* sql`CREATE TABLE issuing_transfers (
    id TEXT PRIMARY KEY,
    program_id TEXT NOT NULL REFERENCES issuing_programs (id),
    transaction_id TEXT NOT NULL REFERENCES issuing_transactions (id),
    payment_rail TEXT NOT NULL,
    amount_minor INTEGER NOT NULL CHECK (amount_minor > 0),
    currency TEXT NOT NULL,
    from_financial_account_id TEXT NOT NULL REFERENCES issuing_financial_accounts (id),
    to_financial_account_id TEXT NOT NULL REFERENCES issuing_financial_accounts (id),
    status TEXT NOT NULL CHECK (status IN ('PENDING', 'SETTLED', 'RETURNED')),
    description TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    metadata TEXT NOT NULL DEFAULT '{}',
    return_code TEXT,
    return_reason TEXT
  )`
  yield* sql`INSERT INTO issuing_transfers
    (id, program_id, transaction_id, payment_rail, amount_minor, currency, from_financial_account_id,
     to_financial_account_id, status, description, created_at, updated_at, metadata)
    SELECT id, program_id, transaction_id, payment_rail, amount_minor, currency, from_financial_account_id,
      to_financial_account_id, status, description, created_at, updated_at, metadata
    FROM issuing_transfers_0550 ORDER BY id`
  yield* sql`DROP TABLE issuing_transfers_0550`
  for (const dependent of dependents) yield* sql.unsafe(dependent.sql)
})
