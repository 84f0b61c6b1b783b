import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The change feed (docs/operations.md#running-several-nodes): one row whose version every change
 * that caches must see (a freeze, a key revocation …) bumps in its own transaction. Every process
 * on the file reads it per request (one indexed row) to know whether its caches still hold.
 *
 * Numbered 0060, past every id already applied: the Migrator runs only ids above the latest one.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE issuing_changes (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    version INTEGER NOT NULL
  )`
  yield* sql`INSERT INTO issuing_changes (id, version) VALUES (1, 0)`
})
