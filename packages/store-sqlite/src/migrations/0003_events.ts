import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Events: the outbox of webhook delivery. */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE issuing_events (
    id TEXT PRIMARY KEY,
    program_id TEXT NOT NULL REFERENCES issuing_programs (id),
    type TEXT NOT NULL,
    created_at TEXT NOT NULL,
    data TEXT NOT NULL
  )`
  yield* sql`CREATE INDEX issuing_events_by_program ON issuing_events (program_id, created_at, id)`
  yield* sql`CREATE INDEX issuing_events_by_program_type ON issuing_events (program_id, type, created_at, id)`
})
