import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Real-time authorization decisions (docs/card-transactions.md#real-time-decisions): one endpoint
 * per program, asked before an authorization the platform's own checks approved. The signing
 * secret is sealed by the vault as a webhook subscription's is; after a rotation the previous one signs
 * beside it for a day, as a subscription's does.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE issuing_authorization_endpoints (
    id TEXT PRIMARY KEY,
    program_id TEXT NOT NULL UNIQUE REFERENCES issuing_programs (id),
    url TEXT NOT NULL,
    secret_sealed TEXT NOT NULL,
    previous_secret_sealed TEXT,
    previous_secret_expires_at TEXT,
    timeout_ms INTEGER NOT NULL,
    timeout_decision TEXT NOT NULL,
    disabled INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  )`
})
