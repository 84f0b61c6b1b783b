import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Idempotency keys with their stored (encrypted) responses. */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE issuing_idempotency_keys (
    organization_id TEXT NOT NULL,
    idempotency_key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    status_code INTEGER,
    response_body TEXT,
    locked_at TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (organization_id, idempotency_key)
  )`
  yield* sql`CREATE INDEX issuing_idempotency_keys_by_created ON issuing_idempotency_keys (created_at)`
})
