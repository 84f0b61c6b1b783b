import { HttpApiBuilder } from "@effect/platform"
import {
  type AccountKind,
  isUuid,
  IssuingConfig,
  Ledger,
  PAYMENT_RAILS,
  TRANSACTION_STATUSES,
  type TransactionStatus,
  TRANSFER_STATUSES,
  type TransferStatus
} from "@issuing/core"
import { Effect } from "effect"
import { IssuingApi } from "../Api.js"
import { CurrentProgram } from "../api/Security.js"
import { apiFailure, handle } from "../errors.js"
import { paging } from "./Paging.js"

/** Order fields of each ledger list (docs/ledger.md). Omitted order_by: newest first. */
export const WALLET_ORDER_FIELDS = ["created_at", "updated_at"]
export const FINANCIAL_ACCOUNT_ORDER_FIELDS = ["created_at", "updated_at"]
export const TRANSFER_ORDER_FIELDS = ["created_at", "updated_at", "amount"]
export const TRANSACTION_ORDER_FIELDS = ["created_at", "updated_at", "amount"]
export const BOOK_TRANSFER_ORDER_FIELDS = ["posted_at", "created_at", "amount"]

const programId = Effect.map(CurrentProgram, (caller) => caller.program.id)

const invalid = (param: string, message: string) => Effect.fail(apiFailure("invalid_request", message, param))

/** An optional filter that must be one of `allowed` (400 naming the parameter otherwise). */
const oneOf = <A extends string>(value: string | undefined, allowed: ReadonlyArray<A>, param: string) =>
  value === undefined || allowed.includes(value as A)
    ? Effect.succeed(value as A | undefined)
    : invalid(param, `Invalid ${param} '${value}'. Valid values: ${allowed.join(", ")}.`)

/** An optional id filter: must be a UUID (400 naming the parameter otherwise); compared in lower case. */
const idFilter = (value: string | undefined, param: string) =>
  value === undefined
    ? Effect.succeed(undefined)
    : isUuid(value)
    ? Effect.succeed(value.toLowerCase())
    : invalid(param, `${param} must be a UUID.`)

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
          const kind = yield* oneOf<AccountKind>(urlParams.kind, ["wallet", "settlement"], "kind")
          const walletId = yield* idFilter(urlParams.wallet_id, "wallet_id")
          if (urlParams.currency !== undefined && !/^[A-Z]{3}$/.test(urlParams.currency)) {
            return yield* invalid("currency", "currency must be an ISO 4217 code in upper case.")
          }
          return yield* handle(ledger.listFinancialAccounts(yield* programId, { kind, wallet_id: walletId, currency: urlParams.currency }, page))
        }))
      .handle("get", ({ path }) =>
        Effect.flatMap(programId, (program) => handle(ledger.getFinancialAccount(program, path.financial_account_id))))
      .handle("balances", ({ path }) =>
        Effect.flatMap(programId, (program) => handle(ledger.balances(program, path.financial_account_id))))
      .handle("bookTransfers", ({ path, urlParams }) =>
        Effect.gen(function*() {
          const page = yield* paging(urlParams, BOOK_TRANSFER_ORDER_FIELDS)
          const transferId = yield* idFilter(urlParams.transfer_id, "transfer_id")
          const transactionId = yield* idFilter(urlParams.transaction_id, "transaction_id")
          return yield* handle(ledger.listAccountBookTransfers(
            yield* programId,
            path.financial_account_id,
            { book: urlParams.book, transfer_id: transferId, transaction_id: transactionId },
            page
          ))
        }))
  }))

export const TransfersHandlersLive = HttpApiBuilder.group(IssuingApi, "transfers", (handlers) =>
  Effect.gen(function*() {
    const ledger = yield* Ledger
    return handlers
      .handle("create", ({ payload }) =>
        Effect.gen(function*() {
          const { paymentRail, payment_rail, ...rest } = payload
          if (paymentRail !== undefined && payment_rail !== undefined && paymentRail !== payment_rail) {
            return yield* invalid("paymentRail", "Conflicting parameters: paymentRail and payment_rail differ.")
          }
          const rail = paymentRail ?? payment_rail
          const railParam = paymentRail !== undefined ? "paymentRail" : "payment_rail"
          if (rail === undefined) return yield* invalid("paymentRail", "paymentRail is required.")
          if (!PAYMENT_RAILS.includes(rail as never)) {
            return yield* invalid(railParam, `Invalid ${railParam} '${rail}'. Valid values: ${PAYMENT_RAILS.join(", ")}.`)
          }
          const posted = yield* handle(ledger.postTransfer(yield* programId, { ...rest, payment_rail: rail }))
          return posted.transfer
        }))
      .handle("list", ({ urlParams }) =>
        Effect.gen(function*() {
          const page = yield* paging(urlParams, TRANSFER_ORDER_FIELDS)
          const status = yield* oneOf<TransferStatus>(urlParams.status, TRANSFER_STATUSES, "status")
          const rail = yield* oneOf(urlParams.payment_rail, [...PAYMENT_RAILS, "card"], "payment_rail")
          const transactionId = yield* idFilter(urlParams.transaction_id, "transaction_id")
          const accountId = yield* idFilter(urlParams.financial_account_id, "financial_account_id")
          return yield* handle(ledger.listTransfers(
            yield* programId,
            { status, payment_rail: rail, transaction_id: transactionId, financial_account_id: accountId },
            page
          ))
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
          const status = yield* oneOf<TransactionStatus>(urlParams.status, TRANSACTION_STATUSES, "status")
          const cardId = yield* idFilter(urlParams.card_id, "card_id")
          return yield* handle(ledger.listTransactions(yield* programId, { status, card_id: cardId }, page))
        }))
      .handle("get", ({ path }) =>
        Effect.flatMap(programId, (program) => handle(ledger.getTransaction(program, path.transaction_id))))
      .handle("bookTransfers", ({ path, urlParams }) =>
        Effect.gen(function*() {
          const program = yield* programId
          // An unknown transaction is a 404 before any query parameter is judged.
          yield* handle(ledger.getTransaction(program, path.transaction_id))
          const page = yield* paging(urlParams, BOOK_TRANSFER_ORDER_FIELDS)
          const transferId = yield* idFilter(urlParams.transfer_id, "transfer_id")
          return yield* handle(ledger.listTransactionBookTransfers(
            program,
            path.transaction_id,
            { book: urlParams.book, transfer_id: transferId },
            page
          ))
        }))
  }))

export const SimulateTransfersHandlersLive = HttpApiBuilder.group(IssuingApi, "simulateTransfers", (handlers) =>
  Effect.gen(function*() {
    const ledger = yield* Ledger
    const config = yield* IssuingConfig
    return handlers.handle("settle", ({ path }) =>
      config.environment !== "sandbox"
        ? Effect.fail(apiFailure("not_found", "Simulation endpoints exist only in the sandbox.", null))
        : Effect.flatMap(programId, (program) => handle(ledger.settleTransfer(program, path.transfer_id))))
  }))
