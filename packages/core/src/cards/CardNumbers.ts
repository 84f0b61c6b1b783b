import * as crypto from "node:crypto"

/** Length of every issued card number. */
export const PAN_LENGTH = 16
/** Length of the verification code. */
export const CVV_LENGTH = 3
/** Years from issuance (or reissue) to expiry. */
export const EXPIRY_YEARS = 3

/** A uniformly random decimal digit string from the CSPRNG (rejection-free via randomInt). */
const randomDigits = (count: number): string => {
  let digits = ""
  for (let i = 0; i < count; i++) digits += String(crypto.randomInt(0, 10))
  return digits
}

/** The Luhn check digit that completes `partial` (the number without its last digit). */
export const luhnCheckDigit = (partial: string): string => {
  let sum = 0
  // Walk from the right: the digit next to the (future) check digit is doubled.
  for (let i = partial.length - 1, double = true; i >= 0; i--, double = !double) {
    let digit = partial.charCodeAt(i) - 48
    if (double) {
      digit *= 2
      if (digit > 9) digit -= 9
    }
    sum += digit
  }
  return String((10 - (sum % 10)) % 10)
}

/** True when a digit string passes the Luhn check. */
export const isLuhnValid = (pan: string): boolean => /^\d{2,19}$/.test(pan) && luhnCheckDigit(pan.slice(0, -1)) === pan.slice(-1)

/** A new card number: the program BIN, random digits from the CSPRNG, and the Luhn check digit; 16 digits. */
export const generatePan = (bin: string): string => {
  if (!/^\d{6,8}$/.test(bin)) throw new Error("A BIN must be 6 to 8 digits")
  const partial = bin + randomDigits(PAN_LENGTH - 1 - bin.length)
  return partial + luhnCheckDigit(partial)
}

/** A new 3-digit verification code. */
export const generateCvv = (): string => randomDigits(CVV_LENGTH)

/** Expiry month and year, EXPIRY_YEARS after the given instant (UTC). */
export const expiryFrom = (nowMs: number): { readonly exp_month: number; readonly exp_year: number } => {
  const now = new Date(nowMs)
  return { exp_month: now.getUTCMonth() + 1, exp_year: now.getUTCFullYear() + EXPIRY_YEARS }
}

/**
 * The expiry of a replacement card: EXPIRY_YEARS out, and always after the card's current expiry
 * (a card reissued in the month it was issued still gets a new expiry: the next month).
 */
export const replacementExpiry = (
  nowMs: number,
  current: { readonly exp_month: number; readonly exp_year: number }
): { readonly exp_month: number; readonly exp_year: number } => {
  const fresh = expiryFrom(nowMs)
  if (fresh.exp_year * 12 + fresh.exp_month > current.exp_year * 12 + current.exp_month) return fresh
  const next = current.exp_year * 12 + (current.exp_month - 1) + 1
  return { exp_month: (next % 12) + 1, exp_year: Math.floor(next / 12) }
}

/** A number as typed by a person (spaces and dashes allowed) in canonical digit form, or undefined. */
export const normalizePan = (text: string): string | undefined => {
  const digits = text.replace(/[\s-]/g, "")
  return /^\d{12,19}$/.test(digits) ? digits : undefined
}
