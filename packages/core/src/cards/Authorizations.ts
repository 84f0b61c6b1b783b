import type { SqlError } from "@effect/sql"
import { Effect, Option } from "effect"
import type { ProgramCaller } from "../access/Records.js"
import { Ledger } from "../ledger/Ledger.js"
import { MAX_AMOUNT_MINOR, type Transaction } from "../ledger/Records.js"
import { BusinessRuleViolation, Conflict, InvalidRequest, NotFound } from "../platform/Errors.js"
import { isUuid } from "../platform/Ids.js"
import { IssuingConfig } from "../platform/IssuingConfig.js"
import { nowMs } from "../platform/Time.js"
import { Transactor } from "../sql/Transactor.js"
import { CardStore } from "./CardStore.js"
import type { Card, DeclineReason, SpendingInterval } from "./Records.js"

/** Longest merchant name accepted, in characters. */
export const MAX_MERCHANT_NAME_LENGTH = 200

/** POST /v1/simulate/authorizations (CONTRACT §4). */
export interface SimulateAuthorizationInput {
  readonly card_id: string
  readonly amount: number
  readonly currency?: string | null | undefined
  readonly mcc: string
  readonly merchant_name?: string | null | undefined
}

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

type AuthorizationError = InvalidRequest | NotFound | Conflict | BusinessRuleViolation | SqlError.SqlError

/**
 * Simulated card authorizations (sandbox only): the card's state, merchant category allow and block
 * lists, its spending period over the card's APPROVED authorizations in UTC windows, and the
 * wallet's available funds decide; an approval posts a transfer through the ledger, a decline
 * records a DECLINED transaction with its reason. Either way one transaction and its
 * transaction.updated event commit with the decision.
 */
export class CardAuthorizations extends Effect.Service<CardAuthorizations>()("@issuing/core/CardAuthorizations", {
  effect: Effect.gen(function*() {
    const store = yield* CardStore
    const ledger = yield* Ledger
    const transactor = yield* Transactor
    const config = yield* IssuingConfig

    const validate = (input: SimulateAuthorizationInput) =>
      Effect.gen(function*() {
        if (!Number.isSafeInteger(input.amount) || input.amount <= 0 || input.amount > MAX_AMOUNT_MINOR) {
          return yield* new InvalidRequest({
            message: `amount must be a positive integer in minor units, at most ${MAX_AMOUNT_MINOR}.`,
            param: "amount"
          })
        }
        if (typeof input.mcc !== "string" || !/^\d{4}$/.test(input.mcc)) {
          return yield* new InvalidRequest({ message: "mcc must be a 4-digit merchant category code.", param: "mcc" })
        }
        const currency = input.currency ?? null
        if (currency !== null && !/^[A-Z]{3}$/.test(currency)) {
          return yield* new InvalidRequest({ message: "currency must be an ISO 4217 code in upper case, e.g. USD.", param: "currency" })
        }
        const merchant = input.merchant_name ?? null
        if (merchant !== null && (merchant.trim().length === 0 || merchant.length > MAX_MERCHANT_NAME_LENGTH)) {
          return yield* new InvalidRequest({
            message: `merchant_name must be 1 to ${MAX_MERCHANT_NAME_LENGTH} characters.`,
            param: "merchant_name"
          })
        }
        return { currency, merchant }
      })

    return {
      /** True when simulations are served (sandbox only). */
      enabled: config.environment === "sandbox",

      /** Decides a simulated authorization and records it (APPROVED with a transfer, or DECLINED with a reason). */
      simulate: (caller: ProgramCaller, input: SimulateAuthorizationInput): Effect.Effect<Transaction, AuthorizationError> =>
        Effect.gen(function*() {
          const { currency: requested, merchant } = yield* validate(input)
          const programId = caller.program.id
          const missing = new NotFound({ message: "No such card.", param: "card_id" })
          if (!isUuid(input.card_id)) return yield* missing
          return yield* transactor.withTransaction(Effect.gen(function*() {
            // The card row lock serializes authorizations of one card, so two cannot both fit under its limit.
            const record = yield* store.lockCard(programId, input.card_id.toLowerCase())
            if (Option.isNone(record)) return yield* missing
            const card = record.value.card
            const account = yield* ledger.getFinancialAccount(programId, card.financial_account_id)
            const currency = requested ?? account.currency
            if (currency !== account.currency) {
              return yield* new BusinessRuleViolation({
                code: "currency_mismatch",
                message: `The card's account holds ${account.currency}, not ${currency}.`,
                param: "currency"
              })
            }
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

            const limit = card.spending_period
            if (limit !== null) {
              if (limit.interval === "PER_TRANSACTION") {
                if (input.amount > limit.amount) return yield* decline("SPENDING_LIMIT_EXCEEDED")
              } else {
                const start = windowStart(limit.interval, yield* nowMs)
                const spent = yield* store.approvedSpendMinor(card.id, start === null ? null : start.toISOString())
                if (spent + input.amount > limit.amount) return yield* decline("SPENDING_LIMIT_EXCEEDED")
              }
            }

            return yield* ledger.approveCardAuthorization(programId, {
              card_id: card.id,
              financial_account_id: card.financial_account_id,
              amount: input.amount,
              currency,
              mcc: input.mcc,
              merchant_name: merchant
            }).pipe(
              Effect.map((posted) => posted.transaction),
              Effect.catchIf(
                (error): error is BusinessRuleViolation =>
                  error._tag === "BusinessRuleViolation" && error.code === "insufficient_funds",
                () => decline("INSUFFICIENT_FUNDS")
              )
            )
          }))
        })
    }
  })
}) {}
