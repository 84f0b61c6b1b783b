import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Organizations, programs and API keys. */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE issuing_organizations (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    created_at TEXT NOT NULL
  )`
  yield* sql`CREATE TABLE issuing_programs (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES issuing_organizations (id),
    name TEXT NOT NULL,
    bin TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  )`
  yield* sql`CREATE INDEX issuing_programs_by_organization ON issuing_programs (organization_id, created_at, id)`
  yield* sql`CREATE TABLE issuing_api_keys (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES issuing_organizations (id),
    name TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('admin', 'developer', 'viewer')),
    program_ids TEXT,
    pan_reveal INTEGER NOT NULL,
    secret_hash TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    revoked_at TEXT
  )`
  yield* sql`CREATE INDEX issuing_api_keys_by_organization ON issuing_api_keys (organization_id, created_at, id)`
})
