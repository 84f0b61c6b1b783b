/**
 * Ledger records (CONTRACT §3, interface §2): wallets, financial accounts, transfers, transactions,
 * book transfers and their entries. Amounts are integers in minor units (cents); currencies are
 * ISO 4217 codes in upper case.
 */

/** Largest amount accepted in one transfer, in minor units (10^15: far above any real payment, far below 2^53). */
export const MAX_AMOUNT_MINOR = 1_000_000_000_000_000

/** The rails a caller may ask for in POST /v1/transfers. */
export const PAYMENT_RAILS = ["book", "ach_same_day", "wire", "fednow_instant"] as const
export type PaymentRail = (typeof PAYMENT_RAILS)[number]
/** Rails of transfers the platform posts itself (card authorizations settle wallet → settlement). */
export type TransferRail = PaymentRail | "card"

/** Books of the chart of books (docs/ledger.md). Every account has a row for each. */
export const BOOKS = ["principal", "cash"] as const
export type Book = (typeof BOOKS)[number]

export type AccountKind = "wallet" | "settlement"
export type EntryType = "DEBIT" | "CREDIT"
export type TransferStatus = "PENDING" | "SETTLED"
/** PENDING/SETTLED for transfer-driven transactions; APPROVED/DECLINED for card authorizations. */
export type TransactionStatus = "PENDING" | "SETTLED" | "APPROVED" | "DECLINED"
export const TRANSACTION_STATUSES: ReadonlyArray<TransactionStatus> = ["PENDING", "SETTLED", "APPROVED", "DECLINED"]
export const TRANSFER_STATUSES: ReadonlyArray<TransferStatus> = ["PENDING", "SETTLED"]

/** The money amount of interface §2. */
export interface Money {
  readonly amount: number
  readonly currency: string
}

export interface Holder {
  readonly name: string
  readonly email: string | null
}

export interface Wallet {
  readonly id: string
  readonly object: "wallet"
  readonly program_id: string
  readonly holder: Holder
  readonly financial_account_id: string
  readonly created_at: string
  readonly updated_at: string
}

export interface FinancialAccount {
  readonly id: string
  readonly object: "financial_account"
  readonly program_id: string
  readonly wallet_id: string | null
  readonly kind: AccountKind
  readonly currency: string
  /** credits − debits of the principal book. */
  readonly balance: Money
  readonly created_at: string
  readonly updated_at: string
}

/** One book of one account: running totals kept in the transaction of its entries. */
export interface BookBalance {
  readonly object: "book_balance"
  readonly financial_account_id: string
  readonly book: Book
  readonly debits: Money
  readonly credits: Money
  /** On the book's normal side: credits − debits for principal, debits − credits for cash. */
  readonly balance: Money
  readonly updated_at: string
}

export interface Transfer {
  readonly id: string
  readonly object: "transfer"
  readonly program_id: string
  readonly transaction_id: string
  readonly payment_rail: TransferRail
  readonly amount: number
  readonly currency: string
  readonly from_financial_account_id: string
  readonly to_financial_account_id: string
  readonly status: TransferStatus
  readonly description: string | null
  readonly created_at: string
  readonly updated_at: string
}

export interface Transaction {
  readonly id: string
  readonly object: "transaction"
  readonly program_id: string
  readonly status: TransactionStatus
  readonly amount: number
  readonly currency: string
  readonly card_id: string | null
  readonly decline_reason: string | null
  readonly mcc: string | null
  readonly merchant_name: string | null
  readonly created_at: string
  readonly updated_at: string
}

export interface BookEntry {
  readonly book: Book
  readonly financial_account_id: string
  readonly entry_type: EntryType
  readonly amount: Money
}

export interface BookTransfer {
  readonly id: string
  readonly object: "book_transfer"
  readonly transfer_id: string
  readonly transaction_id: string
  readonly amount: Money
  readonly financial_account_ids: ReadonlyArray<string>
  readonly entries: ReadonlyArray<BookEntry>
  readonly posted_at: string
}
