import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The per-key token buckets every node leases its rate-limit tokens from, so a key's limit holds
 * across nodes (docs/operations.md#rate-limits-across-nodes). One row per key (or OAuth grant)
 * that has made a request; no foreign key, since an access token's bucket is its grant's.
 *
 * Numbered 0250, past every id already applied: the Migrator runs only ids above the latest one.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE issuing_rate_buckets (
    api_key_id TEXT PRIMARY KEY,
    tokens DOUBLE PRECISION NOT NULL,
    refilled_at_ms BIGINT NOT NULL,
    full_at_ms BIGINT NOT NULL
  )`
})
