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
    id TEXT PRIMARY KEY,
    program_id TEXT NOT NULL REFERENCES issuing_programs (id),
    wallet_id TEXT NOT NULL,
    financial_account_id TEXT NOT NULL,
    type TEXT NOT NULL CHECK (type IN ('VIRTUAL', 'PHYSICAL')),
    state TEXT NOT NULL CHECK (state IN ('ACTIVE', 'FROZEN', 'CLOSED')),
    last_four TEXT NOT NULL,
    exp_month INTEGER NOT NULL CHECK (exp_month BETWEEN 1 AND 12),
    exp_year INTEGER NOT NULL,
    pan_sealed TEXT NOT NULL,
    cvv_sealed TEXT NOT NULL,
    pan_fingerprint TEXT NOT NULL UNIQUE,
    vault_key_id TEXT NOT NULL,
    allowed_mcc_codes TEXT NOT NULL,
    blocked_mcc_codes TEXT NOT NULL,
    spending_interval TEXT,
    spending_amount_minor INTEGER,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  )`
  yield* sql`CREATE INDEX issuing_cards_by_program ON issuing_cards (program_id, created_at, id)`
  yield* sql`CREATE INDEX issuing_cards_by_wallet ON issuing_cards (program_id, wallet_id, created_at, id)`
  yield* sql`CREATE INDEX issuing_cards_by_vault_key ON issuing_cards (vault_key_id)`
  yield* sql`CREATE TABLE issuing_card_embed_sessions (
    id TEXT PRIMARY KEY,
    program_id TEXT NOT NULL REFERENCES issuing_programs (id),
    card_id TEXT NOT NULL REFERENCES issuing_cards (id),
    token_hash TEXT NOT NULL UNIQUE,
    api_key_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL
  )`
  yield* sql`CREATE INDEX issuing_card_embed_sessions_by_card ON issuing_card_embed_sessions (card_id)`
  yield* sql`CREATE INDEX issuing_card_embed_sessions_by_expiry ON issuing_card_embed_sessions (expires_at)`
  yield* sql`CREATE TABLE issuing_card_audit_records (
    id TEXT PRIMARY KEY,
    program_id TEXT NOT NULL REFERENCES issuing_programs (id),
    api_key_id TEXT,
    card_id TEXT,
    action TEXT NOT NULL CHECK (action IN ('reveal', 'search_by_pan', 'embed_session', 'embed_view')),
    request_id TEXT NOT NULL,
    created_at TEXT NOT NULL
  )`
  yield* sql`CREATE INDEX issuing_card_audit_records_by_program ON issuing_card_audit_records (program_id, created_at, id)`
  yield* sql`CREATE INDEX issuing_card_audit_records_by_card ON issuing_card_audit_records (program_id, card_id, created_at, id)`
})
