/** How the console shows amounts and times. */

const DIGITS: Record<string, number> = { JPY: 0, KRW: 0, VND: 0, CLP: 0, ISK: 0, BHD: 3, KWD: 3, OMR: 3, JOD: 3, TND: 3 }

/** How many digits a currency's minor unit has (2 unless listed). */
export const minorDigits = (currency: string): number => DIGITS[currency] ?? 2

/** Minor units as a decimal amount with its currency: 12345 USD → "123.45 USD". */
export const money = (amountMinor: number, currency: string): string => {
  const digits = minorDigits(currency)
  const sign = amountMinor < 0 ? "−" : ""
  const whole = Math.abs(amountMinor)
  if (digits === 0) return `${sign}${whole.toLocaleString("en-US")} ${currency}`
  const unit = 10 ** digits
  const major = Math.floor(whole / unit).toLocaleString("en-US")
  return `${sign}${major}.${String(whole % unit).padStart(digits, "0")} ${currency}`
}

/**
 * An amount as an operator types it, in major units ("12.34", "1,000"), as minor units of
 * `currency`; or why it is not one (a sign, more decimals than the currency has, not a number).
 */
export const toMinor = (text: string, currency: string): { readonly minor: number } | { readonly problem: string } => {
  const digits = minorDigits(currency)
  const cleaned = text.trim().replace(/[,\s]/g, "")
  const match = /^(\d+)(?:\.(\d*))?$/.exec(cleaned)
  if (match === null) return { problem: `Enter an amount in ${currency}, e.g. ${digits === 0 ? "1000" : `12.${"5".padEnd(digits, "0")}`}.` }
  const fraction = match[2] ?? ""
  if (fraction.length > digits) return { problem: `${currency} has ${digits === 0 ? "no" : digits} decimal${digits === 1 ? "" : "s"}.` }
  const minor = Number(match[1]) * 10 ** digits + Number(fraction.padEnd(digits, "0") || "0")
  if (!Number.isSafeInteger(minor) || minor <= 0) return { problem: "Enter an amount above zero." }
  return { minor }
}

/** Minor units as the major-unit text an amount field holds (no grouping, no currency): 5000 USD → "50.00". */
export const toMajorInput = (amountMinor: number, currency: string): string => {
  const digits = minorDigits(currency)
  if (digits === 0) return String(amountMinor)
  const unit = 10 ** digits
  return `${Math.floor(amountMinor / unit)}.${String(amountMinor % unit).padStart(digits, "0")}`
}

const pad = (n: number) => String(n).padStart(2, "0")

/** A day as the console writes every date: 2026-11-29 (the operator's local calendar). */
export const day = (date: Date): string => `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`

/** A time of day as the console writes it: 14:05 (local). */
export const clock = (date: Date): string => `${pad(date.getHours())}:${pad(date.getMinutes())}`

/**
 * An RFC 3339 time as the console writes every time, one format everywhere: the operator's local
 * date and time to the second, 2026-11-29 14:05:09 (year first, so no reader mistakes day for month).
 */
export const time = (iso: string | null | undefined): string => {
  if (iso === null || iso === undefined) return "—"
  const date = new Date(iso)
  return Number.isNaN(date.getTime()) ? iso : `${day(date)} ${clock(date)}:${pad(date.getSeconds())}`
}

/** A datetime-local input's value (local time) as RFC 3339 in UTC, or undefined when empty or invalid. */
export const fromLocalInput = (value: string): string | undefined => {
  if (value === "") return undefined
  const date = new Date(value)
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString()
}

/** A date as a datetime-local input's value (local time, to the second). */
export const toLocalInput = (date: Date): string => `${day(date)}T${clock(date)}:${pad(date.getSeconds())}`

/**
 * An id shortened for a table cell: its last 8 characters. Ids are UUIDv7, whose leading digits are
 * a timestamp shared by everything made in the same moment; the tail is random.
 */
export const shortId = (id: string): string => `…${id.slice(-8)}`
