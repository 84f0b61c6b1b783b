import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Rail returns (docs/ledger.md#returns): a transfer's status may be RETURNED, and the transfer keeps
 * the rail's `return_code` and the `return_reason` sent with it (both NULL otherwise). The same
 * columns and statuses as the other store's migration of this id.
 *
 * The new columns are nullable without a default: added without rewriting the table. The status's
 * CHECK is replaced by one that admits one more value; adding it reads the existing rows once (the
 * migrations run in one transaction that already holds the table's lock for the new columns, so
 * splitting it into NOT VALID and VALIDATE would spare no waiting).
 *
 * Numbered 0550, past every id already applied: the Migrator runs only ids above the latest one.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE issuing_transfers ADD COLUMN return_code TEXT, ADD COLUMN return_reason TEXT,
    DROP CONSTRAINT issuing_transfers_status_check,
    ADD CONSTRAINT issuing_transfers_status_check CHECK (status IN ('PENDING', 'SETTLED', 'RETURNED'))`
})
