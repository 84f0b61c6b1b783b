import type { SqlError } from "@effect/sql"
import { Effect } from "effect"
import type { ProgramCaller } from "../access/Records.js"
import { CardNotActive, Ledger } from "../ledger/Ledger.js"
import type { Transaction } from "../ledger/Records.js"
import { BusinessRuleViolation, type Conflict, type InvalidRequest, type NotFound } from "../platform/Errors.js"
import { findOwned } from "../platform/FindOwned.js"
import { nowMs } from "../platform/Time.js"
import { Transactor } from "../sql/Transactor.js"
import { commitWrite, WriteLane } from "../sql/WriteLane.js"
import { CardStore, type CardStoreService } from "./CardStore.js"
import { CARD } from "./Issuance.js"
import type { Card, DeclineReason, SimulateAuthorization, SpendingInterval } from "./Records.js"

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
export const controlDecline = (card: Card, mcc: string): DeclineReason | null => {
  if (card.state === "CLOSED") return "CARD_CLOSED"
  if (card.state === "FROZEN") return "CARD_FROZEN"
  if (card.blocked_mcc_codes.includes(mcc)) return "MCC_BLOCKED"
  if (card.allowed_mcc_codes.length > 0 && !card.allowed_mcc_codes.includes(mcc)) return "MCC_NOT_ALLOWED"
  return null
}

/** True when approving `amount` would take the card past its spending period (APPROVED authorizations only). */
const exceedsSpendingPeriod = (store: CardStoreService, card: Card, amount: number) =>
  Effect.gen(function* () {
    const limit = card.spending_period
    if (limit === null) return false
    if (limit.interval === "PER_TRANSACTION") return amount > limit.amount
    const start = windowStart(limit.interval, yield* nowMs)
    const spent = yield* store.approvedSpendMinor(card.id, start === null ? null : start.toISOString())
    return spent + amount > limit.amount
  })

type AuthorizationError = InvalidRequest | NotFound | Conflict | BusinessRuleViolation | SqlError.SqlError

/**
 * Decides for a card (locked, or read when its approval re-checks its state) and records the
 * outcome: a DECLINED transaction with its reason, or the approval's transfer.
 */
const decide = (
  { ledger, store }: { readonly ledger: Ledger; readonly store: CardStoreService },
  programId: string,
  card: Card,
  input: SimulateAuthorization
) =>
  Effect.gen(function* () {
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
    const merchant = input.merchant_name ?? null
    const decline = (reason: DeclineReason) =>
      ledger.declineCardAuthorization(programId, {
        card_id: card.id,
        amount: input.amount,
        currency,
        decline_reason: reason,
        mcc: input.mcc,
        merchant_name: merchant
      })

    const control = controlDecline(card, input.mcc)
    if (control !== null) return yield* decline(control)
    if (yield* exceedsSpendingPeriod(store, card, input.amount)) return yield* decline("SPENDING_LIMIT_EXCEEDED")
    return yield* ledger
      .approveCardAuthorization(programId, {
        card_id: card.id,
        financial_account_id: card.financial_account_id,
        amount: input.amount,
        currency,
        mcc: input.mcc,
        merchant_name: merchant
      })
      .pipe(
        Effect.map((posted) => posted.transaction),
        Effect.catchIf(
          (error): error is BusinessRuleViolation => error._tag === "BusinessRuleViolation" && error.code === "insufficient_funds",
          () => decline("INSUFFICIENT_FUNDS")
        ),
        // Frozen or closed since it was read: the posting wrote nothing.
        Effect.catchIf(
          (error): error is CardNotActive => error instanceof CardNotActive,
          (error) => decline(error.state === "FROZEN" ? "CARD_FROZEN" : "CARD_CLOSED")
        )
      )
  })

/**
 * Simulated card authorizations (sandbox only): the card's state, merchant category allow and block
 * lists, its spending period over the card's APPROVED authorizations in UTC windows, and the
 * wallet's available funds decide; an approval posts a transfer through the ledger, a decline
 * records a DECLINED transaction with its reason. Either way one transaction and its
 * transaction.updated event commit with the decision (docs/ledger.md#card-authorizations).
 *
 * A card whose spending period sums a window is decided under its row lock, so two authorizations
 * cannot both fit under its limit. Any other card is decided on a plain read of it, and its
 * approval is one store call that re-checks the card is still ACTIVE under a lock a freeze waits
 * for: no transaction held open across round trips (on PostgreSQL the program's settlement account
 * row would stay locked for them, and every authorization of the program queue behind it).
 */
export class CardAuthorizations extends Effect.Service<CardAuthorizations>()("@issuing/core/CardAuthorizations", {
  effect: Effect.gen(function* () {
    const store = yield* CardStore
    const ledger = yield* Ledger
    const transactor = yield* Transactor
    const lane = yield* WriteLane
    const deps = { ledger, store }

    return {
      /** Decides a simulated authorization and records it (APPROVED with a transfer, or DECLINED with a reason). */
      simulate: (caller: ProgramCaller, input: SimulateAuthorization): Effect.Effect<Transaction, AuthorizationError> =>
        Effect.gen(function* () {
          const programId = caller.program.id
          const read = yield* findOwned(input.card_id, CARD, (id) => store.findCard(programId, id))
          const interval = read.card.spending_period?.interval
          if (interval === undefined || interval === "PER_TRANSACTION") return yield* decide(deps, programId, read.card, input)
          // Through the store's write lane (SQLite: one commit for concurrent authorizations).
          return yield* commitWrite(
            lane,
            transactor,
            Effect.gen(function* () {
              // The card row lock serializes authorizations of one card, so two cannot both fit under its limit.
              const record = yield* findOwned(input.card_id, CARD, (id) => store.lockCard(programId, id))
              return yield* decide(deps, programId, record.card, input)
            })
          )
        })
    }
  })
}) {}
