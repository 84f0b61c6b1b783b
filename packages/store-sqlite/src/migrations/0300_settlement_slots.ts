import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * `issuing_balances.slot`, the column the PostgreSQL migration of this id adds to spread a
 * settlement account's balance over slots (docs/ledger.md#settlement-slots). SQLite has one
 * writer, so nothing contends for a row: every row stays in slot 0 (the CHECK says so) and the
 * key stays (account, book). Reads sum the slots all the same, the SQL being shared.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE issuing_balances ADD COLUMN slot INTEGER NOT NULL DEFAULT 0 CHECK (slot = 0)`
})
