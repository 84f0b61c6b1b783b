import type { SqlError } from "@effect/sql"
import { Effect, Option } from "effect"
import type { ProgramCaller } from "../access/Records.js"
import { commitAtPoint } from "../idempotency/IdempotentCommit.js"
import { Ledger } from "../ledger/Ledger.js"
import type { Transaction } from "../ledger/Records.js"
import { BusinessRuleViolation, type Conflict, InvalidRequest, type NotFound } from "../platform/Errors.js"
import { findOwned } from "../platform/FindOwned.js"
import { type IssuingSettings, IssuingConfig } from "../platform/IssuingConfig.js"
import { nowMs } from "../platform/Time.js"
import { Transactor, type TransactorService } from "../sql/Transactor.js"
import { commitWrite, WriteLane, type WriteLaneService } from "../sql/WriteLane.js"
import { AuthorizationDecisions } from "./AuthorizationDecisions.js"
import {
  adviceOpening,
  advicePlan,
  type AuthorizationMessage,
  authorizationPosting,
  cardIdOf,
  clearingPlan,
  expirable,
  expiryPlan,
  forcePostPlan,
  incrementable,
  incrementPosting,
  newAuthorization,
  overSpendingLimit,
  type Plan,
  type Posting,
  refusalDecline,
  returnPlan,
  reversalPlan,
  type StartingMessage,
  unlinkedReturnPlan,
  type Verdict,
  verdictOf
} from "./CardMessageRules.js"
import { CardStore, type CardStoreService } from "./CardStore.js"
import { CARD } from "./Issuance.js"
import type { Card, DeclineReason, SimulateAmount, SimulateAuthorization, SimulateClearing, SimulateIncrement } from "./Records.js"
import { controlDecline, exceedsSpendingLimits, limitWindows, windowed } from "./SpendRules.js"

export { controlDecline, windowKey, windowStart } from "./SpendRules.js"

type MessageError = InvalidRequest | NotFound | Conflict | BusinessRuleViolation | SqlError.SqlError

/** A message's write: the transaction as it left it, and whether the webhook workers are to be woken after the commit. */
type Written = readonly [Transaction, boolean]

const TRANSACTION = { resource: "transaction", param: "transaction_id" }

/** What the card messages work with, gathered once when the service is built. */
interface MessageDeps {
  readonly store: CardStoreService
  readonly ledger: Ledger
  readonly transactor: TransactorService
  readonly lane: WriteLaneService
  readonly config: IssuingSettings
  readonly decisions: AuthorizationDecisions
}

const isoAt = (ms: number) => new Date(ms).toISOString()

const cardOf = (deps: MessageDeps, programId: string, cardId: string) =>
  Effect.map(
    findOwned(cardId, CARD, (id) => deps.store.findCard(programId, id)),
    (read) => read.card
  )

/** The card, locked for the rest of the caller's transaction. */
const lockCard = (deps: MessageDeps, programId: string, cardId: string) =>
  Effect.map(
    findOwned(cardId, CARD, (id) => deps.store.lockCard(programId, id)),
    (read) => read.card
  )

/** Commits a message's write (the caller's transaction, or the store's lane); wakes the webhook workers after it when it queued deliveries. */
const commit = <A, E>(deps: MessageDeps, effect: Effect.Effect<readonly [A, boolean], E>, atomic: boolean) =>
  Effect.tap(commitWrite(deps.lane, deps.transactor, effect, { atomic }), ([, wake]) =>
    wake ? deps.ledger.wakeDeliveries : Effect.void
  ).pipe(Effect.map(([value]) => value))

/**
 * Posts a message on the card's account: one ledger call, nothing written when it is refused. An
 * approval refused for the funds or the card's state (checked under the posting's locks) records
 * its decline instead, in the same transaction when there is one. A plan that asked neither check
 * can be refused only for the ledger's bounds, which fail with their 422 in the ledger.
 */
const post = (deps: MessageDeps, programId: string, card: Card, posting: Posting, write: "insert" | "update") =>
  Effect.flatMap(
    deps.ledger.postCardMessage(programId, { ...posting.plan, write, financialAccountId: card.financial_account_id }),
    (outcome): Effect.Effect<Written, MessageError> => {
      if (outcome.posted) return Effect.succeed([posting.plan.transaction, outcome.wake] as const)
      if (posting.declined === null) return Effect.dieMessage("a card message's posting was refused for a check it did not ask for")
      return post(deps, programId, card, { plan: posting.declined(refusalDecline(outcome.refusal)), declined: null }, write)
    }
  )

/** Posts a message that is never declined: a clearing, a reversal, a return or an expiry. */
const postPlan = (deps: MessageDeps, programId: string, card: Card, plan: Plan) =>
  post(deps, programId, card, { plan, declined: null }, "update")

/**
 * The spending limits' rule (SpendRules.exceedsSpendingLimits) on the card as given, with the
 * running totals of its limits' current windows read (one row per window): SPENDING_LIMIT_EXCEEDED,
 * or null. `authorizedBefore` is 0 for a new authorization (which a count limit counts), the
 * transaction's authorized total for an increment (which it does not).
 */
const spendDecline = (deps: MessageDeps, card: Card, authorizedBefore: number, amount: number, newAuthorization: boolean) =>
  Effect.gen(function* () {
    const spent = windowed(card) ? yield* deps.store.windowSpend(card.id, limitWindows(card, yield* nowMs)) : []
    return exceedsSpendingLimits(card, authorizedBefore, amount, newAuthorization, spent) ? ("SPENDING_LIMIT_EXCEEDED" as const) : null
  })

/**
 * The same rule again, in the posting's transaction: a card with a limit on a window is locked and
 * its windows read again, so two messages cannot both fit under its limit; a PER_TRANSACTION
 * limit is checked on the transaction as locked, so racing increments cannot pass it together.
 */
const spendDeclineLocked = (
  deps: MessageDeps,
  programId: string,
  card: Card,
  authorizedBefore: number,
  amount: number,
  newAuthorization: boolean
) =>
  Effect.flatMap(windowed(card) ? lockCard(deps, programId, card.id) : Effect.succeed(card), (locked) =>
    spendDecline(deps, locked, authorizedBefore, amount, newAuthorization)
  )

/**
 * The funds check before the program is asked (docs/card-transactions.md#real-time-decisions): the
 * card account's available balance on a plain read, without a lock — the posting checks it again
 * under its locks, so this only spares the program a question whose answer could not post.
 */
const fundsDecline = (deps: MessageDeps, programId: string, card: Card, amount: number) =>
  Effect.map(deps.ledger.getFinancialAccount(programId, card.financial_account_id), (account) =>
    account.available_balance.amount < amount ? ("INSUFFICIENT_FUNDS" as const) : null
  )

/**
 * Decides an authorization or an increment before it posts: the credentials as sent, the card's
 * state and merchant lists, its spending limits and the funds available (on plain reads), then —
 * only when every one approves — the program's real-time decision (AuthorizationDecisions, with no
 * transaction open and no lock held). A built-in decline never asks.
 */
const decide = (
  deps: MessageDeps,
  programId: string,
  card: Card,
  ask: {
    readonly transaction: Transaction
    readonly mcc: string | null
    /** The merchant's country as its message sent it (`merchant.country`), or null. */
    readonly country: string | null
    readonly authorizedBefore: number
    readonly amount: number
    readonly credentialDecline: DeclineReason | null
  },
  kind: "AUTHORIZATION" | "FINANCIAL_AUTHORIZATION" | "INCREMENTAL_AUTHORIZATION",
  partial: boolean
): Effect.Effect<Verdict, NotFound | SqlError.SqlError> =>
  Effect.gen(function* () {
    const builtIn =
      ask.credentialDecline ??
      controlDecline(card, ask.mcc, ask.country) ??
      (yield* spendDecline(deps, card, ask.authorizedBefore, ask.amount, kind !== "INCREMENTAL_AUTHORIZATION")) ??
      (yield* fundsDecline(deps, programId, card, ask.amount))
    const decision =
      builtIn === null
        ? yield* deps.decisions.decide(programId, {
            transaction: ask.transaction,
            card,
            amount: ask.amount,
            kind,
            partial_approval_capable: partial
          })
        : Option.none()
    return verdictOf(builtIn, decision, ask.amount)
  })

/** The authorization's currency: the card account's, which the authorization may name but not change (422). */
const authorizationCurrency = (deps: MessageDeps, programId: string, card: Card, named: string | null | undefined) =>
  Effect.flatMap(deps.ledger.accountCurrency(programId, card.financial_account_id), (currency) =>
    named === undefined || named === null || named === currency
      ? Effect.succeed(currency)
      : new BusinessRuleViolation({
          code: "currency_mismatch",
          message: "The card's account holds another currency than the authorization's.",
          param: "currency"
        })
  )

/**
 * An authorization of a card found (by its id, or by its number on the network's way): decide,
 * post once at the request's commit point — so under an Idempotency-Key or a network message id the
 * posting and the answer commit together, the program having been asked before with nothing
 * written (docs/api.md#idempotency). An approval on a card with a limit on a window posts under
 * the card's row lock with the rule checked again.
 */
const authorizeCard = (
  deps: MessageDeps,
  caller: ProgramCaller,
  card: Card,
  message: AuthorizationMessage
): Effect.Effect<Transaction, MessageError> =>
  Effect.gen(function* () {
    const programId = caller.program.id
    // Immutable, so served from the ledger's account cache: no read per authorization.
    const currency = yield* authorizationCurrency(deps, programId, card, message.currency)
    const kind = message.kind
    const atMs = yield* nowMs
    const opened = newAuthorization(programId, card, message, currency, isoAt(atMs))
    const ask = {
      transaction: opened,
      mcc: message.mcc,
      country: message.merchant?.country ?? null,
      authorizedBefore: 0,
      amount: message.amount,
      credentialDecline: message.credentialDecline
    }
    const verdict = yield* decide(deps, programId, card, ask, kind, message.partialApprovalCapable)
    const holdExpiresAt = isoAt(atMs + deps.config.authorizationHoldDays * 86_400_000)
    const posting = (final: Verdict) => post(deps, programId, card, authorizationPosting(opened, kind, final, holdExpiresAt), "insert")
    if (verdict._tag === "Declined") return yield* commitAtPoint(commit(deps, posting(verdict), true))
    if (!windowed(card)) return yield* commitAtPoint(commit(deps, posting(verdict), kind === "AUTHORIZATION"))
    const locked = Effect.flatMap(spendDeclineLocked(deps, programId, card, 0, verdict.amount, true), (over) =>
      posting(over === null ? verdict : overSpendingLimit(verdict))
    )
    return yield* commitAtPoint(commit(deps, locked, false))
  })

/** The messages that open a card transaction with nothing to decide (docs/network.md#the-messages). */
export type UndecidedOpening = "AUTHORIZATION_ADVICE" | "FORCE_POST" | "RETURN"

/**
 * A message that opens a card transaction the issuer does not decide: a stand-in advice (held), a
 * force post (cleared without authorization) or an unlinked refund — no built-in check, no program
 * asked, posted once at the request's commit point. Refused only for the account's currency (422)
 * or the ledger's own bounds.
 */
const openUndecided = (
  deps: MessageDeps,
  caller: ProgramCaller,
  card: Card,
  message: StartingMessage,
  kind: UndecidedOpening
): Effect.Effect<Transaction, MessageError> =>
  Effect.gen(function* () {
    const programId = caller.program.id
    const currency = yield* authorizationCurrency(deps, programId, card, message.currency)
    const atMs = yield* nowMs
    const opened = newAuthorization(programId, card, message, currency, isoAt(atMs))
    const plan =
      kind === "AUTHORIZATION_ADVICE"
        ? adviceOpening(opened, isoAt(atMs + deps.config.authorizationHoldDays * 86_400_000))
        : kind === "FORCE_POST"
          ? forcePostPlan(opened)
          : unlinkedReturnPlan(opened)
    // A plan with a transfer runs in a transaction of its own (the settlement account may be created first).
    return yield* commitAtPoint(commit(deps, post(deps, programId, card, { plan, declined: null }, "insert"), plan.transfer === null))
  })

const invalid = (message: string, param: string) => Effect.fail(new InvalidRequest({ message, param }))

/**
 * The network message a simulated authorization stands for (docs/network.md#the-sandbox): the same
 * message the network's way builds, for the card named by id. Its merchant is `merchant`, or `mcc`
 * and `merchant_name` as before it; sent together they must agree (400).
 */
export const simulatedAuthorization = (input: SimulateAuthorization): Effect.Effect<AuthorizationMessage, InvalidRequest> => {
  const merchant = input.merchant ?? null
  if (merchant === null && input.mcc === undefined) return invalid("Give the merchant: mcc, or the merchant object.", "mcc")
  if (merchant !== null && input.mcc !== undefined && input.mcc !== merchant.mcc)
    return invalid("mcc and merchant.mcc differ; send one of them.", "mcc")
  const merchantName = input.merchant_name ?? null
  if (merchant !== null && merchantName !== null && merchantName !== merchant.name)
    return invalid("merchant_name and merchant.name differ; send one of them.", "merchant_name")
  return Effect.succeed({
    kind: input.kind ?? "AUTHORIZATION",
    amount: input.amount,
    currency: input.currency ?? null,
    mcc: merchant?.mcc ?? input.mcc!,
    merchantName: merchant?.name ?? merchantName,
    merchant: merchant === null ? null : { ...merchant, city: merchant.city ?? null, country: merchant.country ?? null },
    networkTransactionId: null,
    partialApprovalCapable: input.partial_approval_capable ?? false,
    credentialDecline: null
  })
}

/** A simulated authorization: the network's message for the card named by id, on the same path (authorizeCard). */
const authorize = (deps: MessageDeps, caller: ProgramCaller, input: SimulateAuthorization): Effect.Effect<Transaction, MessageError> =>
  Effect.gen(function* () {
    const card = yield* cardOf(deps, caller.program.id, input.card_id)
    return yield* authorizeCard(deps, caller, card, yield* simulatedAuthorization(input))
  })

/** A message on an existing card transaction, decided and written under its row lock. */
const onTransaction = (
  deps: MessageDeps,
  caller: ProgramCaller,
  transactionId: string,
  write: (t: Transaction, card: Card, at: string) => Effect.Effect<Written, MessageError>
) =>
  commit(
    deps,
    Effect.gen(function* () {
      const programId = caller.program.id
      const t = yield* deps.ledger.lockTransaction(programId, transactionId)
      const card = yield* cardOf(deps, programId, yield* cardIdOf(t))
      return yield* write(t, card, isoAt(yield* nowMs))
    }),
    false
  )

/**
 * An increment: decided on a plain read (no lock while the program decides), then posted once at
 * the request's commit point under the transaction's row lock, with the spend rule checked again
 * on the transaction as locked (another increment may have grown it since).
 */
const increment = (
  deps: MessageDeps,
  caller: ProgramCaller,
  transactionId: string,
  input: SimulateIncrement
): Effect.Effect<Transaction, MessageError> =>
  Effect.gen(function* () {
    const programId = caller.program.id
    const seen = yield* deps.ledger.getTransaction(programId, transactionId)
    const cardId = yield* cardIdOf(seen)
    yield* incrementable(seen)
    const card = yield* cardOf(deps, programId, cardId)
    const ask = {
      transaction: seen,
      mcc: seen.mcc,
      country: seen.merchant?.country ?? null,
      authorizedBefore: seen.authorized_amount!,
      amount: input.amount,
      credentialDecline: null
    }
    const verdict = yield* decide(deps, programId, card, ask, "INCREMENTAL_AUTHORIZATION", false)
    const write = (t: Transaction, locked: Card, at: string) =>
      Effect.gen(function* () {
        yield* incrementable(t)
        const over =
          verdict._tag === "Approved"
            ? yield* spendDeclineLocked(deps, programId, locked, t.authorized_amount!, verdict.amount, false)
            : null
        const final = over === null ? verdict : overSpendingLimit(verdict)
        return yield* post(deps, programId, locked, incrementPosting(t, input.amount, final, at), "update")
      })
    return yield* commitAtPoint(onTransaction(deps, caller, transactionId, write))
  })

/**
 * Releases up to `limit` holds whose expiry has passed, in one transaction: claimed with SKIP
 * LOCKED on PostgreSQL (another worker takes others), under SQLite's one writer elsewhere, and
 * each re-read under its lock, so none is released twice. Answers how many were released.
 */
const expireDue = (deps: MessageDeps, limit: number): Effect.Effect<number, MessageError> =>
  Effect.flatMap(nowMs, (nowMillis) =>
    commit(
      deps,
      Effect.gen(function* () {
        // Read outside the write lane, whose fiber may run on another clock than the caller's.
        const now = isoAt(nowMillis)
        const due = yield* deps.ledger.claimExpiredHolds(now, limit)
        let wake = false
        for (const t of due) {
          const card = yield* deps.store.findCard(t.program_id, t.card_id!)
          if (Option.isNone(card)) continue
          const [, queued] = yield* postPlan(deps, t.program_id, card.value.card, expiryPlan(t, now))
          wake = wake || queued
        }
        return [due.length, wake] as const
      }),
      false
    )
  )

/**
 * Card transactions as card networks run them (docs/card-transactions.md): an authorization
 * opens a hold on the card's wallet account (no book transfer: the amount is pending, not
 * available), increments grow it, clearings post the seed's four-entry book transfer and close or
 * shrink it, reversals and expiry release it, returns refund what settled. What each message does
 * is decided by pure rules (CardMessageRules.ts, SpendRules.ts); each is then one store call
 * (CardMessagePosting) that writes the transaction, the hold's change, its transfer and its events
 * together; nothing is written when a message is refused. An authorization reads as: find the
 * card, decide (the built-in checks, then the program's real-time decision when they approve),
 * post once — and the posting checks again that the card is ACTIVE and the funds available under
 * the locks it takes.
 */
export class CardAuthorizations extends Effect.Service<CardAuthorizations>()("@issuing/core/CardAuthorizations", {
  effect: Effect.gen(function* () {
    const deps: MessageDeps = {
      store: yield* CardStore,
      ledger: yield* Ledger,
      transactor: yield* Transactor,
      lane: yield* WriteLane,
      config: yield* IssuingConfig,
      decisions: yield* AuthorizationDecisions
    }
    // At the request's commit point: under a network message id (or an Idempotency-Key of a route
    // that calls out) the message and its answer commit together; elsewhere it just runs.
    const onTransactionPlan =
      <I>(plan: (t: Transaction, input: I, at: string) => Effect.Effect<Plan, Conflict | BusinessRuleViolation>) =>
      (caller: ProgramCaller, transactionId: string, input: I): Effect.Effect<Transaction, MessageError> =>
        commitAtPoint(
          onTransaction(deps, caller, transactionId, (t, card, at) =>
            Effect.flatMap(plan(t, input, at), (p) => postPlan(deps, caller.program.id, card, p))
          )
        )
    return {
      authorize: (caller: ProgramCaller, input: SimulateAuthorization) => authorize(deps, caller, input),
      /** An authorization of a card already found: the network's way (docs/network.md) and the sandbox's. */
      authorizeCard: (caller: ProgramCaller, card: Card, message: AuthorizationMessage) => authorizeCard(deps, caller, card, message),
      increment: (caller: ProgramCaller, transactionId: string, input: SimulateIncrement) => increment(deps, caller, transactionId, input),
      clear: onTransactionPlan<SimulateClearing>(clearingPlan),
      reverse: onTransactionPlan<SimulateAmount>(reversalPlan),
      refund: onTransactionPlan<SimulateAmount>(returnPlan),
      /** A stand-in advice, force post or unlinked refund opening a transaction (the network's way). */
      openUndecided: (caller: ProgramCaller, card: Card, message: StartingMessage, kind: UndecidedOpening) =>
        openUndecided(deps, caller, card, message, kind),
      /** A stand-in advice on a known transaction: its hold set to `amount`, whatever the checks say. */
      advise: onTransactionPlan<number>((t, amount, at) =>
        advicePlan(t, amount, at, isoAt(Date.parse(at) + deps.config.authorizationHoldDays * 86_400_000))
      ),
      expire: (caller: ProgramCaller, transactionId: string) =>
        onTransactionPlan<void>((t, _, at) => expirable(t, at))(caller, transactionId),
      expireDue: (limit: number) => expireDue(deps, limit)
    }
  })
}) {}

/** The transaction param of the card messages' paths. */
export const CARD_TRANSACTION = TRANSACTION
