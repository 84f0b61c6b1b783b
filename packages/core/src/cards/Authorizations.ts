import type { SqlError } from "@effect/sql"
import { Effect, Option } from "effect"
import type { ProgramCaller } from "../access/Records.js"
import { commitAtPoint } from "../idempotency/IdempotentCommit.js"
import { Ledger } from "../ledger/Ledger.js"
import type { Transaction } from "../ledger/Records.js"
import { BusinessRuleViolation, type Conflict, type InvalidRequest, type NotFound } from "../platform/Errors.js"
import { findOwned } from "../platform/FindOwned.js"
import { type IssuingSettings, IssuingConfig } from "../platform/IssuingConfig.js"
import { nowMs } from "../platform/Time.js"
import { Transactor, type TransactorService } from "../sql/Transactor.js"
import { commitWrite, WriteLane, type WriteLaneService } from "../sql/WriteLane.js"
import { AuthorizationDecisions } from "./AuthorizationDecisions.js"
import {
  authorizationPosting,
  cardIdOf,
  clearingPlan,
  expirable,
  expiryPlan,
  incrementable,
  incrementPosting,
  newAuthorization,
  overSpendingLimit,
  type Plan,
  type Posting,
  refusalDecline,
  returnPlan,
  reversalPlan,
  type Verdict,
  verdictOf
} from "./CardMessageRules.js"
import { CardStore, type CardStoreService } from "./CardStore.js"
import { CARD } from "./Issuance.js"
import type { Card, SimulateAmount, SimulateAuthorization, SimulateClearing, SimulateIncrement } from "./Records.js"
import { controlDecline, exceedsSpendingPeriod, windowed, windowFirstDay } from "./SpendRules.js"

export { controlDecline, windowStart } from "./SpendRules.js"

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
 * The spending period's rule (SpendRules.exceedsSpendingPeriod) on the card as given, with its
 * window's spend read when the period sums one: SPENDING_LIMIT_EXCEEDED, or null.
 */
const spendDecline = (deps: MessageDeps, card: Card, authorizedBefore: number, amount: number) =>
  Effect.gen(function* () {
    const spent = windowed(card)
      ? yield* deps.store.approvedSpendMinor(card.id, windowFirstDay(card.spending_period!.interval, yield* nowMs))
      : 0
    return exceedsSpendingPeriod(card, authorizedBefore, amount, spent) ? ("SPENDING_LIMIT_EXCEEDED" as const) : null
  })

/**
 * The same rule again, in the posting's transaction: a card whose period sums a window is locked
 * and its window read again, so two messages cannot both fit under its limit; a PER_TRANSACTION
 * limit is checked on the transaction as locked, so racing increments cannot pass it together.
 */
const spendDeclineLocked = (deps: MessageDeps, programId: string, card: Card, authorizedBefore: number, amount: number) =>
  Effect.flatMap(windowed(card) ? lockCard(deps, programId, card.id) : Effect.succeed(card), (locked) =>
    spendDecline(deps, locked, authorizedBefore, amount)
  )

/**
 * Decides an authorization or an increment before it posts: the card's state and merchant lists,
 * its spending period (on a plain read), then — only when they approve — the program's real-time
 * decision (AuthorizationDecisions, with no transaction open and no lock held).
 */
const decide = (
  deps: MessageDeps,
  programId: string,
  card: Card,
  ask: { readonly transaction: Transaction; readonly mcc: string | null; readonly authorizedBefore: number; readonly amount: number },
  kind: "AUTHORIZATION" | "FINANCIAL_AUTHORIZATION" | "INCREMENTAL_AUTHORIZATION",
  partial: boolean
): Effect.Effect<Verdict, SqlError.SqlError> =>
  Effect.gen(function* () {
    const builtIn = controlDecline(card, ask.mcc) ?? (yield* spendDecline(deps, card, ask.authorizedBefore, ask.amount))
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
 * An authorization: find the card, decide, post once at the request's commit point — so under an
 * Idempotency-Key the posting and the request's answer commit together, the program having been
 * asked before with nothing written (docs/api.md#idempotency). An approval on a card whose period
 * sums a window posts under the card's row lock with the rule checked again.
 */
const authorize = (deps: MessageDeps, caller: ProgramCaller, input: SimulateAuthorization): Effect.Effect<Transaction, MessageError> =>
  Effect.gen(function* () {
    const programId = caller.program.id
    const card = yield* cardOf(deps, programId, input.card_id)
    // Immutable, so served from the ledger's account cache: no read per authorization.
    const currency = yield* authorizationCurrency(deps, programId, card, input.currency)
    const kind = input.kind ?? "AUTHORIZATION"
    const atMs = yield* nowMs
    const opened = newAuthorization(programId, card, input, currency, isoAt(atMs))
    const ask = { transaction: opened, mcc: input.mcc, authorizedBefore: 0, amount: input.amount }
    const verdict = yield* decide(deps, programId, card, ask, kind, input.partial_approval_capable ?? false)
    const holdExpiresAt = isoAt(atMs + deps.config.authorizationHoldDays * 86_400_000)
    const posting = (final: Verdict) => post(deps, programId, card, authorizationPosting(opened, kind, final, holdExpiresAt), "insert")
    if (verdict._tag === "Declined") return yield* commitAtPoint(commit(deps, posting(verdict), true))
    if (!windowed(card)) return yield* commitAtPoint(commit(deps, posting(verdict), kind === "AUTHORIZATION"))
    const locked = Effect.flatMap(spendDeclineLocked(deps, programId, card, 0, verdict.amount), (over) =>
      posting(over === null ? verdict : overSpendingLimit(verdict))
    )
    return yield* commitAtPoint(commit(deps, locked, false))
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
    const ask = { transaction: seen, mcc: seen.mcc, authorizedBefore: seen.authorized_amount!, amount: input.amount }
    const verdict = yield* decide(deps, programId, card, ask, "INCREMENTAL_AUTHORIZATION", false)
    const write = (t: Transaction, locked: Card, at: string) =>
      Effect.gen(function* () {
        yield* incrementable(t)
        const over =
          verdict._tag === "Approved" ? yield* spendDeclineLocked(deps, programId, locked, t.authorized_amount!, verdict.amount) : null
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
    const onTransactionPlan =
      <I>(plan: (t: Transaction, input: I, at: string) => Effect.Effect<Plan, Conflict | BusinessRuleViolation>) =>
      (caller: ProgramCaller, transactionId: string, input: I): Effect.Effect<Transaction, MessageError> =>
        onTransaction(deps, caller, transactionId, (t, card, at) =>
          Effect.flatMap(plan(t, input, at), (p) => postPlan(deps, caller.program.id, card, p))
        )
    return {
      authorize: (caller: ProgramCaller, input: SimulateAuthorization) => authorize(deps, caller, input),
      increment: (caller: ProgramCaller, transactionId: string, input: SimulateIncrement) => increment(deps, caller, transactionId, input),
      clear: onTransactionPlan<SimulateClearing>(clearingPlan),
      reverse: onTransactionPlan<SimulateAmount>(reversalPlan),
      refund: onTransactionPlan<SimulateAmount>(returnPlan),
      expire: (caller: ProgramCaller, transactionId: string) =>
        onTransactionPlan<void>((t, _, at) => expirable(t, at))(caller, transactionId),
      expireDue: (limit: number) => expireDue(deps, limit)
    }
  })
}) {}

/** The transaction param of the card messages' paths. */
export const CARD_TRANSACTION = TRANSACTION
