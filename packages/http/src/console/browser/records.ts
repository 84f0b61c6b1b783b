/**
 * The fields of the API's records the console reads (docs/api.md and each feature's doc). Typed here,
 * not imported from @issuing/core, so the bundle holds none of the server's code.
 */

export interface Money {
  readonly amount: number
  readonly currency: string
}
export interface Program {
  readonly id: string
  readonly name: string
  readonly bin: string
  readonly created_at: string
}
export interface Wallet {
  readonly id: string
  readonly holder: { readonly name: string; readonly email: string | null }
  readonly financial_account_id: string
  /** The program's customer the wallet belongs to, or null (docs/ledger.md#wallet-tags). */
  readonly tag: string | null
  readonly created_at: string
}
export interface Cardholder {
  readonly id: string
  readonly type: string
  readonly name: string
  readonly email: string | null
  readonly billing_address: { readonly country: string }
  readonly status: string
  readonly verification: { readonly reference: string | null }
  readonly created_at: string
}
export interface FinancialAccount {
  readonly id: string
  readonly wallet_id: string | null
  readonly kind: string
  readonly currency: string
  readonly balance: Money
  readonly pending_balance: Money
  readonly available_balance: Money
}
export interface BookTransfer {
  readonly id: string
  readonly transfer_id: string
  readonly transaction_id: string
  readonly amount: Money
  readonly entries: ReadonlyArray<{
    readonly book: string
    readonly financial_account_id: string
    readonly entry_type: string
    readonly amount: Money
  }>
  readonly posted_at: string
}
export interface SpendingPeriod {
  readonly interval: string
  readonly amount: number
}
export interface Card {
  readonly id: string
  readonly wallet_id: string
  readonly type: string
  readonly state: "ACTIVE" | "FROZEN" | "CLOSED"
  readonly last_four: string
  readonly exp_month: number
  readonly exp_year: number
  readonly allowed_mcc_codes: ReadonlyArray<string>
  readonly blocked_mcc_codes: ReadonlyArray<string>
  readonly spending_period: SpendingPeriod | null
  readonly spending_limits: ReadonlyArray<{
    readonly interval: string
    readonly amount: number | null
    readonly count: number | null
  }>
  readonly created_at: string
  readonly updated_at: string
}
export interface CardEvent {
  readonly id: string
  readonly type: string
  readonly amount: number
  readonly result: string
  readonly decline_reason: string | null
  /** The ISO 8583 response code the message was answered with (docs/network.md#response-codes); null when not kept. */
  readonly response_code: string | null
  readonly created_at: string
}
export interface Transaction {
  readonly id: string
  readonly status: string
  readonly amount: number
  readonly currency: string
  readonly card_id: string | null
  readonly decline_reason: string | null
  readonly mcc: string | null
  readonly merchant_name: string | null
  /** The card acceptor as the network named it (docs/network.md#the-merchant), or null. */
  readonly merchant: {
    readonly acceptor_id: string
    readonly name: string
    readonly city: string | null
    readonly country: string | null
    readonly mcc: string
  } | null
  /** The id the network links the transaction's messages by, or null (docs/network.md). */
  readonly network_transaction_id: string | null
  readonly authorized_amount: number | null
  readonly pending_amount: number | null
  readonly settled_amount: number | null
  readonly expires_at: string | null
  readonly card_events: ReadonlyArray<CardEvent>
  readonly request_history: ReadonlyArray<{
    readonly amount: number
    readonly approved: boolean
    readonly reason: string
    readonly created_at: string
  }>
  readonly created_at: string
}
export interface Subscription {
  readonly id: string
  readonly url: string
  readonly description: string | null
  readonly event_types: ReadonlyArray<string>
  readonly disabled: boolean
  readonly created_at: string
}
export interface Attempt {
  readonly id: string
  readonly event_id: string
  readonly webhook_subscription_id: string
  readonly status: string
  readonly response_code: number
  readonly response_body: string
  readonly attempted_at: string
  readonly created_at: string
}
export interface IssuingEvent {
  readonly id: string
  readonly type: string
  readonly created_at: string
  readonly data: { readonly object: unknown }
}
export interface Transfer {
  readonly id: string
  readonly transaction_id: string
  readonly payment_rail: string
  readonly amount: number
  readonly currency: string
  readonly from_financial_account_id: string
  readonly to_financial_account_id: string
  readonly status: string
  readonly description: string | null
  readonly created_at: string
}
export interface ApiKey {
  readonly id: string
  readonly name: string
  readonly role: string
  /** null: every program of the organization. */
  readonly program_ids: ReadonlyArray<string> | null
  readonly pan_reveal: boolean
  readonly card_display: boolean
  readonly inbound_funding: boolean
  readonly network: boolean
  readonly created_at: string
  readonly revoked_at: string | null
}
