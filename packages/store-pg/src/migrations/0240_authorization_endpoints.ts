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
    id text PRIMARY KEY,
    program_id text NOT NULL UNIQUE REFERENCES issuing_programs (id),
    url text NOT NULL,
    secret_sealed text NOT NULL,
    previous_secret_sealed text,
    previous_secret_expires_at timestamptz,
    timeout_ms integer NOT NULL,
    timeout_decision text NOT NULL,
    disabled boolean NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  )`
})
