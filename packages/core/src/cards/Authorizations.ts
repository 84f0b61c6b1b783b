import type { SqlError } from "@effect/sql"
import { Effect, Option } from "effect"
import type { ProgramCaller } from "../access/Records.js"
import { commitAtPoint } from "../idempotency/IdempotentCommit.js"
import type { CardMessage } from "../ledger/CardPosting.js"
import { Ledger } from "../ledger/Ledger.js"
import type { PostingOutcome } from "../ledger/LedgerStore.js"
import { refused } from "../ledger/Posting.js"
import type { CardEvent, CardEventType, RequestHistoryEntry, Transaction } from "../ledger/Records.js"
import { BusinessRuleViolation, Conflict, type InvalidRequest, type NotFound } from "../platform/Errors.js"
import { findOwned } from "../platform/FindOwned.js"
import { newId } from "../platform/Ids.js"
import { IssuingConfig } from "../platform/IssuingConfig.js"
import { nowMs } from "../platform/Time.js"
import { Transactor } from "../sql/Transactor.js"
import { commitWrite, WriteLane } from "../sql/WriteLane.js"
import { AuthorizationDecisions, type Decision } from "./AuthorizationDecisions.js"
import { CardStore, type CardStoreService } from "./CardStore.js"
import { CARD } from "./Issuance.js"
import type {
  Card,
  DeclineReason,
  SimulateAmount,
  SimulateAuthorization,
  SimulateClearing,
  SimulateIncrement,
  SpendingInterval
} from "./Records.js"

/**
 * The start (inclusive, UTC) of the spending window holding `nowMillis`: the day, the ISO week
 * (from Monday), the month or the year; null for ALL_TIME and PER_TRANSACTION (no window).
 */
export const windowStart = (interval: SpendingInterval, nowMillis: number): Date | null => {
  const now = new Date(nowMillis)
  const y = now.getUTCFullYear()
  const m = now.getUTCMonth()
  const d = now.getUTCDate()
  switch (interval) {
    case "DAILY":
      return new Date(Date.UTC(y, m, d))
    case "WEEKLY": {
      const daysSinceMonday = (now.getUTCDay() + 6) % 7
      return new Date(Date.UTC(y, m, d - daysSinceMonday))
    }
    case "MONTHLY":
      return new Date(Date.UTC(y, m, 1))
    case "YEARLY":
      return new Date(Date.UTC(y, 0, 1))
    case "ALL_TIME":
    case "PER_TRANSACTION":
      return null
  }
}

/** The decline reason from the card's state and merchant category controls, if any (checked before money). */
export const controlDecline = (card: Card, mcc: string | null): DeclineReason | null => {
  if (card.state === "CLOSED") return "CARD_CLOSED"
  if (card.state === "FROZEN") return "CARD_FROZEN"
  if (mcc !== null && card.blocked_mcc_codes.includes(mcc)) return "MCC_BLOCKED"
  if (card.allowed_mcc_codes.length > 0 && (mcc === null || !card.allowed_mcc_codes.includes(mcc))) return "MCC_NOT_ALLOWED"
  return null
}

/**
 * True when a PER_TRANSACTION limit refuses `amount` more on a transaction that `authorizedBefore`
 * already authorized (0 for a new authorization): the limit is on the transaction's authorized
 * total, increments included, so a run of increments cannot pass it (docs/card-transactions.md#spend-controls).
 */
const exceedsPerTransaction = (card: Card, authorizedBefore: number, amount: number): boolean =>
  card.spending_period !== null &&
  card.spending_period.interval === "PER_TRANSACTION" &&
  authorizedBefore + amount > card.spending_period.amount

/**
 * True when approving `amount` more on a transaction that already authorized `authorizedBefore`
 * (0 for a new one) would take the card past its spending period: PER_TRANSACTION as
 * `exceedsPerTransaction`; a window by its open holds and settled amounts (reversals and returns
 * already taken off), docs/card-transactions.md#spend-controls.
 */
const exceedsSpendingPeriod = (store: CardStoreService, card: Card, authorizedBefore: number, amount: number) =>
  Effect.gen(function* () {
    const limit = card.spending_period
    if (limit === null) return false
    if (limit.interval === "PER_TRANSACTION") return exceedsPerTransaction(card, authorizedBefore, amount)
    const start = windowStart(limit.interval, yield* nowMs)
    // Windows start at a UTC midnight: the window is its first day and every day after it.
    const spent = yield* store.approvedSpendMinor(card.id, start === null ? null : start.toISOString().slice(0, 10))
    return spent + amount > limit.amount
  })

/** A card whose spending period sums a window: its authorizations and increments are decided under its row lock. */
const windowed = (card: Card) => card.spending_period !== null && card.spending_period.interval !== "PER_TRANSACTION"

type MessageError = InvalidRequest | NotFound | Conflict | BusinessRuleViolation | SqlError.SqlError

const TRANSACTION = { resource: "transaction", param: "transaction_id" }

const cardEvent = (type: CardEventType, amount: number, decline: string | null, at: string): CardEvent => ({
  id: newId(),
  type,
  amount,
  result: decline === null ? "APPROVED" : "DECLINED",
  decline_reason: decline,
  created_at: at
})

/** The refusal of a posting as a decline reason, or undefined for a ledger refusal (balance_limit_exceeded: a 422). */
const refusalDecline = (outcome: PostingOutcome): DeclineReason | undefined =>
  outcome.refusal === "insufficient_funds"
    ? "INSUFFICIENT_FUNDS"
    : outcome.refusal === "card_frozen"
      ? "CARD_FROZEN"
      : outcome.refusal === "card_closed"
        ? "CARD_CLOSED"
        : undefined

const conflict = (message: string) => new Conflict({ message, param: "transaction_id" })

const exceeds = (code: "amount_exceeds_pending" | "amount_exceeds_settled", message: string) =>
  new BusinessRuleViolation({ code, message, param: "amount" })

/** The change one message makes: the transaction after it and what the ledger moves. */
type Plan = Omit<CardMessage, "write" | "financialAccountId">

/** A message that only records (a declined increment): nothing moves. */
const recordOnly = (transaction: Transaction): Plan => ({
  transaction,
  pendingDelta: 0,
  requireAvailable: 0,
  activeCardId: null,
  transfer: null
})

/** A hold released (reversal or expiry): VOIDED or EXPIRED when nothing cleared, SETTLED when some did. */
const released = (t: Transaction, type: CardEventType, amount: number, at: string, closed: "VOIDED" | "EXPIRED"): Plan => {
  const pending = t.pending_amount! - amount
  return {
    transaction: {
      ...t,
      status: pending > 0 ? "PENDING" : t.settled_amount! > 0 ? "SETTLED" : closed,
      pending_amount: pending,
      card_events: [...t.card_events, cardEvent(type, amount, null, at)],
      updated_at: at
    },
    pendingDelta: -amount,
    requireAvailable: 0,
    activeCardId: null,
    transfer: null
  }
}

const isoAt = (ms: number) => new Date(ms).toISOString()

/**
 * Card transactions as card networks run them (docs/card-transactions.md): an authorization
 * opens a hold on the card's wallet account (no book transfer: the amount is pending, not
 * available), increments grow it, clearings post the seed's four-entry book transfer and close or
 * shrink it, reversals and expiry release it, returns refund what settled. Every message is one
 * store call (CardMessagePosting) that writes the transaction, the hold's change, its transfer and
 * its events together; nothing is written when a message is refused.
 *
 * An authorization is decided by the card's state and merchant category lists, its spending period,
 * the program's real-time decision (AuthorizationDecisions, asked only when the built-in checks
 * approve and with no lock or transaction held), then the posting, which re-checks the card is
 * ACTIVE and the funds available under the locks it takes. A card whose spending period sums a
 * window is posted under its row lock with the window summed again, so two authorizations cannot
 * both fit under its limit.
 */
export class CardAuthorizations extends Effect.Service<CardAuthorizations>()("@issuing/core/CardAuthorizations", {
  effect: Effect.gen(function* () {
    const store = yield* CardStore
    const ledger = yield* Ledger
    const transactor = yield* Transactor
    const lane = yield* WriteLane
    const config = yield* IssuingConfig
    const decisions = yield* AuthorizationDecisions

    const cardOf = (programId: string, cardId: string) => findOwned(cardId, CARD, (id) => store.findCard(programId, id))

    /** Posts a plan; wakes the webhook workers after the commit when it queued deliveries. */
    const commit = <A, E>(effect: Effect.Effect<readonly [A, boolean], E>, atomic: boolean) =>
      Effect.tap(commitWrite(lane, transactor, effect, { atomic }), ([, wake]) => (wake ? ledger.wakeDeliveries : Effect.void)).pipe(
        Effect.map(([value]) => value)
      )

    /**
     * Posts what an authorization or an increment decided, its one write: at the request's commit
     * point, so under an Idempotency-Key the posting and the request's answer commit together —
     * the program's decision was asked before, with nothing written (docs/api.md#idempotency).
     */
    const commitDecided = <A, E>(effect: Effect.Effect<readonly [A, boolean], E>, atomic: boolean) => commitAtPoint(commit(effect, atomic))

    /** Writes a plan on the card's account; a refusal fails with its 422 (only ledger bounds can refuse here). */
    const post = (programId: string, card: Card, plan: Plan, write: "insert" | "update") =>
      Effect.flatMap(ledger.postCardMessage(programId, { ...plan, write, financialAccountId: card.financial_account_id }), (outcome) =>
        outcome.posted ? Effect.succeed([plan.transaction, outcome.wake] as const) : Effect.fail(refused(outcome))
      )

    /** Posts an approval; a refusal for funds or the card's state records the decline instead (same transaction when there is one). */
    const approveOrDecline = (
      programId: string,
      card: Card,
      approved: Plan,
      declined: (reason: DeclineReason) => Plan,
      write: "insert" | "update"
    ) =>
      Effect.flatMap(
        ledger.postCardMessage(programId, { ...approved, write, financialAccountId: card.financial_account_id }),
        (outcome): Effect.Effect<readonly [Transaction, boolean], MessageError> => {
          if (outcome.posted) return Effect.succeed([approved.transaction, outcome.wake] as const)
          const reason = refusalDecline(outcome)
          return reason === undefined ? Effect.fail(refused(outcome)) : post(programId, card, declined(reason), write)
        }
      )

    /** The program's real-time decision, when it has an endpoint or the host a decider (none otherwise). */
    const ask = (
      programId: string,
      card: Card,
      transaction: Transaction,
      amount: number,
      kind: "AUTHORIZATION" | "FINANCIAL_AUTHORIZATION" | "INCREMENTAL_AUTHORIZATION",
      partial: boolean
    ): Effect.Effect<Option.Option<Decision>, SqlError.SqlError> =>
      decisions.decide(programId, { transaction, card, amount, kind, partial_approval_capable: partial })

    const authorize = (caller: ProgramCaller, input: SimulateAuthorization): Effect.Effect<Transaction, MessageError> =>
      Effect.gen(function* () {
        const programId = caller.program.id
        const read = yield* cardOf(programId, input.card_id)
        const card = read.card
        // Immutable, so served from the ledger's account cache: no read per authorization.
        const accountCurrency = yield* ledger.accountCurrency(programId, card.financial_account_id)
        const currency = input.currency ?? accountCurrency
        if (currency !== accountCurrency) {
          return yield* new BusinessRuleViolation({
            code: "currency_mismatch",
            message: "The card's account holds another currency than the authorization's.",
            param: "currency"
          })
        }
        const kind = input.kind ?? "AUTHORIZATION"
        const nowMillis = yield* nowMs
        const now = isoAt(nowMillis)
        const base: Transaction = {
          id: newId(),
          object: "transaction",
          program_id: programId,
          status: "PENDING",
          amount: input.amount,
          currency,
          card_id: card.id,
          decline_reason: null,
          mcc: input.mcc,
          merchant_name: input.merchant_name ?? null,
          authorized_amount: input.amount,
          pending_amount: 0,
          settled_amount: 0,
          expires_at: null,
          card_events: [],
          request_history: [],
          created_at: now,
          updated_at: now
        }
        const declined =
          (history: ReadonlyArray<RequestHistoryEntry>) =>
          (reason: DeclineReason): Plan =>
            recordOnly({
              ...base,
              status: "DECLINED",
              decline_reason: reason,
              card_events: [cardEvent(kind, input.amount, reason, now)],
              request_history: history
            })
        const decline = (reason: DeclineReason, history: ReadonlyArray<RequestHistoryEntry> = []) =>
          commitDecided(post(programId, card, declined(history)(reason), "insert"), true)

        const control = controlDecline(card, input.mcc)
        if (control !== null) return yield* decline(control)
        if (yield* exceedsSpendingPeriod(store, card, 0, input.amount)) return yield* decline("SPENDING_LIMIT_EXCEEDED")
        const decision = yield* ask(
          programId,
          card,
          { ...base, expires_at: null },
          input.amount,
          kind,
          input.partial_approval_capable ?? false
        )
        const history = Option.match(decision, { onNone: () => [], onSome: (d) => [d.record] })
        if (Option.isSome(decision) && !decision.value.approved) return yield* decline("WEBHOOK_DECLINED", history)
        const amount = Option.match(decision, { onNone: () => input.amount, onSome: (d) => d.amount })
        const single = kind === "FINANCIAL_AUTHORIZATION"
        const approved: Plan = {
          transaction: {
            ...base,
            status: single ? "SETTLED" : "PENDING",
            amount,
            authorized_amount: amount,
            pending_amount: single ? 0 : amount,
            settled_amount: single ? amount : 0,
            expires_at: single ? null : isoAt(nowMillis + config.authorizationHoldDays * 86_400_000),
            card_events: [cardEvent(kind, amount, null, now)],
            request_history: history
          },
          pendingDelta: single ? 0 : amount,
          requireAvailable: amount,
          activeCardId: card.id,
          transfer: single ? { kind: "clearing", amount } : null
        }
        if (!windowed(card)) return yield* commitDecided(approveOrDecline(programId, card, approved, declined(history), "insert"), !single)
        // Under the card's row lock, with its window summed again: two cannot both fit under the limit.
        return yield* commitDecided(
          Effect.gen(function* () {
            const locked = (yield* findOwned(card.id, CARD, (id) => store.lockCard(programId, id))).card
            if (yield* exceedsSpendingPeriod(store, locked, 0, amount))
              return yield* post(programId, card, declined(history)("SPENDING_LIMIT_EXCEEDED"), "insert")
            return yield* approveOrDecline(programId, card, approved, declined(history), "insert")
          }),
          false
        )
      })

    /** A message on an existing card transaction, decided and written under its row lock. */
    const onTransaction = (
      caller: ProgramCaller,
      transactionId: string,
      plan: (t: Transaction, card: Card, at: string) => Effect.Effect<readonly [Transaction, boolean], MessageError>
    ) =>
      commit(
        Effect.gen(function* () {
          const programId = caller.program.id
          const t = yield* ledger.lockTransaction(programId, transactionId)
          if (t.card_id === null) return yield* conflict("The transaction is not a card transaction.")
          const card = (yield* cardOf(programId, t.card_id)).card
          return yield* plan(t, card, isoAt(yield* nowMs))
        }),
        false
      )

    const increment = (caller: ProgramCaller, transactionId: string, input: SimulateIncrement): Effect.Effect<Transaction, MessageError> =>
      Effect.gen(function* () {
        const programId = caller.program.id
        // Decided on a plain read first (no lock while the program decides), then written under the row lock.
        const seen = yield* ledger.getTransaction(programId, transactionId)
        if (seen.card_id === null) return yield* conflict("The transaction is not a card transaction.")
        if (seen.status !== "PENDING")
          return yield* conflict(`The card transaction is ${seen.status}; only a PENDING one takes an increment.`)
        const card = (yield* cardOf(programId, seen.card_id)).card
        let reason: DeclineReason | null = controlDecline(card, seen.mcc)
        if (reason === null && (yield* exceedsSpendingPeriod(store, card, seen.authorized_amount!, input.amount)))
          reason = "SPENDING_LIMIT_EXCEEDED"
        let decision = Option.none<Decision>()
        if (reason === null) {
          decision = yield* ask(programId, card, seen, input.amount, "INCREMENTAL_AUTHORIZATION", false)
          if (Option.isSome(decision) && !decision.value.approved) reason = "WEBHOOK_DECLINED"
        }
        const history = Option.match(decision, { onNone: () => [], onSome: (d) => [d.record] })
        const amount = Option.match(decision, { onNone: () => input.amount, onSome: (d) => (d.approved ? d.amount : input.amount) })
        // The increment decided: its one write, at the request's commit point (as commitDecided).
        return yield* onTransaction(caller, transactionId, (t, locked, at) =>
          Effect.gen(function* () {
            if (t.status !== "PENDING")
              return yield* conflict(`The card transaction is ${t.status}; only a PENDING one takes an increment.`)
            const declined = (why: DeclineReason): Plan =>
              recordOnly({
                ...t,
                card_events: [...t.card_events, cardEvent("INCREMENTAL_AUTHORIZATION", input.amount, why, at)],
                request_history: [...t.request_history, ...history],
                updated_at: at
              })
            if (reason !== null) return yield* post(programId, locked, declined(reason), "update")
            // Checked again on the transaction as locked: another increment may have grown it since the plain read.
            if (exceedsPerTransaction(locked, t.authorized_amount!, amount))
              return yield* post(programId, locked, declined("SPENDING_LIMIT_EXCEEDED"), "update")
            if (windowed(locked)) {
              const card = (yield* findOwned(locked.id, CARD, (id) => store.lockCard(programId, id))).card
              if (yield* exceedsSpendingPeriod(store, card, t.authorized_amount!, amount))
                return yield* post(programId, locked, declined("SPENDING_LIMIT_EXCEEDED"), "update")
            }
            const approved: Plan = {
              transaction: {
                ...t,
                amount: t.amount + amount,
                authorized_amount: t.authorized_amount! + amount,
                pending_amount: t.pending_amount! + amount,
                card_events: [...t.card_events, cardEvent("INCREMENTAL_AUTHORIZATION", amount, null, at)],
                request_history: [...t.request_history, ...history],
                updated_at: at
              },
              pendingDelta: amount,
              requireAvailable: amount,
              activeCardId: locked.id,
              transfer: null
            }
            return yield* approveOrDecline(programId, locked, approved, declined, "update")
          })
        ).pipe(commitAtPoint)
      })

    const clear = (caller: ProgramCaller, transactionId: string, input: SimulateClearing): Effect.Effect<Transaction, MessageError> =>
      onTransaction(caller, transactionId, (t, card, at) =>
        Effect.gen(function* () {
          if (t.status === "DECLINED") return yield* conflict("The card transaction was declined; nothing can clear it.")
          const hold = t.pending_amount!
          // Late presentments after a void or an expiry post too; by default, what was authorized and not yet cleared.
          const fallback = t.status === "PENDING" ? hold : t.status === "SETTLED" ? 0 : t.authorized_amount! - t.settled_amount!
          const amount = input.amount ?? fallback
          if (amount <= 0) return yield* conflict(`The card transaction is ${t.status} with nothing pending; give the clearing's amount.`)
          const final = input.final ?? true
          const release = final ? hold : Math.min(amount, hold)
          const pending = hold - release
          const plan: Plan = {
            transaction: {
              ...t,
              status: pending > 0 ? "PENDING" : "SETTLED",
              pending_amount: pending,
              settled_amount: t.settled_amount! + amount,
              card_events: [...t.card_events, cardEvent("CLEARING", amount, null, at)],
              updated_at: at
            },
            pendingDelta: -release,
            requireAvailable: 0,
            activeCardId: null,
            transfer: { kind: "clearing", amount }
          }
          return yield* post(caller.program.id, card, plan, "update")
        })
      )

    const reverse = (caller: ProgramCaller, transactionId: string, input: SimulateAmount): Effect.Effect<Transaction, MessageError> =>
      onTransaction(caller, transactionId, (t, card, at) =>
        Effect.gen(function* () {
          if (t.status !== "PENDING") return yield* conflict(`The card transaction is ${t.status}; only an open hold can be reversed.`)
          const amount = input.amount ?? t.pending_amount!
          if (amount > t.pending_amount!)
            return yield* exceeds(
              "amount_exceeds_pending",
              `A reversal may release at most the open hold (${t.pending_amount} minor units).`
            )
          return yield* post(caller.program.id, card, released(t, "AUTHORIZATION_REVERSAL", amount, at, "VOIDED"), "update")
        })
      )

    const refund = (caller: ProgramCaller, transactionId: string, input: SimulateAmount): Effect.Effect<Transaction, MessageError> =>
      onTransaction(caller, transactionId, (t, card, at) =>
        Effect.gen(function* () {
          if (t.status === "DECLINED") return yield* conflict("The card transaction was declined; there is nothing to return.")
          const settled = t.settled_amount!
          const amount = input.amount ?? settled
          if (amount > settled || amount <= 0)
            return yield* exceeds("amount_exceeds_settled", `A return may refund at most what settled (${settled} minor units).`)
          const plan: Plan = {
            transaction: {
              ...t,
              settled_amount: settled - amount,
              card_events: [...t.card_events, cardEvent("RETURN", amount, null, at)],
              updated_at: at
            },
            pendingDelta: 0,
            requireAvailable: 0,
            activeCardId: null,
            transfer: { kind: "return", amount }
          }
          return yield* post(caller.program.id, card, plan, "update")
        })
      )

    /** Releases an open hold at once (an AUTHORIZATION_EXPIRY message). */
    const expirePlan = (t: Transaction, at: string): Plan => released(t, "AUTHORIZATION_EXPIRY", t.pending_amount!, at, "EXPIRED")

    const expire = (caller: ProgramCaller, transactionId: string): Effect.Effect<Transaction, MessageError> =>
      onTransaction(caller, transactionId, (t, card, at) =>
        t.status === "PENDING"
          ? post(caller.program.id, card, expirePlan(t, at), "update")
          : Effect.fail(conflict(`The card transaction is ${t.status}; only an open hold can expire.`))
      )

    /**
     * Releases up to `limit` holds whose expiry has passed, in one transaction: claimed with SKIP
     * LOCKED on PostgreSQL (another worker takes others), under SQLite's one writer elsewhere, and
     * each re-read under its lock, so none is released twice. Answers how many were released.
     */
    const expireDue = (
      limit: number
    ): Effect.Effect<number, SqlError.SqlError | BusinessRuleViolation | InvalidRequest | NotFound | Conflict> =>
      Effect.flatMap(nowMs, (nowMillis) =>
        commit(
          Effect.gen(function* () {
            // Read outside the write lane, whose fiber may run on another clock than the caller's.
            const now = isoAt(nowMillis)
            const due = yield* ledger.claimExpiredHolds(now, limit)
            let wake = false
            for (const t of due) {
              const card = yield* store.findCard(t.program_id, t.card_id!)
              if (Option.isNone(card)) continue
              const [, queued] = yield* post(t.program_id, card.value.card, expirePlan(t, now), "update")
              wake = wake || queued
            }
            return [due.length, wake] as const
          }),
          false
        )
      )

    return { authorize, increment, clear, reverse, refund, expire, expireDue }
  })
}) {}

/** The transaction param of the card messages' paths. */
export const CARD_TRANSACTION = TRANSACTION
