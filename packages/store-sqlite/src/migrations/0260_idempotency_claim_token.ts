import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Names each Idempotency-Key claim by a token of its own: the running request renews its short
 * lease (`locked_at`) by it, and stores its response or releases the key only while the token is
 * still there (docs/api.md#idempotency). The claim's lock time named it before, and a renewal
 * changes that. Rows already there keep no token: a completed one needs none, and an unfinished
 * one is taken over once its lease has run out.
 *
 * Numbered 0260, past every id already applied: the Migrator runs only ids above the latest one.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE issuing_idempotency_keys ADD COLUMN claim_token TEXT`
})
