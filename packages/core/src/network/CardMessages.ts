import type { SqlError } from "@effect/sql"
import { Effect, Option } from "effect"
import * as crypto from "node:crypto"
import { Access } from "../access/Access.js"
import { requireNetworkRight } from "../access/NetworkRight.js"
import type { Caller, ProgramCaller } from "../access/Records.js"
import { CardAuthorizations } from "../cards/Authorizations.js"
import type { AuthorizationMessage, StartingMessage } from "../cards/CardMessageRules.js"
import { CardStore, type CardStoreService } from "../cards/CardStore.js"
import type { CardRecord, DeclineReason } from "../cards/Records.js"
import { cardPlace } from "../cards/Sealing.js"
import { Idempotency, NETWORK_MESSAGE_KEYS, type PlainResponse } from "../idempotency/Idempotency.js"
import { LedgerStore, type LedgerStoreService } from "../ledger/LedgerStore.js"
import type { Merchant, Transaction } from "../ledger/Records.js"
import { BusinessRuleViolation, Conflict, InvalidRequest, NotFound, type PermissionDenied } from "../platform/Errors.js"
import { nowMs } from "../platform/Time.js"
import { isUniqueViolation } from "../sql/Transactor.js"
import { Vault, type VaultService } from "../vault/Vault.js"
import { acknowledgedWithoutEffect, answerOfTransaction, declinedWithoutRecord, type MessageContext } from "./NetworkAnswers.js"
import type { CardMessageRequest, NetworkCardMessage, PresentedCard } from "./NetworkRecords.js"

/** What the network ingress works with, gathered once when the service is built. */
interface NetworkDeps {
  readonly access: Access
  readonly cards: CardStoreService
  readonly ledger: LedgerStoreService
  readonly authorizations: CardAuthorizations
  readonly idempotency: Idempotency
  readonly vault: VaultService
}

/** The answer to a card message as sent: its status and JSON text, and whether it is a retransmission's replay. */
export interface NetworkAnswer extends PlainResponse {
  readonly replayed: boolean
}

/** A card found by its number, in a program the caller may reach. */
interface FoundCard {
  readonly caller: ProgramCaller
  readonly record: CardRecord
}

/** A card transaction found by its network transaction id, in a program the caller may reach. */
interface Linked {
  readonly caller: ProgramCaller
  readonly transaction: Transaction
}

/** The program as the caller may act in it, or none when the key may not reach it (a card or transaction it must not find). */
const reachable = (deps: NetworkDeps, caller: Caller, programId: string) =>
  deps.access
    .resolveProgram(caller, programId)
    .pipe(
      Effect.map(Option.some),
      Effect.catchTags({ InvalidRequest: () => Effect.succeed(Option.none()), PermissionDenied: () => Effect.succeed(Option.none()) })
    )

/** The card with this number (by the vault's keyed fingerprints, under every configured key), if the caller may reach its program. */
const cardOfNumber = (deps: NetworkDeps, caller: Caller, number: string): Effect.Effect<Option.Option<FoundCard>, SqlError.SqlError> =>
  Effect.gen(function* () {
    const record = yield* deps.cards.findByFingerprintsInAnyProgram(deps.vault.fingerprints(number))
    if (Option.isNone(record)) return Option.none()
    const program = yield* reachable(deps, caller, record.value.card.program_id)
    return Option.map(program, (programCaller) => ({ caller: programCaller, record: record.value }))
  })

/** The card transaction the network linked by this id: in the card's program when the message names a card, else any the caller may reach. */
const linkedTransaction = (
  deps: NetworkDeps,
  caller: Caller,
  networkTransactionId: string,
  card: Option.Option<FoundCard>
): Effect.Effect<Option.Option<Linked>, SqlError.SqlError> =>
  Effect.gen(function* () {
    const rows = yield* deps.ledger.findTransactionsByNetworkId(networkTransactionId)
    for (const transaction of rows) {
      if (Option.isSome(card)) {
        if (transaction.program_id === card.value.caller.program.id) return Option.some({ caller: card.value.caller, transaction })
        continue
      }
      const program = yield* reachable(deps, caller, transaction.program_id)
      if (Option.isSome(program)) return Option.some({ caller: program.value, transaction })
    }
    return Option.none()
  })

const sameText = (left: string, right: string) =>
  left.length === right.length && crypto.timingSafeEqual(Buffer.from(left), Buffer.from(right))

/**
 * The decline the card's credentials as presented call for (docs/network.md#response-codes): an
 * expiry that is not the card's (54), a verification code that is not its code (N7). Only what was
 * sent is checked; the code is opened in its row and compared in constant time, never kept.
 */
const credentialDecline = (deps: NetworkDeps, record: CardRecord, presented: PresentedCard): DeclineReason | null => {
  const { card } = record
  const month = presented.exp_month ?? null
  const year = presented.exp_year ?? null
  if ((month !== null && month !== card.exp_month) || (year !== null && year !== card.exp_year)) return "CARD_EXPIRED"
  const cvv = presented.cvv ?? null
  if (cvv !== null && !sameText(cvv, deps.vault.decrypt(record.sealed.cvv_sealed, cardPlace(card.id, "cvv_sealed")))) {
    return "INCORRECT_CVV"
  }
  return null
}

/** The merchant as the transaction keeps it (absent fields null). */
const merchantOf = (request: CardMessageRequest): Merchant | null =>
  request.merchant === undefined || request.merchant === null
    ? null
    : { ...request.merchant, city: request.merchant.city ?? null, country: request.merchant.country ?? null }

/** What a message that may start a card transaction brings to it: amount, currency, merchant, the network's id. */
const startingMessage = (request: CardMessageRequest): StartingMessage => {
  const merchant = merchantOf(request)
  return {
    amount: request.amount,
    currency: request.currency,
    mcc: merchant?.mcc ?? null,
    merchantName: merchant?.name ?? null,
    merchant,
    networkTransactionId: request.network_transaction_id
  }
}

/** An authorization message for the card platform's one decision path (CardAuthorizations.authorizeCard). */
const authorizationMessage = (
  request: CardMessageRequest,
  kind: "AUTHORIZATION" | "FINANCIAL_AUTHORIZATION",
  declined: DeclineReason | null
): AuthorizationMessage => ({
  ...startingMessage(request),
  kind,
  partialApprovalCapable: request.partial_approval_capable ?? false,
  credentialDecline: declined
})

/**
 * A card operation's refusal as the network's answer (nothing was written): an amount beyond what
 * the transaction may move is an invalid amount (13); a message that does not fit its transaction
 * (a state it cannot apply to, another currency, a transaction gone) a format error (30). A
 * Conflict that is not the transaction's (the message's claim was lost while it ran) and a
 * database failure stay failures: nothing of this delivery was kept, and it is not answered.
 */
const refusal = (
  context: MessageContext,
  transactionId: string | null,
  error: unknown
): Effect.Effect<NetworkCardMessage, SqlError.SqlError | Conflict> => {
  if (error instanceof BusinessRuleViolation && error.code.startsWith("amount_")) {
    return Effect.succeed(declinedWithoutRecord(context, "INVALID_AMOUNT", transactionId))
  }
  const doesNotFit =
    // Two first messages of one network transaction at once: the second's insert meets the first's id.
    isUniqueViolation(error) ||
    error instanceof BusinessRuleViolation ||
    error instanceof NotFound ||
    error instanceof InvalidRequest ||
    (error instanceof Conflict && error.param === "transaction_id")
  return doesNotFit
    ? Effect.succeed(declinedWithoutRecord(context, "FORMAT_ERROR", transactionId))
    : Effect.fail(error as SqlError.SqlError | Conflict)
}

/** The answer of a card operation: of the card event it left on its transaction, or of its refusal. */
const answered = (
  context: MessageContext,
  transactionId: string | null,
  operation: Effect.Effect<Transaction, InvalidRequest | NotFound | Conflict | BusinessRuleViolation | SqlError.SqlError>
): Effect.Effect<NetworkCardMessage, SqlError.SqlError | Conflict> =>
  Effect.matchEffect(operation, {
    onSuccess: (transaction) => Effect.succeed(answerOfTransaction(context, transaction)),
    onFailure: (error) => refusal(context, transactionId, error)
  })

/** What a message does, once claimed (docs/network.md#the-messages): its answer, the posting made at the commit point. */
const handle = (
  deps: NetworkDeps,
  caller: Caller,
  request: CardMessageRequest,
  context: MessageContext
): Effect.Effect<NetworkCardMessage, SqlError.SqlError | Conflict> =>
  Effect.gen(function* () {
    const presented = request.card ?? null
    const card = presented === null ? Option.none<FoundCard>() : yield* cardOfNumber(deps, caller, presented.number)
    if (presented !== null && Option.isNone(card)) return declinedWithoutRecord(context, "UNKNOWN_CARD", null)
    const linked = yield* linkedTransaction(deps, caller, request.network_transaction_id, card)
    // The transaction of another card than the one the message names: the message does not fit it.
    if (Option.isSome(card) && Option.isSome(linked) && linked.value.transaction.card_id !== card.value.record.card.id) {
      return declinedWithoutRecord(context, "FORMAT_ERROR", linked.value.transaction.id)
    }
    const answer = (operation: Parameters<typeof answered>[2], transactionId: string | null) => answered(context, transactionId, operation)
    const { authorizations } = deps
    switch (request.type) {
      case "AUTHORIZATION":
      case "FINANCIAL_AUTHORIZATION": {
        const found = Option.getOrThrow(card)
        // A second authorization of one network transaction: the network's error, nothing recorded.
        if (Option.isSome(linked)) return declinedWithoutRecord(context, "FORMAT_ERROR", linked.value.transaction.id)
        const message = authorizationMessage(request, request.type, credentialDecline(deps, found.record, presented!))
        return yield* answer(authorizations.authorizeCard(found.caller, found.record.card, message), null)
      }
      case "INCREMENTAL_AUTHORIZATION": {
        if (Option.isNone(linked)) return declinedWithoutRecord(context, "FORMAT_ERROR", null)
        const { caller: programCaller, transaction } = linked.value
        if (transaction.currency !== request.currency) return declinedWithoutRecord(context, "FORMAT_ERROR", transaction.id)
        return yield* answer(authorizations.increment(programCaller, transaction.id, { amount: request.amount }), transaction.id)
      }
      case "AUTHORIZATION_REVERSAL": {
        // A reversal of a request never seen, or of a hold already gone: acknowledged, nothing moves.
        if (Option.isNone(linked) || linked.value.transaction.status !== "PENDING") {
          return acknowledgedWithoutEffect(context, Option.getOrNull(Option.map(linked, (l) => l.transaction.id)))
        }
        const { caller: programCaller, transaction } = linked.value
        return yield* answer(authorizations.reverse(programCaller, transaction.id, { amount: request.amount }), transaction.id)
      }
      case "CLEARING":
      case "FORCE_POST": {
        if (Option.isNone(linked)) {
          // A clearing without authorization: posted against the card the message names.
          if (Option.isNone(card)) return declinedWithoutRecord(context, "FORMAT_ERROR", null)
          const found = card.value
          return yield* answer(authorizations.openUndecided(found.caller, found.record.card, startingMessage(request), "FORCE_POST"), null)
        }
        const { caller: programCaller, transaction } = linked.value
        if (transaction.currency !== request.currency) return declinedWithoutRecord(context, "FORMAT_ERROR", transaction.id)
        const clearing = { amount: request.amount, final: request.final ?? true }
        return yield* answer(authorizations.clear(programCaller, transaction.id, clearing), transaction.id)
      }
      case "RETURN": {
        if (Option.isNone(linked)) {
          // A refund with no purchase seen: settlement → the card's wallet.
          const found = Option.getOrThrow(card)
          return yield* answer(authorizations.openUndecided(found.caller, found.record.card, startingMessage(request), "RETURN"), null)
        }
        const { caller: programCaller, transaction } = linked.value
        if (transaction.currency !== request.currency) return declinedWithoutRecord(context, "FORMAT_ERROR", transaction.id)
        return yield* answer(authorizations.refund(programCaller, transaction.id, { amount: request.amount }), transaction.id)
      }
      case "AUTHORIZATION_ADVICE": {
        if (Option.isNone(linked)) {
          // The network approved on the issuer's behalf: held whatever the checks say now.
          const found = Option.getOrThrow(card)
          return yield* answer(
            authorizations.openUndecided(found.caller, found.record.card, startingMessage(request), "AUTHORIZATION_ADVICE"),
            null
          )
        }
        const { caller: programCaller, transaction } = linked.value
        // A hold already gone (cleared, reversed, expired) has nothing to set: acknowledged, nothing moves.
        if (transaction.status !== "PENDING" && transaction.status !== "DECLINED") return acknowledgedWithoutEffect(context, transaction.id)
        if (transaction.currency !== request.currency) return declinedWithoutRecord(context, "FORMAT_ERROR", transaction.id)
        return yield* answer(authorizations.advise(programCaller, transaction.id, request.amount), transaction.id)
      }
    }
  })

/** The canonical text of a message, for its fingerprint: its fields in one order, whatever order they were sent in. */
const canonicalMessage = (request: CardMessageRequest): string =>
  JSON.stringify(request, (_, value) =>
    value !== null && typeof value === "object" && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : value
  )

const plainOf = (answer: NetworkCardMessage): PlainResponse => ({ status: 200, body: JSON.stringify(answer) })

/**
 * POST /v1/network/card-messages (docs/network.md): exactly once per `network_message_id` of the
 * organization, through the idempotency machinery in a namespace of its own kept 35 days. The id is
 * claimed before anything is read or asked; the program's real-time decision is asked with nothing
 * written; the message's one posting and its answer commit together at the commit point. A repeat
 * gets the first answer (`replayed`); a repeat while the first still runs gets 409 until its claim's
 * lease runs out, then runs it afresh — a process that died before its commit left nothing written.
 */
const receive = (
  deps: NetworkDeps,
  caller: Caller,
  request: CardMessageRequest
): Effect.Effect<NetworkAnswer, SqlError.SqlError | Conflict | PermissionDenied> =>
  Effect.gen(function* () {
    yield* requireNetworkRight(caller)
    const context: MessageContext = {
      networkMessageId: request.network_message_id,
      type: request.type,
      at: new Date(yield* nowMs).toISOString()
    }
    const result = yield* deps.idempotency.run(
      caller.organizationId,
      request.network_message_id,
      [canonicalMessage(request)],
      handle(deps, caller, request, context),
      (answer) => Effect.succeed(plainOf(answer)),
      { callsOut: true, answerOf: (value) => Effect.sync(() => plainOf(answerOfTransaction(context, value as Transaction))) },
      NETWORK_MESSAGE_KEYS
    )
    switch (result._tag) {
      case "Ran":
        return { ...plainOf(result.response), replayed: false }
      case "Committed":
        return { ...result.response, replayed: false }
      case "Replayed":
        return { ...result.response, replayed: true }
    }
  })

/**
 * The network's door for card messages (docs/network.md): a message finds its card by number (no
 * X-Program-ID) and its transaction by the network's id, then runs the card platform's own
 * operations (CardAuthorizations: the same path as the sandbox's simulations), exactly once per
 * message id, and answers as ISO 8583 does.
 */
export class NetworkCardMessages extends Effect.Service<NetworkCardMessages>()("@issuing/core/NetworkCardMessages", {
  effect: Effect.gen(function* () {
    const deps: NetworkDeps = {
      access: yield* Access,
      cards: yield* CardStore,
      ledger: yield* LedgerStore,
      authorizations: yield* CardAuthorizations,
      idempotency: yield* Idempotency,
      vault: yield* Vault
    }
    return {
      receive: (caller: Caller, request: CardMessageRequest) => receive(deps, caller, request)
    }
  })
}) {}
