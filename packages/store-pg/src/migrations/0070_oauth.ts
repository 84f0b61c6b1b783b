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
    id text PRIMARY KEY,
    organization_id text NOT NULL REFERENCES issuing_organizations (id),
    client_id text NOT NULL UNIQUE,
    name text NOT NULL,
    type text NOT NULL CHECK (type IN ('confidential', 'public')),
    redirect_uris text NOT NULL,
    scopes text NOT NULL,
    secret_hash text,
    created_at timestamptz NOT NULL,
    deleted_at timestamptz
  )`
  yield* sql`CREATE INDEX issuing_oauth_clients_by_organization ON issuing_oauth_clients (organization_id, created_at, id)`
  yield* sql`CREATE TABLE issuing_oauth_interactions (
    id text PRIMARY KEY,
    organization_id text NOT NULL REFERENCES issuing_organizations (id),
    oauth_client_id text NOT NULL REFERENCES issuing_oauth_clients (id),
    redirect_uri text NOT NULL,
    scopes text NOT NULL,
    state text,
    code_challenge text NOT NULL,
    status text NOT NULL CHECK (status IN ('pending', 'granted', 'denied')),
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL
  )`
  yield* sql`CREATE TABLE issuing_oauth_grants (
    id text PRIMARY KEY,
    organization_id text NOT NULL REFERENCES issuing_organizations (id),
    oauth_client_id text NOT NULL REFERENCES issuing_oauth_clients (id),
    client_id text NOT NULL,
    program_ids text NOT NULL,
    scopes text NOT NULL,
    created_at timestamptz NOT NULL,
    revoked_at timestamptz
  )`
  yield* sql`CREATE INDEX issuing_oauth_grants_by_client ON issuing_oauth_grants (oauth_client_id)`
  yield* sql`CREATE TABLE issuing_oauth_codes (
    code_hash text PRIMARY KEY,
    grant_id text NOT NULL REFERENCES issuing_oauth_grants (id),
    oauth_client_id text NOT NULL REFERENCES issuing_oauth_clients (id),
    redirect_uri text NOT NULL,
    code_challenge text NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at timestamptz
  )`
  yield* sql`CREATE TABLE issuing_oauth_tokens (
    token_hash text PRIMARY KEY,
    grant_id text NOT NULL REFERENCES issuing_oauth_grants (id),
    kind text NOT NULL CHECK (kind IN ('access', 'refresh')),
    scopes text NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    rotated_at timestamptz,
    revoked_at timestamptz
  )`
  yield* sql`CREATE INDEX issuing_oauth_tokens_by_grant ON issuing_oauth_tokens (grant_id)`
})
