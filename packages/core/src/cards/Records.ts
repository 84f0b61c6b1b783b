/** Card kinds of CONTRACT §4. */
export const CARD_TYPES = ["VIRTUAL", "PHYSICAL"] as const
export type CardType = (typeof CARD_TYPES)[number]

/** Card states of CONTRACT §4. */
export const CARD_STATES = ["ACTIVE", "FROZEN", "CLOSED"] as const
export type CardState = (typeof CARD_STATES)[number]

/** Windows a spending limit applies to (UTC calendar windows; PER_TRANSACTION caps one amount). */
export const SPENDING_INTERVALS = ["PER_TRANSACTION", "DAILY", "WEEKLY", "MONTHLY", "YEARLY", "ALL_TIME"] as const
export type SpendingInterval = (typeof SPENDING_INTERVALS)[number]

/** A velocity limit: at most `amount` minor units approved per `interval`. */
export interface SpendingPeriod {
  readonly interval: SpendingInterval
  readonly amount: number
}

/** The card as every API response shows it: never the number or the code (CONTRACT §4). */
export interface Card {
  readonly id: string
  readonly object: "card"
  readonly program_id: string
  readonly wallet_id: string
  readonly financial_account_id: string
  readonly type: CardType
  readonly state: CardState
  readonly last_four: string
  readonly exp_month: number
  readonly exp_year: number
  readonly allowed_mcc_codes: ReadonlyArray<string>
  readonly blocked_mcc_codes: ReadonlyArray<string>
  readonly spending_period: SpendingPeriod | null
  readonly created_at: string
  readonly updated_at: string
}

/** The sensitive part of a card as stored: sealed by the vault, searchable only by keyed fingerprint. */
export interface SealedCardData {
  /** AES-256-GCM ciphertext of the number (`v1.<keyId>.<…>`). */
  readonly pan_sealed: string
  /** AES-256-GCM ciphertext of the 3-digit code. */
  readonly cvv_sealed: string
  /** HMAC-SHA256 of the number under the fingerprint subkey of `vault_key_id`. */
  readonly pan_fingerprint: string
  /** The vault key both ciphertexts and the fingerprint were made with. */
  readonly vault_key_id: string
}

/** A card row: the public card and its sealed data. */
export interface CardRecord {
  readonly card: Card
  readonly sealed: SealedCardData
}

/** The JSON reveal of interface §2 (the only JSON that carries number and code). */
export interface CardReveal {
  readonly object: "card_reveal"
  readonly card_id: string
  readonly pan: string
  readonly exp_month: number
  readonly exp_year: number
  readonly cvv: string
}

/** An embed session as returned once at creation (interface §2). */
export interface CardEmbedSession {
  readonly object: "card_embed_session"
  readonly card_id: string
  readonly session_token: string
  readonly expires_at: string
  readonly embed_url: string
}

/** An embed session as stored: the token only as its SHA-256. */
export interface StoredEmbedSession {
  readonly id: string
  readonly program_id: string
  readonly card_id: string
  readonly token_hash: string
  readonly api_key_id: string
  readonly created_at: string
  readonly expires_at: string
}

/** What the embed document shows: the plaintext card data, decrypted for one response. */
export interface CardDisplay {
  readonly card_id: string
  readonly pan: string
  readonly cvv: string
  readonly exp_month: number
  readonly exp_year: number
}

/** Accesses to card data that leave an audit record. */
export const CARD_AUDIT_ACTIONS = ["reveal", "search_by_pan", "embed_session", "embed_view"] as const
export type CardAuditAction = (typeof CARD_AUDIT_ACTIONS)[number]

/** One access to card data: who (API key), which card (null when a search found none), when, which request. */
export interface CardAuditRecord {
  readonly id: string
  readonly object: "card_audit_record"
  readonly program_id: string
  readonly api_key_id: string | null
  readonly card_id: string | null
  readonly action: CardAuditAction
  readonly request_id: string
  readonly created_at: string
}

/** Who touches card data, for the audit trail. */
export interface CardAccessContext {
  readonly apiKeyId: string
  readonly requestId: string
}

/** Why a simulated authorization was declined (CONTRACT §4). */
export const DECLINE_REASONS = [
  "CARD_FROZEN",
  "CARD_CLOSED",
  "MCC_NOT_ALLOWED",
  "MCC_BLOCKED",
  "SPENDING_LIMIT_EXCEEDED",
  "INSUFFICIENT_FUNDS"
] as const
export type DeclineReason = (typeof DECLINE_REASONS)[number]
