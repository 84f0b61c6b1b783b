import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The OAuth gateway (docs/oauth.md): connected applications (clients), the authorization requests
 * waiting for the host app's consent (interactions), what a consent allowed (grants), single-use
 * codes and the access and refresh tokens of a grant. Client secrets, codes and tokens are kept
 * only as SHA-256 hashes.
 *
 * Numbered 0070, past every id already applied: the Migrator runs only ids above the latest one.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE issuing_oauth_clients (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES issuing_organizations (id),
    client_id TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    type TEXT NOT NULL CHECK (type IN ('confidential', 'public')),
    redirect_uris TEXT NOT NULL,
    scopes TEXT NOT NULL,
    secret_hash TEXT,
    created_at TEXT NOT NULL,
    deleted_at TEXT
  )`
  yield* sql`CREATE INDEX issuing_oauth_clients_by_organization ON issuing_oauth_clients (organization_id, created_at, id)`
  yield* sql`CREATE TABLE issuing_oauth_interactions (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES issuing_organizations (id),
    oauth_client_id TEXT NOT NULL REFERENCES issuing_oauth_clients (id),
    redirect_uri TEXT NOT NULL,
    scopes TEXT NOT NULL,
    state TEXT,
    code_challenge TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'granted', 'denied')),
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL
  )`
  yield* sql`CREATE TABLE issuing_oauth_grants (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES issuing_organizations (id),
    oauth_client_id TEXT NOT NULL REFERENCES issuing_oauth_clients (id),
    client_id TEXT NOT NULL,
    program_ids TEXT NOT NULL,
    scopes TEXT NOT NULL,
    created_at TEXT NOT NULL,
    revoked_at TEXT
  )`
  yield* sql`CREATE INDEX issuing_oauth_grants_by_client ON issuing_oauth_grants (oauth_client_id)`
  yield* sql`CREATE TABLE issuing_oauth_codes (
    code_hash TEXT PRIMARY KEY,
    grant_id TEXT NOT NULL REFERENCES issuing_oauth_grants (id),
    oauth_client_id TEXT NOT NULL REFERENCES issuing_oauth_clients (id),
    redirect_uri TEXT NOT NULL,
    code_challenge TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    used_at TEXT
  )`
  yield* sql`CREATE TABLE issuing_oauth_tokens (
    token_hash TEXT PRIMARY KEY,
    grant_id TEXT NOT NULL REFERENCES issuing_oauth_grants (id),
    kind TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
    scopes TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    rotated_at TEXT,
    revoked_at TEXT
  )`
  yield* sql`CREATE INDEX issuing_oauth_tokens_by_grant ON issuing_oauth_tokens (grant_id)`
})
