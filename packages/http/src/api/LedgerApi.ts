import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { ListOf, PagingParams, Timestamp, Uuid } from "./Common.js"
import { ProgramAuth } from "./Security.js"

/** A money amount (interface §2): integer minor units and an ISO 4217 code. */
export const MoneyAmount = Schema.Struct({ amount: Schema.Number, currency: Schema.String }).annotations({ identifier: "MoneyAmount" })

export const Wallet = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("wallet"),
  program_id: Schema.String,
  holder: Schema.Struct({ name: Schema.String, email: Schema.NullOr(Schema.String) }),
  financial_account_id: Schema.String,
  created_at: Timestamp,
  updated_at: Timestamp
}).annotations({ identifier: "Wallet" })

export const FinancialAccount = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("financial_account"),
  program_id: Schema.String,
  wallet_id: Schema.NullOr(Schema.String),
  kind: Schema.Literal("wallet", "settlement"),
  currency: Schema.String,
  balance: MoneyAmount,
  created_at: Timestamp,
  updated_at: Timestamp
}).annotations({ identifier: "FinancialAccount" })

export const BookBalance = Schema.Struct({
  object: Schema.Literal("book_balance"),
  financial_account_id: Schema.String,
  book: Schema.String,
  debits: MoneyAmount,
  credits: MoneyAmount,
  balance: MoneyAmount,
  updated_at: Timestamp
}).annotations({ identifier: "BookBalance" })

export const Transfer = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("transfer"),
  program_id: Schema.String,
  transaction_id: Schema.String,
  payment_rail: Schema.String,
  amount: Schema.Number,
  currency: Schema.String,
  from_financial_account_id: Schema.String,
  to_financial_account_id: Schema.String,
  status: Schema.Literal("PENDING", "SETTLED"),
  description: Schema.NullOr(Schema.String),
  created_at: Timestamp,
  updated_at: Timestamp
}).annotations({ identifier: "Transfer" })

export const Transaction = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("transaction"),
  program_id: Schema.String,
  status: Schema.Literal("PENDING", "SETTLED", "APPROVED", "DECLINED"),
  amount: Schema.Number,
  currency: Schema.String,
  card_id: Schema.NullOr(Schema.String),
  decline_reason: Schema.NullOr(Schema.String),
  mcc: Schema.NullOr(Schema.String),
  merchant_name: Schema.NullOr(Schema.String),
  created_at: Timestamp,
  updated_at: Timestamp
}).annotations({ identifier: "Transaction" })

export const BookEntry = Schema.Struct({
  book: Schema.String,
  financial_account_id: Schema.String,
  entry_type: Schema.Literal("DEBIT", "CREDIT"),
  amount: MoneyAmount
}).annotations({ identifier: "BookEntry" })

export const BookTransfer = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("book_transfer"),
  transfer_id: Schema.String,
  transaction_id: Schema.String,
  amount: MoneyAmount,
  financial_account_ids: Schema.Array(Schema.String),
  entries: Schema.Array(BookEntry),
  posted_at: Timestamp
}).annotations({ identifier: "BookTransfer" })

const OptionalId = Schema.optional(Schema.NullOr(Uuid))

export const CreateWallet = Schema.Struct({
  holder: Schema.Struct({
    name: Schema.String.pipe(Schema.maxLength(200)),
    email: Schema.optional(Schema.NullOr(Schema.String.pipe(Schema.maxLength(254))))
  }),
  currency: Schema.optional(Schema.String.pipe(Schema.maxLength(3)))
})

/** POST /v1/transfers: `paymentRail` (or `payment_rail`) and the rest as CONTRACT §3 names them. */
export const CreateTransfer = Schema.Struct({
  paymentRail: Schema.optional(Schema.String.pipe(Schema.maxLength(32))),
  payment_rail: Schema.optional(Schema.String.pipe(Schema.maxLength(32))),
  amount: Schema.Number,
  currency: Schema.String.pipe(Schema.maxLength(3)),
  from_financial_account_id: OptionalId,
  to_financial_account_id: OptionalId,
  transaction_id: OptionalId,
  description: Schema.optional(Schema.NullOr(Schema.String.pipe(Schema.maxLength(500))))
})

const BookTransferParams = Schema.Struct({
  ...PagingParams,
  book: Schema.optional(Schema.String),
  transfer_id: Schema.optional(Schema.String)
})

/** Wallets (CONTRACT §3). */
export class WalletsApi extends HttpApiGroup.make("wallets")
  .add(HttpApiEndpoint.post("create", "/wallets").setPayload(CreateWallet).addSuccess(Wallet))
  .add(HttpApiEndpoint.get("list", "/wallets").setUrlParams(Schema.Struct(PagingParams)).addSuccess(ListOf(Wallet)))
  .add(HttpApiEndpoint.get("get", "/wallets/:wallet_id").setPath(Schema.Struct({ wallet_id: Schema.String })).addSuccess(Wallet))
  .middleware(ProgramAuth)
  .prefix("/v1")
{}

/** Financial accounts, their balances per book and their book transfers (interface §4.7). */
export class FinancialAccountsApi extends HttpApiGroup.make("financialAccounts")
  .add(
    HttpApiEndpoint.get("list", "/financial-accounts")
      .setUrlParams(Schema.Struct({
        ...PagingParams,
        kind: Schema.optional(Schema.String),
        wallet_id: Schema.optional(Schema.String),
        currency: Schema.optional(Schema.String)
      }))
      .addSuccess(ListOf(FinancialAccount))
  )
  .add(
    HttpApiEndpoint.get("get", "/financial-accounts/:financial_account_id")
      .setPath(Schema.Struct({ financial_account_id: Schema.String }))
      .addSuccess(FinancialAccount)
  )
  .add(
    HttpApiEndpoint.get("balances", "/financial-accounts/:financial_account_id/balances")
      .setPath(Schema.Struct({ financial_account_id: Schema.String }))
      .addSuccess(ListOf(BookBalance))
  )
  .add(
    HttpApiEndpoint.get("bookTransfers", "/financial-accounts/:financial_account_id/book-transfers")
      .setPath(Schema.Struct({ financial_account_id: Schema.String }))
      .setUrlParams(Schema.Struct({ ...BookTransferParams.fields, transaction_id: Schema.optional(Schema.String) }))
      .addSuccess(ListOf(BookTransfer))
  )
  .middleware(ProgramAuth)
  .prefix("/v1")
{}

/** Transfers on book, ACH same day, wire and FedNow (CONTRACT §3, interface §4.11). */
export class TransfersApi extends HttpApiGroup.make("transfers")
  .add(HttpApiEndpoint.post("create", "/transfers").setPayload(CreateTransfer).addSuccess(Transfer))
  .add(
    HttpApiEndpoint.get("list", "/transfers")
      .setUrlParams(Schema.Struct({
        ...PagingParams,
        status: Schema.optional(Schema.String),
        payment_rail: Schema.optional(Schema.String),
        transaction_id: Schema.optional(Schema.String),
        financial_account_id: Schema.optional(Schema.String)
      }))
      .addSuccess(ListOf(Transfer))
  )
  .add(HttpApiEndpoint.get("get", "/transfers/:transfer_id").setPath(Schema.Struct({ transfer_id: Schema.String })).addSuccess(Transfer))
  .middleware(ProgramAuth)
  .prefix("/v1")
{}

/** Transactions and their book transfers (interface §4.6). */
export class TransactionsApi extends HttpApiGroup.make("transactions")
  .add(
    HttpApiEndpoint.get("list", "/transactions")
      .setUrlParams(Schema.Struct({ ...PagingParams, status: Schema.optional(Schema.String), card_id: Schema.optional(Schema.String) }))
      .addSuccess(ListOf(Transaction))
  )
  .add(
    HttpApiEndpoint.get("get", "/transactions/:transaction_id")
      .setPath(Schema.Struct({ transaction_id: Schema.String }))
      .addSuccess(Transaction)
  )
  .add(
    HttpApiEndpoint.get("bookTransfers", "/transactions/:transaction_id/book-transfers")
      .setPath(Schema.Struct({ transaction_id: Schema.String }))
      .setUrlParams(BookTransferParams)
      .addSuccess(ListOf(BookTransfer))
  )
  .middleware(ProgramAuth)
  .prefix("/v1")
{}

/** Sandbox simulation of a rail settling a PENDING transfer (404 in production). */
export class SimulateTransfersApi extends HttpApiGroup.make("simulateTransfers")
  .add(
    HttpApiEndpoint.post("settle", "/simulate/transfers/:transfer_id/settle")
      .setPath(Schema.Struct({ transfer_id: Schema.String }))
      .addSuccess(Transfer)
  )
  .middleware(ProgramAuth)
  .prefix("/v1")
{}
