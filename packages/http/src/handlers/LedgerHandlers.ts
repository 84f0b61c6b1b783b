import { HttpApiBuilder } from "@effect/platform"
import { Ledger } from "@issuing/core"
import { Effect } from "effect"
import { IssuingApi } from "../Api.js"
import { CurrentProgram } from "../api/Security.js"
import { handle } from "../errors.js"
import { paging } from "./Paging.js"

/** Order fields of each ledger list (docs/ledger.md). Omitted order_by: newest first. */
export const WALLET_ORDER_FIELDS = ["created_at", "updated_at"]
export const FINANCIAL_ACCOUNT_ORDER_FIELDS = ["created_at", "updated_at"]
export const TRANSFER_ORDER_FIELDS = ["created_at", "updated_at", "amount"]
export const TRANSACTION_ORDER_FIELDS = ["created_at", "updated_at", "amount"]
export const BOOK_TRANSFER_ORDER_FIELDS = ["posted_at", "created_at", "amount"]

const programId = Effect.map(CurrentProgram, (caller) => caller.program.id)

// Inputs arrive decoded by the API's schemas (core's ledger/Records.ts); handlers only call the service.

export const WalletsHandlersLive = HttpApiBuilder.group(IssuingApi, "wallets", (handlers) =>
  Effect.gen(function*() {
    const ledger = yield* Ledger
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(programId, (program) => handle(ledger.createWallet(program, payload))))
      .handle("list", ({ urlParams }) =>
        Effect.gen(function*() {
          const page = yield* paging(urlParams, WALLET_ORDER_FIELDS)
          return yield* handle(ledger.listWallets(yield* programId, page))
        }))
      .handle("get", ({ path }) => Effect.flatMap(programId, (program) => handle(ledger.getWallet(program, path.wallet_id))))
  }))

export const FinancialAccountsHandlersLive = HttpApiBuilder.group(IssuingApi, "financialAccounts", (handlers) =>
  Effect.gen(function*() {
    const ledger = yield* Ledger
    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.gen(function*() {
          const page = yield* paging(urlParams, FINANCIAL_ACCOUNT_ORDER_FIELDS)
          const { currency, kind, wallet_id } = urlParams
          return yield* handle(ledger.listFinancialAccounts(yield* programId, { kind, wallet_id, currency }, page))
        }))
      .handle("get", ({ path }) =>
        Effect.flatMap(programId, (program) => handle(ledger.getFinancialAccount(program, path.financial_account_id))))
      .handle("balances", ({ path }) =>
        Effect.flatMap(programId, (program) => handle(ledger.balances(program, path.financial_account_id))))
      .handle("bookTransfers", ({ path, urlParams }) =>
        Effect.gen(function*() {
          const page = yield* paging(urlParams, BOOK_TRANSFER_ORDER_FIELDS)
          const { book, transaction_id, transfer_id } = urlParams
          return yield* handle(ledger.listAccountBookTransfers(yield* programId, path.financial_account_id, { book, transfer_id, transaction_id }, page))
        }))
  }))

export const TransfersHandlersLive = HttpApiBuilder.group(IssuingApi, "transfers", (handlers) =>
  Effect.gen(function*() {
    const ledger = yield* Ledger
    return handlers
      .handle("create", ({ payload }) =>
        Effect.flatMap(programId, (program) => Effect.map(handle(ledger.postTransfer(program, payload)), (posted) => posted.transfer)))
      .handle("list", ({ urlParams }) =>
        Effect.gen(function*() {
          const page = yield* paging(urlParams, TRANSFER_ORDER_FIELDS)
          const { financial_account_id, payment_rail, status, transaction_id } = urlParams
          return yield* handle(ledger.listTransfers(yield* programId, { status, payment_rail, transaction_id, financial_account_id }, page))
        }))
      .handle("get", ({ path }) => Effect.flatMap(programId, (program) => handle(ledger.getTransfer(program, path.transfer_id))))
  }))

export const TransactionsHandlersLive = HttpApiBuilder.group(IssuingApi, "transactions", (handlers) =>
  Effect.gen(function*() {
    const ledger = yield* Ledger
    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.gen(function*() {
          const page = yield* paging(urlParams, TRANSACTION_ORDER_FIELDS)
          return yield* handle(ledger.listTransactions(yield* programId, { status: urlParams.status, card_id: urlParams.card_id }, page))
        }))
      .handle("get", ({ path }) =>
        Effect.flatMap(programId, (program) => handle(ledger.getTransaction(program, path.transaction_id))))
      .handle("bookTransfers", ({ path, urlParams }) =>
        Effect.gen(function*() {
          const page = yield* paging(urlParams, BOOK_TRANSFER_ORDER_FIELDS)
          const { book, transfer_id } = urlParams
          return yield* handle(ledger.listTransactionBookTransfers(yield* programId, path.transaction_id, { book, transfer_id }, page))
        }))
  }))

export const SimulateTransfersHandlersLive = HttpApiBuilder.group(IssuingApi, "simulateTransfers", (handlers) =>
  Effect.gen(function*() {
    const ledger = yield* Ledger
    // Sandbox only: the pipeline answers it as an unknown URL in production (SandboxOnly).
    return handlers.handle("settle", ({ path }) =>
      Effect.flatMap(programId, (program) => handle(ledger.settleTransfer(program, path.transfer_id))))
  }))
