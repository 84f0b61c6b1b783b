/** How the console shows amounts and times. */

const DIGITS: Record<string, number> = { JPY: 0, KRW: 0, VND: 0, CLP: 0, ISK: 0, BHD: 3, KWD: 3, OMR: 3, JOD: 3, TND: 3 }

/** Minor units as a decimal amount with its currency: 12345 USD → "123.45 USD". */
export const money = (amountMinor: number, currency: string): string => {
  const digits = DIGITS[currency] ?? 2
  const sign = amountMinor < 0 ? "−" : ""
  const whole = Math.abs(amountMinor)
  if (digits === 0) return `${sign}${whole.toLocaleString("en-US")} ${currency}`
  const unit = 10 ** digits
  const major = Math.floor(whole / unit).toLocaleString("en-US")
  return `${sign}${major}.${String(whole % unit).padStart(digits, "0")} ${currency}`
}

/** An RFC 3339 time as the operator's local date and time, to the second. */
export const time = (iso: string | null | undefined): string => {
  if (iso === null || iso === undefined) return "—"
  const date = new Date(iso)
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString("en-GB", { hour12: false })
}

/** A datetime-local input's value (local time) as RFC 3339 in UTC, or undefined when empty or invalid. */
export const fromLocalInput = (value: string): string | undefined => {
  if (value === "") return undefined
  const date = new Date(value)
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString()
}

/** A date as a datetime-local input's value (local time, to the second). */
export const toLocalInput = (date: Date): string => {
  const pad = (n: number) => String(n).padStart(2, "0")
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`
}

/**
 * An id shortened for a table cell: its last 8 characters. Ids are UUIDv7, whose leading digits are
 * a timestamp shared by everything made in the same moment; the tail is random.
 */
export const shortId = (id: string): string => `…${id.slice(-8)}`
