import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import {
  AccountKind,
  BookBalance,
  BookTransfer,
  CreateTransfer,
  CreateTransferBatch,
  CreateWallet,
  Currency,
  FinancialAccount,
  ReturnTransfer,
  SettlementReport,
  Transaction,
  TransactionStatus,
  Transfer,
  TransferRail,
  TransferStatus,
  UpdateWallet,
  Uuid,
  Wallet,
  WalletFilter
} from "@issuing/core"
import { Schema } from "effect"
import { BusinessRules, SandboxOnly } from "./Annotations.js"
import { CreatedParams, ListOf, PagingParams, patch, post } from "./Common.js"
import { NetworkRight } from "./NetworkApi.js"
import { ProgramScoped } from "./Security.js"
import { BusinessRuleFailure, ErrorBody, NotFoundFailure } from "../errors.js"

// The records and inputs are core's (ledger/Records.ts): one schema each, decoded here once.
export { BookTransfer, FinancialAccount, Transaction, Transfer, Wallet }

/** Path ids stay plain strings: a malformed one is looked up (findOwned) and not found, a 404. */
const pathId = <K extends string>(name: K) => Schema.Struct({ [name]: Schema.String } as { [P in K]: typeof Schema.String })

const BookTransferParams = {
  ...PagingParams,
  book: Schema.optional(Schema.String),
  transfer_id: Schema.optional(Uuid)
}

/** Wallets (docs/ledger.md). */
export class WalletsApi extends HttpApiGroup.make("wallets")
  .add(post("create", "/wallets").setPayload(CreateWallet).addError(NotFoundFailure).addSuccess(Wallet))
  .add(
    HttpApiEndpoint.get("list", "/wallets")
      .setUrlParams(Schema.Struct({ ...PagingParams, ...WalletFilter.fields }))
      .addSuccess(ListOf(Wallet))
  )
  .add(HttpApiEndpoint.get("get", "/wallets/:wallet_id").setPath(pathId("wallet_id")).addError(NotFoundFailure).addSuccess(Wallet))
  .add(
    patch("update", "/wallets/:wallet_id")
      .setPath(pathId("wallet_id"))
      .setPayload(UpdateWallet)
      .addSuccess(Wallet)
      .addError(NotFoundFailure)
      .annotate(OpenApi.Description, "Changes a wallet's tag or metadata; a field left out is kept, a tag of null clears it.")
  )
  .middleware(ProgramScoped)
  .prefix("/v1") {}

/** Financial accounts, their balances per book and their book transfers. */
export class FinancialAccountsApi extends HttpApiGroup.make("financialAccounts")
  .add(
    HttpApiEndpoint.get("list", "/financial-accounts")
      .setUrlParams(
        Schema.Struct({
          ...PagingParams,
          kind: Schema.optional(AccountKind),
          wallet_id: Schema.optional(Uuid),
          currency: Schema.optional(Currency)
        })
      )
      .addSuccess(ListOf(FinancialAccount))
  )
  .add(
    HttpApiEndpoint.get("get", "/financial-accounts/:financial_account_id")
      .setPath(pathId("financial_account_id"))
      .addError(NotFoundFailure)
      .addSuccess(FinancialAccount)
  )
  .add(
    HttpApiEndpoint.get("balances", "/financial-accounts/:financial_account_id/balances")
      .setPath(pathId("financial_account_id"))
      // A fixed two-row list: the paging parameters every list takes are accepted and ignored.
      .setUrlParams(Schema.Struct(PagingParams))
      .addError(NotFoundFailure)
      .addSuccess(ListOf(BookBalance))
  )
  .add(
    HttpApiEndpoint.get("bookTransfers", "/financial-accounts/:financial_account_id/book-transfers")
      .setPath(pathId("financial_account_id"))
      .addError(NotFoundFailure)
      .setUrlParams(Schema.Struct({ ...BookTransferParams, transaction_id: Schema.optional(Uuid) }))
      .addSuccess(ListOf(BookTransfer))
  )
  .middleware(ProgramScoped)
  .prefix("/v1") {}

/** A batch item that was not posted: the `error` object of the envelope a single POST would have answered. */
export const TransferBatchItemError = Schema.Struct({ error: ErrorBody }).annotations({
  identifier: "TransferBatchItemError",
  description: "A batch item that was not posted: the `error` object a single POST /v1/transfers would have answered."
})

/** The posting rules a transfer (alone or in a batch) may break: ledger.md's refusals. */
const TRANSFER_RULES = [
  "insufficient_funds",
  "balance_limit_exceeded",
  "currency_mismatch",
  "same_financial_account",
  "settlement_account_not_allowed"
] as const

/** The answer of POST /v1/transfers/batch: one result per item, in order. */
export const TransferBatch = Schema.Struct({
  object: Schema.Literal("transfer_batch"),
  data: Schema.Array(Schema.Union(Transfer, TransferBatchItemError))
}).annotations({ identifier: "TransferBatch" })

/** Transfers on book, ACH same day, wire and FedNow (docs/ledger.md). */
export class TransfersApi extends HttpApiGroup.make("transfers")
  .add(
    post("create", "/transfers")
      .setPayload(CreateTransfer)
      .addSuccess(Transfer)
      // The accounts or transaction it names; the posting rules.
      .addError(NotFoundFailure)
      .addError(BusinessRuleFailure)
      .annotate(BusinessRules, TRANSFER_RULES)
  )
  .add(
    post("batch", "/transfers/batch")
      .setPayload(CreateTransferBatch)
      .addSuccess(TransferBatch)
      // An atomic batch fails as its first failing item would.
      .addError(NotFoundFailure)
      .addError(BusinessRuleFailure)
      .annotate(BusinessRules, TRANSFER_RULES)
      .annotate(
        OpenApi.Description,
        "Up to 1,000 transfers in one request and one database transaction; each item has its own result unless `atomic` (docs/ledger.md#batches)."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/transfers")
      .setUrlParams(
        Schema.Struct({
          ...PagingParams,
          ...CreatedParams,
          status: Schema.optional(TransferStatus),
          payment_rail: Schema.optional(TransferRail),
          transaction_id: Schema.optional(Uuid),
          financial_account_id: Schema.optional(Uuid),
          wallet_id: Schema.optional(Uuid)
        })
      )
      .addSuccess(ListOf(Transfer))
  )
  .add(HttpApiEndpoint.get("get", "/transfers/:transfer_id").setPath(pathId("transfer_id")).addError(NotFoundFailure).addSuccess(Transfer))
  .middleware(ProgramScoped)
  .prefix("/v1") {}

/** Transactions and their book transfers. */
export class TransactionsApi extends HttpApiGroup.make("transactions")
  .add(
    HttpApiEndpoint.get("list", "/transactions")
      .setUrlParams(
        Schema.Struct({ ...PagingParams, ...CreatedParams, status: Schema.optional(TransactionStatus), card_id: Schema.optional(Uuid) })
      )
      .addSuccess(ListOf(Transaction))
  )
  .add(
    HttpApiEndpoint.get("get", "/transactions/:transaction_id")
      .setPath(pathId("transaction_id"))
      .addError(NotFoundFailure)
      .addSuccess(Transaction)
  )
  .add(
    HttpApiEndpoint.get("bookTransfers", "/transactions/:transaction_id/book-transfers")
      .setPath(pathId("transaction_id"))
      .addError(NotFoundFailure)
      .setUrlParams(Schema.Struct(BookTransferParams))
      .addSuccess(ListOf(BookTransfer))
  )
  .add(
    // Releases a card transaction's open hold at once (docs/card-transactions.md#expiry); every environment.
    post("expire", "/transactions/:transaction_id/expire")
      .setPath(pathId("transaction_id"))
      .addError(NotFoundFailure)
      // The card messages' posting type; an expiry releases a hold and is refused no rule.
      .addError(BusinessRuleFailure)
      .annotate(BusinessRules, [])
      .addSuccess(Transaction)
  )
  .middleware(ProgramScoped)
  .prefix("/v1") {}

/**
 * A program's settlement totals of one UTC day and currency (docs/network.md#reconciliation), for
 * reconciling against the network's settlement file. Both parameters are checked by the ledger
 * (400 param date / currency), so they arrive as plain strings.
 */
export class SettlementReportsApi extends HttpApiGroup.make("settlementReports")
  .add(
    HttpApiEndpoint.get("get", "/settlement-reports")
      .setUrlParams(
        Schema.Struct({
          date: Schema.optional(Schema.String.annotations({ description: "The UTC day reported, YYYY-MM-DD (required)." })),
          currency: Schema.optional(Schema.String.annotations({ description: "The ISO 4217 currency reported, upper case (required)." }))
        })
      )
      .addSuccess(SettlementReport)
  )
  .middleware(ProgramScoped)
  .prefix("/v1") {}

/**
 * The rails' outcomes from the program's bank partner (docs/network.md#rail-outcomes), in every
 * environment: a settlement and a return. Program-scoped as transfers are; the caller needs the
 * `network` right (403 before the body is decoded or anything read: NetworkRight).
 */
export class NetworkTransfersApi extends HttpApiGroup.make("networkTransfers")
  .add(
    post("settle", "/network/transfers/:transfer_id/settle").setPath(pathId("transfer_id")).addError(NotFoundFailure).addSuccess(Transfer)
  )
  .add(
    post("return", "/network/transfers/:transfer_id/return")
      .setPath(pathId("transfer_id"))
      .setPayload(ReturnTransfer)
      .addError(NotFoundFailure)
      // balance_limit_exceeded: the reversal would take a running total past 2^53 − 1 (no funds check: the money is gone).
      .addError(BusinessRuleFailure)
      .annotate(BusinessRules, ["balance_limit_exceeded"])
      .addSuccess(Transfer)
  )
  .middleware(NetworkRight)
  .middleware(ProgramScoped)
  .prefix("/v1") {}

/** Sandbox simulation of a rail settling a PENDING transfer (404 in production). */
export class SimulateTransfersApi extends HttpApiGroup.make("simulateTransfers")
  .add(
    post("settle", "/simulate/transfers/:transfer_id/settle").setPath(pathId("transfer_id")).addError(NotFoundFailure).addSuccess(Transfer)
  )
  .annotate(SandboxOnly, true)
  .middleware(ProgramScoped)
  .prefix("/v1") {}
