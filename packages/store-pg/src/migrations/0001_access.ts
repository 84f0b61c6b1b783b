import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Organizations, programs and API keys. Ids are text (validated as UUIDs before use). */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE issuing_organizations (
    id text PRIMARY KEY,
    name text NOT NULL,
    created_at timestamptz NOT NULL
  )`
  yield* sql`CREATE TABLE issuing_programs (
    id text PRIMARY KEY,
    organization_id text NOT NULL REFERENCES issuing_organizations (id),
    name text NOT NULL,
    bin text NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX issuing_programs_by_organization ON issuing_programs (organization_id, created_at, id)`
  yield* sql`CREATE TABLE issuing_api_keys (
    id text PRIMARY KEY,
    organization_id text NOT NULL REFERENCES issuing_organizations (id),
    name text NOT NULL,
    role text NOT NULL CHECK (role IN ('admin', 'developer', 'viewer')),
    program_ids text,
    pan_reveal boolean NOT NULL,
    secret_hash text NOT NULL UNIQUE,
    created_at timestamptz NOT NULL,
    revoked_at timestamptz
  )`
  yield* sql`CREATE INDEX issuing_api_keys_by_organization ON issuing_api_keys (organization_id, created_at, id)`
})
