import type { Card, DeclineReason, SpendingInterval } from "./Records.js"

/**
 * The card's spend controls (docs/card-transactions.md#spend-controls), as pure functions: its state
 * and merchant lists, and its spending limits. The authorization flow (Authorizations.ts) reads
 * what they need — its windows' running totals from the card store — and calls the same rule on a plain
 * read before it asks the program, and again under the locks before it posts.
 */

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

/**
 * The end (exclusive, UTC) of the window that starts at `start`: the next day, week, month or year;
 * null for ALL_TIME and PER_TRANSACTION.
 */
export const windowEnd = (interval: SpendingInterval, start: Date | null): Date | null => {
  if (start === null) return null
  const y = start.getUTCFullYear()
  const m = start.getUTCMonth()
  const d = start.getUTCDate()
  switch (interval) {
    case "DAILY":
      return new Date(Date.UTC(y, m, d + 1))
    case "WEEKLY":
      return new Date(Date.UTC(y, m, d + 7))
    case "MONTHLY":
      return new Date(Date.UTC(y, m + 1, 1))
    case "YEARLY":
      return new Date(Date.UTC(y + 1, 0, 1))
    case "ALL_TIME":
    case "PER_TRANSACTION":
      return null
  }
}

/**
 * The key of the window holding `nowMillis` in the card store's running totals: its first day
 * (`YYYY-MM-DD`), '' for ALL_TIME (one window, all time). Windows start at a UTC midnight.
 */
export const windowKey = (interval: WindowedInterval, nowMillis: number): string => {
  const start = windowStart(interval, nowMillis)
  return start === null ? "" : start.toISOString().slice(0, 10)
}

/** The intervals whose limits count a window (every one but PER_TRANSACTION). */
export type WindowedInterval = Exclude<SpendingInterval, "PER_TRANSACTION">

/** What a card's transactions created in one window have spent: open holds plus settled amounts, and approved authorizations. */
export interface WindowSpend {
  readonly interval: WindowedInterval
  /** The window's first day, `windowKey`. */
  readonly window: string
  readonly spent_minor: number
  /** Approved authorizations created in the window, less those released whole (VOIDED, EXPIRED). */
  readonly spent_count: number
}

/** The windows a card's limits read at `nowMillis`: one per limit that is not PER_TRANSACTION. */
export const limitWindows = (
  card: Card,
  nowMillis: number
): ReadonlyArray<{ readonly interval: WindowedInterval; readonly window: string }> =>
  card.spending_limits.flatMap((limit) =>
    limit.interval === "PER_TRANSACTION" ? [] : [{ interval: limit.interval, window: windowKey(limit.interval, nowMillis) }]
  )

/**
 * The decline reason from the card's state and merchant controls, if any (checked before money).
 * The merchant's country is the one its card message sent (`merchant.country`); a card with an
 * allow list declines a merchant that sent none, as it declines an unknown category.
 */
export const controlDecline = (card: Card, mcc: string | null, country: string | null = null): DeclineReason | null => {
  if (card.state === "CLOSED") return "CARD_CLOSED"
  if (card.state === "FROZEN") return "CARD_FROZEN"
  if (mcc !== null && card.blocked_mcc_codes.includes(mcc)) return "MCC_BLOCKED"
  if (card.allowed_mcc_codes.length > 0 && (mcc === null || !card.allowed_mcc_codes.includes(mcc))) return "MCC_NOT_ALLOWED"
  if (country !== null && card.blocked_merchant_countries.includes(country)) return "MERCHANT_COUNTRY_NOT_ALLOWED"
  if (card.allowed_merchant_countries.length > 0 && (country === null || !card.allowed_merchant_countries.includes(country))) {
    return "MERCHANT_COUNTRY_NOT_ALLOWED"
  }
  return null
}

/** A card with a limit on a window: its authorizations and increments are posted under its row lock, the windows read again. */
export const windowed = (card: Card): boolean => card.spending_limits.some((limit) => limit.interval !== "PER_TRANSACTION")

/**
 * The spending limits' one rule: true when approving `amount` more on a transaction that already
 * authorized `authorizedBefore` (0 for a new one, `newAuthorization`) would take the card past any
 * of its limits. PER_TRANSACTION limits the transaction's authorized total, increments included,
 * so a run of increments cannot pass it. A window's amount limits what `spent` holds for it —
 * open holds and settled amounts, reversals and returns already taken off — plus `amount`; its
 * count limits the approved authorizations, so only a new authorization can pass it (an increment
 * is not a new authorization). `spent` holds the windows the card's limits read now
 * (`limitWindows`); a window not in it has spent nothing.
 */
export const exceedsSpendingLimits = (
  card: Card,
  authorizedBefore: number,
  amount: number,
  newAuthorization: boolean,
  spent: ReadonlyArray<WindowSpend>
): boolean =>
  card.spending_limits.some((limit) => {
    if (limit.interval === "PER_TRANSACTION") return limit.amount !== null && authorizedBefore + amount > limit.amount
    const window = spent.find((one) => one.interval === limit.interval)
    if (limit.amount !== null && (window?.spent_minor ?? 0) + amount > limit.amount) return true
    return limit.count !== null && newAuthorization && (window?.spent_count ?? 0) + 1 > limit.count
  })
