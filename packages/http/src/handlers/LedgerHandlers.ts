import { HttpApiBuilder } from "@effect/platform"
import {
  type Caller,
  CardAuthorizations,
  BOOK_TRANSFER_ORDER_FIELDS,
  CreateTransfer,
  type CreateTransferBatch,
  type Environment,
  FINANCIAL_ACCOUNT_ORDER_FIELDS,
  inboundFundingRefusal,
  IssuingConfig,
  Ledger,
  TRANSACTION_ORDER_FIELDS,
  TRANSFER_BODY_FIELDS,
  TRANSFER_ORDER_FIELDS,
  Transfer,
  type PostedTransfer,
  type TransferRequest,
  WALLET_ORDER_FIELDS
} from "@issuing/core"
import { Effect, Either, ParseResult, Schema } from "effect"
import { IssuingApi } from "../Api.js"
import { TransferBatch } from "../api/LedgerApi.js"
import { ApiFailure, type ApiFailureAt, decodeIssuesFailure, envelope, mapToApiFailure, toApiFailure } from "../errors.js"
import { plainAnswer } from "../middleware/PlainAnswer.js"
import { CurrentProgram, currentRequestId } from "../middleware/Scopes.js"
import { countPostedTransfers } from "../Telemetry.js"
import { paging, timePaging } from "./Paging.js"

const programId = Effect.map(CurrentProgram, (caller) => caller.program.id)

// Inputs arrive decoded by the API's schemas (core's ledger/Records.ts); handlers only call the service.

// The transfer and the batch answered as their schemas encode them, without running them (they encode as themselves).
const transferAnswer = plainAnswer(Transfer)
const batchAnswer = plainAnswer(TransferBatch)

// An item refuses unknown fields as a POST /v1/transfers body does (api/UnknownParameters.ts).
// Looking for them is most of what Schema's decoding costs (a union of the field names run on
// every key): an item whose keys are all the body's fields, nearly every one, is decoded without
// it, to the same result, and any other with it, for the same error (docs/decisions.md#the-cost-of-a-request-on-the-api-node).
const decodeStrict = Schema.decodeUnknownEither(CreateTransfer, { errors: "first", onExcessProperty: "error" })
const decodeKnownFields = Schema.decodeUnknownEither(CreateTransfer, { errors: "first" })
const hasOnlyBodyFields = (item: unknown): boolean =>
  typeof item === "object" && item !== null && !Array.isArray(item) && Object.keys(item).every((key) => TRANSFER_BODY_FIELDS.has(key))
const isObject = (item: unknown): boolean => typeof item === "object" && item !== null && !Array.isArray(item)
const NOT_A_TRANSFER = "must be a transfer object, as the body of POST /v1/transfers"
const decodeItem = (item: unknown) => (hasOnlyBodyFields(item) ? decodeKnownFields(item) : decodeStrict(item))

/** Why a batch item is refused before posting: malformed (400), or an inbound transfer the caller may not record (403). */
type ItemRefusal = ApiFailureAt<400> | ApiFailureAt<403>

/**
 * The caller may record this transfer (inbound funding in production: docs/decisions.md), else its
 * 403: for POST /v1/transfers and each item of a batch alike.
 */
const mayRecord = (
  caller: Caller,
  environment: Environment,
  request: TransferRequest
): Either.Either<TransferRequest, ApiFailureAt<403>> => {
  const refusal = inboundFundingRefusal(caller, environment, request)
  return refusal === null ? Either.right(request) : Either.left(toApiFailure(refusal))
}

/** An item's failure with its index in `param` (`transfers.3.amount`), for an all-or-nothing batch. */
const itemFailure = <F extends ApiFailure>(index: number, failure: F): F =>
  // The same status, type and code: only the param moves under the item's index.
  new ApiFailure({
    status: failure.status,
    type: failure.type,
    code: failure.code,
    message: failure.message,
    param: failure.param === null ? `transfers.${index}` : `transfers.${index}.${failure.param}`
  }) as F

/**
 * POST /v1/transfers/batch: each item is decoded as a POST /v1/transfers body (a malformed one is
 * that item's 400, an inbound one the caller may not record its 403), the others are posted in one database transaction, and every item answers
 * in order with its transfer or the `error` object of its envelope. `atomic`: any item's failure is
 * the request's, with the item's index in `param`, and nothing is written.
 */
const postBatch = (ledger: Ledger, payload: CreateTransferBatch) =>
  Effect.gen(function* () {
    const caller = yield* CurrentProgram
    const program = caller.program.id
    const requestId = yield* currentRequestId
    const config = yield* IssuingConfig
    const decoded = payload.transfers.map(
      (item): Either.Either<TransferRequest, ItemRefusal> =>
        Either.match(decodeItem(item), {
          onLeft: (error) =>
            Either.left(
              isObject(item)
                ? decodeIssuesFailure(ParseResult.ArrayFormatter.formatErrorSync(error))
                : // Not an object at all: what an item must be, not the whole schema's text.
                  decodeIssuesFailure([{ _tag: "Type", path: [], message: NOT_A_TRANSFER }])
            ),
          onRight: (request) => mayRecord(caller, config.environment, request)
        })
    )
    const atomic = payload.atomic === true
    const invalid = decoded.findIndex(Either.isLeft)
    if (atomic && invalid >= 0) return yield* itemFailure(invalid, (decoded[invalid] as Either.Left<ItemRefusal, never>).left)
    const requests = decoded.flatMap((item) => (Either.isRight(item) ? [item.right] : []))
    // Atomic batches reach here only with every item decoded: an aborted item's index is its index in the batch.
    const posted = yield* ledger.postTransfers(program, requests, atomic).pipe(
      Effect.catchTag("TransferBatchAborted", (aborted) => Effect.fail(itemFailure(aborted.index, toApiFailure(aborted.error)))),
      Effect.catchTag("SqlError", Effect.die)
    )
    yield* countPostedTransfers(posted.filter(Either.isRight).length)
    let next = 0
    const data = decoded.map((item) => {
      const result: Either.Either<PostedTransfer, ApiFailure> = Either.isLeft(item)
        ? Either.left(item.left)
        : Either.mapLeft(posted[next++]!, toApiFailure)
      return Either.match(result, {
        onLeft: (failure) => ({ error: envelope(failure, requestId, config.baseUrl).error }),
        onRight: (transfer) => transfer.transfer
      })
    })
    return batchAnswer({ object: "transfer_batch" as const, data })
  })

export const WalletsHandlersLive = HttpApiBuilder.group(IssuingApi, "wallets", (handlers) =>
  Effect.gen(function* () {
    const ledger = yield* Ledger
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(programId, (program) => mapToApiFailure(ledger.createWallet(program, payload))))
      .handle("list", ({ urlParams }) =>
        Effect.gen(function* () {
          const page = yield* paging(urlParams, WALLET_ORDER_FIELDS)
          return yield* mapToApiFailure(
            ledger.listWallets(
              yield* programId,
              { tag: urlParams.tag, holder_name: urlParams.holder_name, holder_email: urlParams.holder_email },
              page
            )
          )
        })
      )
      .handle("get", ({ path }) => Effect.flatMap(programId, (program) => mapToApiFailure(ledger.getWallet(program, path.wallet_id))))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(programId, (program) => mapToApiFailure(ledger.updateWallet(program, path.wallet_id, payload)))
      )
  })
)

export const FinancialAccountsHandlersLive = HttpApiBuilder.group(IssuingApi, "financialAccounts", (handlers) =>
  Effect.gen(function* () {
    const ledger = yield* Ledger
    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.gen(function* () {
          const page = yield* paging(urlParams, FINANCIAL_ACCOUNT_ORDER_FIELDS)
          const { currency, kind, wallet_id } = urlParams
          return yield* mapToApiFailure(ledger.listFinancialAccounts(yield* programId, { kind, wallet_id, currency }, page))
        })
      )
      .handle("get", ({ path }) =>
        Effect.flatMap(programId, (program) => mapToApiFailure(ledger.getFinancialAccount(program, path.financial_account_id)))
      )
      .handle("balances", ({ path }) =>
        Effect.flatMap(programId, (program) => mapToApiFailure(ledger.balances(program, path.financial_account_id)))
      )
      .handle("bookTransfers", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const page = yield* paging(urlParams, BOOK_TRANSFER_ORDER_FIELDS)
          const { book, transaction_id, transfer_id } = urlParams
          return yield* mapToApiFailure(
            ledger.listAccountBookTransfers(yield* programId, path.financial_account_id, { book, transfer_id, transaction_id }, page)
          )
        })
      )
  })
)

export const TransfersHandlersLive = HttpApiBuilder.group(IssuingApi, "transfers", (handlers) =>
  Effect.gen(function* () {
    const ledger = yield* Ledger
    const { environment } = yield* IssuingConfig
    return handlers
      .handle("create", ({ payload }) =>
        // One step per stage, no generator: every transfer runs it (docs/operations.md#volume, "The Node side, profiled").
        Effect.flatMap(CurrentProgram, (caller) =>
          Effect.flatMap(mayRecord(caller, environment, payload), (request) =>
            mapToApiFailure(ledger.postTransfer(caller.program.id, request)).pipe(
              Effect.tap(() => countPostedTransfers(1)),
              Effect.map((posted) => transferAnswer(posted.transfer))
            )
          )
        )
      )
      .handle("batch", ({ payload }) => postBatch(ledger, payload))
      .handle("list", ({ urlParams }) =>
        Effect.gen(function* () {
          const { created, page } = yield* timePaging(urlParams, TRANSFER_ORDER_FIELDS)
          const { financial_account_id, payment_rail, status, transaction_id, wallet_id } = urlParams
          return yield* mapToApiFailure(
            ledger.listTransfers(yield* programId, { status, payment_rail, transaction_id, financial_account_id, wallet_id, created }, page)
          )
        })
      )
      .handle("get", ({ path }) => Effect.flatMap(programId, (program) => mapToApiFailure(ledger.getTransfer(program, path.transfer_id))))
  })
)

export const TransactionsHandlersLive = HttpApiBuilder.group(IssuingApi, "transactions", (handlers) =>
  Effect.gen(function* () {
    const ledger = yield* Ledger
    const authorizations = yield* CardAuthorizations
    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.gen(function* () {
          const { created, page } = yield* timePaging(urlParams, TRANSACTION_ORDER_FIELDS)
          return yield* mapToApiFailure(
            ledger.listTransactions(yield* programId, { status: urlParams.status, card_id: urlParams.card_id, created }, page)
          )
        })
      )
      .handle("get", ({ path }) =>
        Effect.flatMap(programId, (program) => mapToApiFailure(ledger.getTransaction(program, path.transaction_id)))
      )
      .handle("bookTransfers", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const page = yield* paging(urlParams, BOOK_TRANSFER_ORDER_FIELDS)
          const { book, transfer_id } = urlParams
          return yield* mapToApiFailure(
            ledger.listTransactionBookTransfers(yield* programId, path.transaction_id, { book, transfer_id }, page)
          )
        })
      )
      .handle("expire", ({ path }) =>
        Effect.flatMap(CurrentProgram, (caller) => mapToApiFailure(authorizations.expire(caller, path.transaction_id)))
      )
  })
)

export const SimulateTransfersHandlersLive = HttpApiBuilder.group(IssuingApi, "simulateTransfers", (handlers) =>
  Effect.gen(function* () {
    const ledger = yield* Ledger
    // Sandbox only: the pipeline answers it as an unknown URL in production (SandboxOnly). The
    // network's settle runs the same use case.
    return handlers.handle("settle", ({ path }) =>
      Effect.flatMap(programId, (program) => mapToApiFailure(ledger.settleTransfer(program, path.transfer_id)))
    )
  })
)

/** The bank partner's rail outcomes: the group's NetworkRight middleware has checked the caller's `network` right. */
export const SettlementReportsHandlersLive = HttpApiBuilder.group(IssuingApi, "settlementReports", (handlers) =>
  Effect.gen(function* () {
    const ledger = yield* Ledger
    return handlers.handle("get", ({ urlParams }) =>
      Effect.flatMap(programId, (program) => mapToApiFailure(ledger.settlementReport(program, urlParams)))
    )
  })
)

export const NetworkTransfersHandlersLive = HttpApiBuilder.group(IssuingApi, "networkTransfers", (handlers) =>
  Effect.gen(function* () {
    const ledger = yield* Ledger
    return handlers
      .handle("settle", ({ path }) =>
        Effect.flatMap(programId, (program) => mapToApiFailure(ledger.settleTransfer(program, path.transfer_id)))
      )
      .handle("return", ({ path, payload }) =>
        Effect.flatMap(programId, (program) => mapToApiFailure(ledger.returnTransfer(program, path.transfer_id, payload)))
      )
  })
)
