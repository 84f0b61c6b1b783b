import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The change feed (docs/operations.md#running-several-nodes): one row whose version every change
 * that caches must see (a freeze, a key revocation …) bumps in its own transaction, next to a
 * `pg_notify` on `issuing_changes`. A node that (re)connects its listener reads it to catch up.
 *
 * Numbered 0060, past every id already applied: the Migrator runs only ids above the latest one.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE issuing_changes (
    id integer PRIMARY KEY CHECK (id = 1),
    version bigint NOT NULL
  )`
  yield* sql`INSERT INTO issuing_changes (id, version) VALUES (1, 0)`
})
