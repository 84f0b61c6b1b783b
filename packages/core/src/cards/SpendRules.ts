import type { Card, DeclineReason, SpendingInterval } from "./Records.js"

/**
 * The card's spend controls (docs/card-transactions.md#spend-controls), as pure functions: its state
 * and merchant category lists, and its spending period. The authorization flow (Authorizations.ts)
 * reads what they need — a window's spend from the card store — and calls the same rule on a plain
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
 * The first day (`YYYY-MM-DD`) of the window holding `nowMillis`, as the card store's spend is kept
 * per day; null for every day (ALL_TIME). Windows start at a UTC midnight: a window is its first day
 * and every day after it.
 */
export const windowFirstDay = (interval: SpendingInterval, nowMillis: number): string | null => {
  const start = windowStart(interval, nowMillis)
  return start === null ? null : start.toISOString().slice(0, 10)
}

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

/** A card whose spending period sums a window: its authorizations and increments are posted under its row lock. */
export const windowed = (card: Card): boolean => card.spending_period !== null && card.spending_period.interval !== "PER_TRANSACTION"

/**
 * The spending period's one rule: true when approving `amount` more on a transaction that already
 * authorized `authorizedBefore` (0 for a new one) would take the card past its period.
 * PER_TRANSACTION limits the transaction's authorized total, increments included, so a run of
 * increments cannot pass it; a window limits `windowSpentMinor` — its open holds and settled
 * amounts, reversals and returns already taken off — plus `amount` (read only for a `windowed` card).
 */
export const exceedsSpendingPeriod = (card: Card, authorizedBefore: number, amount: number, windowSpentMinor: number): boolean => {
  const limit = card.spending_period
  if (limit === null) return false
  if (limit.interval === "PER_TRANSACTION") return authorizedBefore + amount > limit.amount
  return windowSpentMinor + amount > limit.amount
}
