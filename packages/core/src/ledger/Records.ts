import { Schema } from "effect"
import { ResponseCode } from "../cards/ResponseCodes.js"
import { Uuid } from "../platform/Ids.js"
import { initialMetadata, Metadata, MetadataInput } from "../platform/Metadata.js"
import { WebhookTag } from "../webhooks/Records.js"
import { MAX_EMAIL_LENGTH } from "../platform/Email.js"

/**
 * Ledger records (docs/ledger.md, docs/api.md#money): wallets, financial accounts, transfers,
 * transactions, book transfers and their entries — one schema each, used by the HTTP API to
 * encode and decode and, through `typeof X.Type`, by the services and stores. Amounts are
 * integers in minor units (cents); currencies are ISO 4217 codes in upper case.
 */

/** Largest amount accepted in one transfer, in minor units (10^15: far above any real payment, far below 2^53). */
export const MAX_AMOUNT_MINOR = 1_000_000_000_000_000
/**
 * Largest running debit or credit total of one (account, book), in minor units: 2^53 − 1, the
 * largest integer a JSON number (and a JS number) carries exactly. A posting that would pass it is
 * refused (422 balance_limit_exceeded), so every balance, total and sum the API shows is exact.
 */
export const MAX_TOTAL_MINOR = Number.MAX_SAFE_INTEGER
/** Longest description of a transfer, in characters. */
export const MAX_DESCRIPTION_LENGTH = 500
/** Longest holder name, in characters (after trimming). */
export const MAX_HOLDER_NAME_LENGTH = 200
/** The currency of a wallet created without one. */
export const DEFAULT_CURRENCY = "USD"

/** An ISO 4217 currency code in upper case, e.g. USD. */
export const Currency = Schema.String.pipe(
  Schema.pattern(/^[A-Z]{3}$/, { message: () => "must be an ISO 4217 code in upper case, e.g. USD" }),
  Schema.brand("Currency")
).annotations({ identifier: "Currency", description: "An ISO 4217 currency code in upper case, e.g. USD." })
export type Currency = typeof Currency.Type

/** The ISO 4217 codes the runtime knows: a currency outside them is an unknown one (400). */
const KNOWN_CURRENCIES: ReadonlySet<string> = new Set(Intl.supportedValuesOf("currency"))

/** True when `code` is an ISO 4217 currency code the runtime knows (upper case). */
export const isKnownCurrency = (code: string): boolean => KNOWN_CURRENCIES.has(code)

/** An amount to move, in minor units: a positive integer no larger than MAX_AMOUNT_MINOR. */
export const AmountMinor = Schema.Number.pipe(
  Schema.filter(
    (n) =>
      (Number.isSafeInteger(n) && n > 0 && n <= MAX_AMOUNT_MINOR) ||
      `must be a positive integer in minor units, at most ${MAX_AMOUNT_MINOR}`
  ),
  Schema.brand("AmountMinor")
).annotations({ identifier: "AmountMinor" })
export type AmountMinor = typeof AmountMinor.Type

/** The rails a caller may ask for in POST /v1/transfers. */
export const PAYMENT_RAILS = ["book", "ach_same_day", "wire", "fednow_instant"] as const
export const PaymentRail = Schema.Literal(...PAYMENT_RAILS)
export type PaymentRail = typeof PaymentRail.Type
/** Rails of every transfer, the platform's own included (card authorizations settle wallet → settlement). */
export const TRANSFER_RAILS = [...PAYMENT_RAILS, "card"] as const
export const TransferRail = Schema.Literal(...TRANSFER_RAILS)
export type TransferRail = typeof TransferRail.Type

/** Books of the chart of books (docs/ledger.md). Every account has a row for each. */
export const BOOKS = ["principal", "cash"] as const
export const Book = Schema.Literal(...BOOKS)
export type Book = typeof Book.Type

export const AccountKind = Schema.Literal("wallet", "settlement")
export type AccountKind = typeof AccountKind.Type
export const EntryType = Schema.Literal("DEBIT", "CREDIT")
export type EntryType = typeof EntryType.Type
/**
 * PENDING until its rail settles it (ach_same_day, wire), SETTLED, or RETURNED by its rail
 * (docs/ledger.md#returns); a transfer of a rail that settles at once is SETTLED from the start.
 */
export const TRANSFER_STATUSES = ["PENDING", "SETTLED", "RETURNED"] as const
export const TransferStatus = Schema.Literal(...TRANSFER_STATUSES)
export type TransferStatus = typeof TransferStatus.Type

/** Rails whose transfers settle when posted; the others stay PENDING until the rail settles them. */
export const RAILS_SETTLING_AT_ONCE: ReadonlyArray<TransferRail> = ["book", "fednow_instant", "card"]

/**
 * The statuses a transfer of a rail can have: SETTLED alone for a rail that settles at once, every
 * status for the others (the rails with returns, docs/ledger.md#returns). The lists read one index
 * range per (status, rail) a transfer can have, not per pair of the two unions.
 */
export const statusesOfRail = (rail: TransferRail): ReadonlyArray<TransferStatus> =>
  RAILS_SETTLING_AT_ONCE.includes(rail) ? ["SETTLED"] : TRANSFER_STATUSES
/**
 * PENDING/SETTLED for transfer-driven transactions; a card transaction is PENDING while its hold is
 * open, then SETTLED, VOIDED or EXPIRED, or DECLINED from the start (docs/card-transactions.md).
 */
export const TRANSACTION_STATUSES = ["PENDING", "SETTLED", "VOIDED", "EXPIRED", "DECLINED"] as const
export const TransactionStatus = Schema.Literal(...TRANSACTION_STATUSES)
export type TransactionStatus = typeof TransactionStatus.Type

/** A money amount: integer minor units and an ISO 4217 code. */
export const Money = Schema.Struct({ amount: Schema.Number, currency: Schema.String }).annotations({ identifier: "MoneyAmount" })
export type Money = typeof Money.Type

export const Holder = Schema.Struct({
  name: Schema.String.annotations({ description: "The holder's name." }),
  email: Schema.NullOr(Schema.String).annotations({ description: "The holder's email address, or null." })
})
export type Holder = typeof Holder.Type

export const Wallet = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("wallet"),
  program_id: Schema.String,
  holder: Holder.annotations({ description: "Who holds the wallet: a name and an email address." }),
  financial_account_id: Schema.String.annotations({ description: "The wallet's financial account (one per wallet, in its currency)." }),
  tag: Schema.NullOr(Schema.String).annotations({
    description: "The program's customer the wallet belongs to (docs/ledger.md#wallet-tags), or null."
  }),
  /** The program's cardholder the wallet is for (docs/cardholders.md), or null. */
  cardholder_id: Schema.NullOr(Schema.String),
  metadata: Metadata,
  created_at: Schema.String,
  updated_at: Schema.String
}).annotations({ identifier: "Wallet" })
export type Wallet = typeof Wallet.Type

export const FinancialAccount = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("financial_account"),
  program_id: Schema.String,
  wallet_id: Schema.NullOr(Schema.String),
  kind: AccountKind.annotations({
    description: "A wallet's account, or the program's settlement account (the other side of external rails and card settlement)."
  }),
  currency: Schema.String,
  balance: Schema.propertySignature(Money).annotations({
    description: "Credits − debits of the principal book: what is posted, in minor units."
  }),
  pending_balance: Schema.propertySignature(Money).annotations({
    description: "Posted but not available: open card holds and inbound credits still PENDING on their rail, in minor units."
  }),
  available_balance: Schema.propertySignature(Money).annotations({
    description: "balance − pending_balance: what a transfer or an authorization may take, in minor units."
  }),
  created_at: Schema.String,
  updated_at: Schema.String
}).annotations({ identifier: "FinancialAccount" })
export type FinancialAccount = typeof FinancialAccount.Type

/** One book of one account: running totals kept in the transaction of its entries. */
export const BookBalance = Schema.Struct({
  object: Schema.Literal("book_balance"),
  financial_account_id: Schema.String,
  book: Book,
  debits: Schema.propertySignature(Money).annotations({ description: "The total of the book's debit entries, in minor units." }),
  credits: Schema.propertySignature(Money).annotations({ description: "The total of the book's credit entries, in minor units." }),
  balance: Schema.propertySignature(Money).annotations({
    description: "On the book's normal side: credits − debits for principal, debits − credits for cash, in minor units."
  }),
  updated_at: Schema.String
}).annotations({ identifier: "BookBalance" })
export type BookBalance = typeof BookBalance.Type

export const Transfer = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("transfer"),
  program_id: Schema.String,
  transaction_id: Schema.String,
  payment_rail: TransferRail,
  amount: Schema.Number,
  currency: Schema.String,
  from_financial_account_id: Schema.String,
  to_financial_account_id: Schema.String,
  status: TransferStatus,
  description: Schema.NullOr(Schema.String),
  metadata: Metadata,
  return_code: Schema.NullOr(Schema.String).annotations({
    description: "The rail's return code when RETURNED (ACH `R01`–`R85`, a wire's own text), else null (docs/ledger.md#returns)."
  }),
  return_reason: Schema.NullOr(Schema.String).annotations({ description: "The reason sent with the return, or null." }),
  created_at: Schema.String,
  updated_at: Schema.String
}).annotations({ identifier: "Transfer" })
export type Transfer = typeof Transfer.Type

/**
 * The messages of a card transaction (docs/card-transactions.md). AUTHORIZATION_ADVICE is the
 * network's stand-in approval, held whatever the checks say (docs/network.md#authorization_advice).
 */
export const CARD_EVENT_TYPES = [
  "AUTHORIZATION",
  "FINANCIAL_AUTHORIZATION",
  "INCREMENTAL_AUTHORIZATION",
  "AUTHORIZATION_ADVICE",
  "AUTHORIZATION_REVERSAL",
  "AUTHORIZATION_EXPIRY",
  "CLEARING",
  "RETURN"
] as const
export const CardEventType = Schema.Literal(...CARD_EVENT_TYPES)
export type CardEventType = typeof CardEventType.Type

/** One message of a card transaction, as it was decided. */
export const CardEvent = Schema.Struct({
  id: Schema.String,
  type: CardEventType,
  amount: Schema.Number,
  result: Schema.Literal("APPROVED", "DECLINED").annotations({ description: "Whether the message was approved or declined." }),
  decline_reason: Schema.NullOr(Schema.String),
  /**
   * The ISO 8583 response code the message was answered with (docs/network.md#response-codes): `00`
   * approved or acknowledged, `10` a partial approval, a decline's code (`51`, `05`, `62`, ...).
   * Null only on an event stored before events kept it whose code cannot be told (docs/decisions.md).
   */
  response_code: Schema.NullOr(ResponseCode),
  created_at: Schema.String
}).annotations({ identifier: "CardEvent" })
export type CardEvent = typeof CardEvent.Type

export const DECISION_REASONS = ["webhook_approved", "webhook_declined", "webhook_timeout", "webhook_error"] as const

/** One real-time decision asked of the program (docs/card-transactions.md#real-time-decisions). */
export const RequestHistoryEntry = Schema.Struct({
  amount: Schema.Number,
  approved: Schema.Boolean.annotations({ description: "Whether the program approved." }),
  reason: Schema.Literal(...DECISION_REASONS).annotations({
    description:
      "What decided: the program's answer (webhook_approved, webhook_declined), or its timeout or error and the endpoint's timeout_decision."
  }),
  created_at: Schema.String
}).annotations({ identifier: "AuthorizationDecisionRecord" })
export type RequestHistoryEntry = typeof RequestHistoryEntry.Type

/**
 * The merchant of a card transaction as its network sent it (docs/network.md#the-merchant): the
 * card acceptor's id and name, its city and country (ISO 3166 alpha-2) when sent, and its category.
 */
export const Merchant = Schema.Struct({
  acceptor_id: Schema.String.annotations({ description: "The card acceptor's id at its acquirer." }),
  name: Schema.String.annotations({ description: "The merchant's name as sent." }),
  city: Schema.NullOr(Schema.String).annotations({ description: "The merchant's city, or null when not sent." }),
  country: Schema.NullOr(Schema.String).annotations({ description: "The merchant's country (ISO 3166-1 alpha-2), or null when not sent." }),
  mcc: Schema.String
}).annotations({ identifier: "Merchant", description: "The merchant as the card network sent it." })
export type Merchant = typeof Merchant.Type

export const Transaction = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("transaction"),
  program_id: Schema.String,
  status: TransactionStatus,
  /** A card transaction's `authorized_amount`; a transfer-driven one's total. */
  amount: Schema.Number,
  currency: Schema.String,
  card_id: Schema.NullOr(Schema.String),
  /**
   * Card transactions: the financial account the money moves on — the card's wallet account, whose
   * `pending_balance` holds and whose `balance` clearings move; null for a transfer-driven
   * transaction, whose transfers name their two accounts.
   */
  financial_account_id: Schema.NullOr(Schema.String).annotations({
    description:
      "Card transactions: the financial account the money moves on (the card's wallet account, where holds and clearings post); null for a transaction driven by transfers, whose transfers name their accounts."
  }),
  decline_reason: Schema.NullOr(Schema.String),
  mcc: Schema.NullOr(Schema.String),
  merchant_name: Schema.NullOr(Schema.String).annotations({ description: "Card transactions: the merchant's name; else null." }),
  merchant: Schema.NullOr(Merchant).annotations({
    description: "Card transactions: the merchant object its messages sent (`mcc` and `merchant_name` repeat two of its fields); else null."
  }),
  network_transaction_id: Schema.NullOr(Schema.String).annotations({
    description: "The network's id linking the messages of this card transaction (docs/network.md); null when none sent one."
  }),
  authorized_amount: Schema.NullOr(Schema.Number).annotations({
    description: "Card transactions only (null otherwise): approved by authorizations and increments, in minor units."
  }),
  pending_amount: Schema.NullOr(Schema.Number).annotations({ description: "Card transactions only: the open hold, in minor units." }),
  settled_amount: Schema.NullOr(Schema.Number).annotations({ description: "Card transactions only: cleared − returned, in minor units." }),
  disputed_amount: Schema.NullOr(Schema.Number).annotations({
    description:
      "Card transactions only: the sum of its disputes' amounts in minor units, whatever their status (docs/disputes.md): what is still disputable is `settled_amount − disputed_amount`."
  }),
  /** Card transactions only: when the open hold expires. */
  expires_at: Schema.NullOr(Schema.String),
  card_events: Schema.Array(CardEvent).annotations({
    description: "Card transactions: each network message, as it was decided, oldest first."
  }),
  request_history: Schema.Array(RequestHistoryEntry).annotations({
    description: "Card transactions: each real-time decision asked of the program, oldest first."
  }),
  created_at: Schema.String,
  updated_at: Schema.String
}).annotations({ identifier: "Transaction" })
export type Transaction = typeof Transaction.Type

export const BookEntry = Schema.Struct({
  book: Book,
  financial_account_id: Schema.String,
  entry_type: EntryType.annotations({ description: "DEBIT or CREDIT." }),
  amount: Schema.propertySignature(Money).annotations({ description: "The entry's amount, in minor units." })
}).annotations({ identifier: "BookEntry" })
export type BookEntry = typeof BookEntry.Type

export const BookTransfer = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("book_transfer"),
  transfer_id: Schema.String,
  transaction_id: Schema.String,
  amount: Schema.propertySignature(Money).annotations({ description: "The amount moved, in minor units." }),
  financial_account_ids: Schema.Array(Schema.String).annotations({ description: "The accounts the entries touch." }),
  entries: Schema.Array(BookEntry),
  posted_at: Schema.String
}).annotations({ identifier: "BookTransfer" })
export type BookTransfer = typeof BookTransfer.Type

// ---- inputs, decoded once at the edge ---------------------------------------------------------

const OptionalId = Schema.optional(Schema.NullOr(Uuid))

/**
 * A wallet's tag: the program's customer it belongs to, with the syntax of a webhook
 * subscription's tag (1 to 64 characters, compared exactly), so that a tagged subscription and the
 * wallets of its customer name it alike (docs/ledger.md#wallet-tags).
 */
export const WalletTag = WebhookTag

/** POST /v1/wallets. */
export const CreateWallet = Schema.Struct({
  holder: Schema.Struct({
    name: Schema.propertySignature(
      Schema.Trim.pipe(Schema.minLength(1, { message: () => "must not be empty" }), Schema.maxLength(MAX_HOLDER_NAME_LENGTH))
    ).annotations({ description: `The holder's name, 1 to ${MAX_HOLDER_NAME_LENGTH} characters (trimmed).` }),
    email: Schema.optional(
      Schema.NullOr(
        Schema.String.pipe(
          Schema.maxLength(MAX_EMAIL_LENGTH),
          Schema.pattern(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, { message: () => "is not a valid email address" })
        )
      ).annotations({ description: "The holder's email address, or null." })
    )
  }).annotations({ description: "Who holds the wallet: a name (required) and an email address." }),
  currency: Schema.optional(Currency),
  tag: Schema.optional(
    Schema.NullOr(WalletTag).annotations({
      description:
        "The program's customer the wallet belongs to, 1 to 64 characters (docs/ledger.md#wallet-tags); null or absent: untagged."
    })
  ),
  /** A cardholder of the program (404 param cardholder_id otherwise); null or absent: none. */
  cardholder_id: Schema.optional(Schema.NullOr(Uuid)),
  metadata: Schema.optional(MetadataInput)
})
export type CreateWallet = typeof CreateWallet.Type

/** The body of PATCH /v1/wallets/{wallet_id}: the fields to change; a field left out is kept. */
export const UpdateWallet = Schema.Struct({
  tag: Schema.optional(
    Schema.NullOr(WalletTag).annotations({
      description: "The program's customer the wallet belongs to, 1 to 64 characters; null clears it."
    })
  ),
  /** A change of the metadata (docs/api.md#metadata): keys given are set, "" removes one, null or "" clears all. */
  metadata: Schema.optional(MetadataInput)
}).annotations({ identifier: "UpdateWallet" })
export type UpdateWallet = typeof UpdateWallet.Type

/** A holder's name or email as a search names it: the whole of it, letter case aside (docs/ledger.md#finding-a-wallet). */
const HolderSearch = (maxLength: number) =>
  Schema.Trim.pipe(Schema.minLength(1, { message: () => "must not be empty" }), Schema.maxLength(maxLength))

/**
 * The filters of GET /v1/wallets (paging aside): `tag` keeps the wallets of that tag;
 * `holder_name` and `holder_email` the wallets whose holder has exactly that name or email, letter
 * case aside (an index range of the matches, never a scan of the program).
 */
export const WalletFilter = Schema.Struct({
  tag: Schema.optional(WalletTag),
  holder_name: Schema.optional(HolderSearch(MAX_HOLDER_NAME_LENGTH)).annotations({
    description: "Only the wallets whose holder has exactly this name, letter case aside."
  }),
  holder_email: Schema.optional(HolderSearch(MAX_EMAIL_LENGTH)).annotations({
    description: "Only the wallets whose holder has exactly this email address, letter case aside."
  })
})
export type WalletFilter = typeof WalletFilter.Type

/**
 * The body of POST /v1/transfers as sent: the rail as `paymentRail` or `payment_rail` (both
 * accepted; when both are sent they must agree), the rest as docs/ledger.md names them.
 */
const TransferBody = Schema.Struct({
  paymentRail: Schema.optional(PaymentRail),
  payment_rail: Schema.optional(PaymentRail),
  amount: AmountMinor,
  currency: Currency,
  from_financial_account_id: OptionalId,
  to_financial_account_id: OptionalId,
  transaction_id: OptionalId,
  description: Schema.optional(Schema.NullOr(Schema.String.pipe(Schema.maxLength(MAX_DESCRIPTION_LENGTH)))),
  metadata: Schema.optional(MetadataInput)
}).pipe(
  Schema.filter((body) => {
    if (body.paymentRail === undefined && body.payment_rail === undefined)
      return { path: ["paymentRail"], message: "paymentRail is required" }
    if (body.paymentRail !== undefined && body.payment_rail !== undefined && body.paymentRail !== body.payment_rail) {
      return { path: ["paymentRail"], message: "Conflicting parameters: paymentRail and payment_rail differ" }
    }
    return true
  })
)

/** The fields a POST /v1/transfers body may have: any other is unknown (400). */
export const TRANSFER_BODY_FIELDS: ReadonlySet<string> = new Set(Object.keys(TransferBody.from.fields))

/** A transfer request, decoded: one rail, ids in lower case, absent references as null. */
export interface TransferRequest {
  readonly payment_rail: PaymentRail
  readonly amount: AmountMinor
  readonly currency: Currency
  readonly from_financial_account_id: string | null
  readonly to_financial_account_id: string | null
  /** Attach to this existing transaction instead of creating one. */
  readonly transaction_id: string | null
  readonly description: string | null
  /** The transfer's metadata (decoded: {} when none was sent; optional for callers that build a request in code). */
  readonly metadata?: Metadata | undefined
}

/**
 * A `TransferRequest` as TransferBody's decoding made it. Its fields were each checked there, so
 * they are not checked again: a Struct of the same fields here ran every refinement (the amount's,
 * the currency's pattern, the rail's literals) a second time on every transfer and batch item, half
 * of the body's decoding (docs/decisions.md#the-cost-of-a-request-on-the-api-node).
 */
const DecodedTransferRequest = Schema.declare(
  (input: unknown): input is TransferRequest =>
    typeof input === "object" &&
    input !== null &&
    typeof (input as TransferRequest).payment_rail === "string" &&
    typeof (input as TransferRequest).amount === "number" &&
    typeof (input as TransferRequest).currency === "string",
  { identifier: "TransferRequest" }
)

/** POST /v1/transfers: the body as sent, decoded into a `TransferRequest`. */
export const CreateTransfer: Schema.Schema<TransferRequest, typeof TransferBody.Encoded> = Schema.transform(
  TransferBody,
  DecodedTransferRequest,
  {
    strict: false,
    decode: (body) => ({
      payment_rail: (body.paymentRail ?? body.payment_rail)!,
      amount: body.amount,
      currency: body.currency,
      from_financial_account_id: body.from_financial_account_id ?? null,
      to_financial_account_id: body.to_financial_account_id ?? null,
      transaction_id: body.transaction_id ?? null,
      description: body.description ?? null,
      metadata: initialMetadata(body.metadata)
    }),
    encode: (request) => ({ ...request, paymentRail: request.payment_rail })
  }
)

/** Most transfers one POST /v1/transfers/batch carries. */
export const MAX_BATCH_TRANSFERS = 1_000

/**
 * POST /v1/transfers/batch: up to MAX_BATCH_TRANSFERS transfer bodies, each as POST /v1/transfers
 * takes it, decoded one by one (a malformed item fails alone unless `atomic`); `atomic: true` makes
 * the batch all-or-nothing (docs/ledger.md#batches).
 */
export const CreateTransferBatch = Schema.Struct({
  transfers: Schema.Array(
    Schema.Unknown.annotations({
      identifier: "TransferBatchItem",
      description: "A transfer, exactly as the body of POST /v1/transfers."
    })
  )
    .pipe(Schema.minItems(1), Schema.maxItems(MAX_BATCH_TRANSFERS))
    .annotations({ description: `1 to ${MAX_BATCH_TRANSFERS} transfers, each a POST /v1/transfers body, posted in order.` }),
  atomic: Schema.optional(Schema.Boolean).annotations({
    description:
      "true: any item's failure is the request's (param names the item) and nothing is written; false (default): each item posts or fails on its own."
  })
})
export type CreateTransferBatch = typeof CreateTransferBatch.Type

/** Rails whose transfers their rail may return (docs/ledger.md#returns): the ones that settle later. */
export const RETURNABLE_RAILS = ["ach_same_day", "wire"] as const satisfies ReadonlyArray<TransferRail>
/** Longest return code, in characters: a wire's free text (an ACH code is three). */
export const MAX_RETURN_CODE_LENGTH = 32
/** Longest reason sent with a return, in characters. */
export const MAX_RETURN_REASON_LENGTH = 500

/**
 * POST /v1/network/transfers/{transfer_id}/return: the rail's return code and an optional reason.
 * Which codes a rail takes is the transfer's rail's rule (`returnCodeProblem`, ledger/Returns.ts),
 * checked once the transfer is found.
 */
export const ReturnTransfer = Schema.Struct({
  return_code: Schema.String.pipe(
    Schema.minLength(1, { message: () => "must not be empty" }),
    Schema.maxLength(MAX_RETURN_CODE_LENGTH, { message: () => `must be at most ${MAX_RETURN_CODE_LENGTH} characters` })
  ).annotations({ description: "The rail's return code: an ACH code (R01–R85) or a wire's own text." }),
  reason: Schema.optional(
    Schema.NullOr(
      Schema.String.pipe(
        Schema.maxLength(MAX_RETURN_REASON_LENGTH, { message: () => `must be at most ${MAX_RETURN_REASON_LENGTH} characters` })
      )
    ).annotations({ description: `The reason the rail sent with the return, at most ${MAX_RETURN_REASON_LENGTH} characters.` })
  )
}).annotations({ identifier: "ReturnTransfer" })
export type ReturnTransfer = typeof ReturnTransfer.Type
