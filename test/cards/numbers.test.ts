import {
  controlDecline,
  expiryFrom,
  generatePan,
  isLuhnValid,
  luhnCheckDigit,
  normalizePan,
  replacementExpiry,
  windowStart
} from "@issuing/core"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { luhnValid } from "./helpers.js"

describe("card numbers", () => {
  it("gives a replacement card an expiry later than the card it replaces", () => {
    const at = Date.UTC(2026, 10, 22)
    expect(replacementExpiry(at, { exp_month: 11, exp_year: 2029 })).toEqual({ exp_month: 12, exp_year: 2029 })
    expect(replacementExpiry(at, { exp_month: 12, exp_year: 2029 })).toEqual({ exp_month: 1, exp_year: 2030 })
    expect(replacementExpiry(at, { exp_month: 3, exp_year: 2027 })).toEqual({ exp_month: 11, exp_year: 2029 })
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 4_000_000_000_000 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1970, max: 2200 }),
        (ms, month, year) => {
          const next = replacementExpiry(ms, { exp_month: month, exp_year: year })
          return next.exp_month >= 1 && next.exp_month <= 12 && next.exp_year * 12 + next.exp_month > year * 12 + month
        }
      )
    )
  })

  it("computes the Luhn check digit of known numbers", () => {
    expect(luhnCheckDigit("7992739871")).toBe("3")
    expect(isLuhnValid("4111111111111111")).toBe(true)
    expect(isLuhnValid("4111111111111112")).toBe(false)
    expect(isLuhnValid("79927398713")).toBe(true)
  })

  it("generates 16-digit Luhn-valid numbers under any 6 to 8 digit BIN", () => {
    fc.assert(
      fc.property(fc.stringMatching(/^\d{6,8}$/), (bin) => {
        const pan = generatePan(bin)
        return pan.length === 16 && pan.startsWith(bin) && luhnValid(pan) && isLuhnValid(pan)
      }),
      { numRuns: 300 }
    )
  })

  it("detects every single-digit error", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 15 }), fc.integer({ min: 1, max: 9 }), (position, delta) => {
        const pan = generatePan("400000")
        const changed = pan.slice(0, position) + String((Number(pan[position]) + delta) % 10) + pan.slice(position + 1)
        return !isLuhnValid(changed)
      })
    )
  })

  it("normalizes typed numbers and rejects others", () => {
    expect(normalizePan("4000 0012-3456 7899")).toBe("4000001234567899")
    expect(normalizePan("4000a01234567899")).toBeUndefined()
    expect(normalizePan("12345")).toBeUndefined()
  })

  it("expires three years out, same month, in UTC", () => {
    expect(expiryFrom(Date.UTC(2026, 11, 31, 23, 59))).toEqual({ exp_month: 12, exp_year: 2029 })
    expect(expiryFrom(Date.UTC(2027, 0, 1, 0, 0))).toEqual({ exp_month: 1, exp_year: 2030 })
  })
})

describe("spending windows (UTC)", () => {
  const at = (iso: string) => Date.parse(iso)
  it("start at the UTC day, ISO week (Monday), month and year", () => {
    // Sunday 2026-11-22 23:30 UTC belongs to the week starting Monday 2026-11-16.
    const now = at("2026-11-22T23:30:00.000Z")
    expect(windowStart("DAILY", now)?.toISOString()).toBe("2026-11-22T00:00:00.000Z")
    expect(windowStart("WEEKLY", now)?.toISOString()).toBe("2026-11-16T00:00:00.000Z")
    expect(windowStart("WEEKLY", at("2026-11-23T00:00:00.000Z"))?.toISOString()).toBe("2026-11-23T00:00:00.000Z")
    expect(windowStart("WEEKLY", at("2027-01-01T12:00:00.000Z"))?.toISOString()).toBe("2026-12-28T00:00:00.000Z")
    expect(windowStart("MONTHLY", now)?.toISOString()).toBe("2026-11-01T00:00:00.000Z")
    expect(windowStart("YEARLY", now)?.toISOString()).toBe("2026-01-01T00:00:00.000Z")
    expect(windowStart("ALL_TIME", now)).toBeNull()
    expect(windowStart("PER_TRANSACTION", now)).toBeNull()
  })

  it("always contains now and starts on a Monday for weeks", () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2100, 0, 1) }), (now) => {
        for (const interval of ["DAILY", "WEEKLY", "MONTHLY", "YEARLY"] as const) {
          const start = windowStart(interval, now)!
          if (start.getTime() > now || now - start.getTime() >= 366 * 86_400_000) return false
        }
        const week = windowStart("WEEKLY", now)!
        return week.getUTCDay() === 1 && now - week.getTime() < 7 * 86_400_000
      })
    )
  })
})

describe("control declines", () => {
  const card = (overrides: Record<string, unknown>) =>
    ({
      state: "ACTIVE",
      allowed_mcc_codes: [],
      blocked_mcc_codes: [],
      allowed_merchant_countries: [],
      blocked_merchant_countries: [],
      ...overrides
    }) as any
  it("checks state first, then the block list, then the allow list", () => {
    expect(controlDecline(card({ state: "CLOSED", blocked_mcc_codes: ["5411"] }), "5411")).toBe("CARD_CLOSED")
    expect(controlDecline(card({ state: "FROZEN" }), "5411")).toBe("CARD_FROZEN")
    expect(controlDecline(card({ blocked_mcc_codes: ["5411"], allowed_mcc_codes: ["5812"] }), "5411")).toBe("MCC_BLOCKED")
    expect(controlDecline(card({ allowed_mcc_codes: ["5812"] }), "5411")).toBe("MCC_NOT_ALLOWED")
    expect(controlDecline(card({ allowed_mcc_codes: ["5812"] }), "5812")).toBeNull()
    expect(controlDecline(card({}), "0001")).toBeNull()
    expect(controlDecline(card({ blocked_merchant_countries: ["FR"] }), "5411", "FR")).toBe("MERCHANT_COUNTRY_NOT_ALLOWED")
    expect(controlDecline(card({ allowed_merchant_countries: ["US"] }), "5411", null)).toBe("MERCHANT_COUNTRY_NOT_ALLOWED")
    expect(controlDecline(card({ allowed_merchant_countries: ["US"] }), "5411", "US")).toBeNull()
    expect(controlDecline(card({ state: "FROZEN", blocked_merchant_countries: ["FR"] }), "5411", "FR")).toBe("CARD_FROZEN")
  })
})
