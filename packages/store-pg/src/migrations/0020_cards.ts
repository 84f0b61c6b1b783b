import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Cards, embed sessions and the card-data audit trail. No column holds a card number, code or
 * session token in plaintext: number and code are AES-256-GCM ciphertexts (`*_sealed`), lookups go
 * through a keyed HMAC fingerprint, and session tokens are stored as SHA-256 hashes.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE issuing_cards (
    id text PRIMARY KEY,
    program_id text NOT NULL REFERENCES issuing_programs (id),
    wallet_id text NOT NULL,
    financial_account_id text NOT NULL,
    type text NOT NULL CHECK (type IN ('VIRTUAL', 'PHYSICAL')),
    state text NOT NULL CHECK (state IN ('ACTIVE', 'FROZEN', 'CLOSED')),
    last_four text NOT NULL,
    exp_month integer NOT NULL CHECK (exp_month BETWEEN 1 AND 12),
    exp_year integer NOT NULL,
    pan_sealed text NOT NULL,
    cvv_sealed text NOT NULL,
    pan_fingerprint text NOT NULL UNIQUE,
    vault_key_id text NOT NULL,
    allowed_mcc_codes text NOT NULL,
    blocked_mcc_codes text NOT NULL,
    spending_interval text,
    spending_amount_minor bigint,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX issuing_cards_by_program ON issuing_cards (program_id, created_at, id)`
  yield* sql`CREATE INDEX issuing_cards_by_wallet ON issuing_cards (program_id, wallet_id, created_at, id)`
  yield* sql`CREATE INDEX issuing_cards_by_vault_key ON issuing_cards (vault_key_id)`
  yield* sql`CREATE TABLE issuing_card_embed_sessions (
    id text PRIMARY KEY,
    program_id text NOT NULL REFERENCES issuing_programs (id),
    card_id text NOT NULL REFERENCES issuing_cards (id),
    token_hash text NOT NULL UNIQUE,
    api_key_id text NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX issuing_card_embed_sessions_by_card ON issuing_card_embed_sessions (card_id)`
  yield* sql`CREATE INDEX issuing_card_embed_sessions_by_expiry ON issuing_card_embed_sessions (expires_at)`
  yield* sql`CREATE TABLE issuing_card_audit_records (
    id text PRIMARY KEY,
    program_id text NOT NULL REFERENCES issuing_programs (id),
    api_key_id text,
    card_id text,
    action text NOT NULL CHECK (action IN ('reveal', 'search_by_pan', 'embed_session', 'embed_view')),
    request_id text NOT NULL,
    created_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX issuing_card_audit_records_by_program ON issuing_card_audit_records (program_id, created_at, id)`
  yield* sql`CREATE INDEX issuing_card_audit_records_by_card ON issuing_card_audit_records (program_id, card_id, created_at, id)`
})
