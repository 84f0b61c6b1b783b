import { Either } from "effect"
import { InvalidRequest } from "../platform/Errors.js"
import { SPENDING_INTERVALS, type SpendingInterval, type SpendingPeriod } from "./Records.js"

/** Largest number of merchant category codes in one allow or block list. */
export const MAX_MCC_CODES = 500
/** Largest spending limit, in minor units (10^15, far below 2^53). */
export const MAX_SPENDING_AMOUNT_MINOR = 1_000_000_000_000_000

/** Spend controls as the issuance body may carry them, camelCase and snake_case forms side by side. */
export interface SpendControlsInput {
  readonly allowedMccCodes?: ReadonlyArray<string> | null | undefined
  readonly allowed_mcc_codes?: ReadonlyArray<string> | null | undefined
  readonly blockedMccCodes?: ReadonlyArray<string> | null | undefined
  readonly blocked_mcc_codes?: ReadonlyArray<string> | null | undefined
  readonly spendingPeriod?: { readonly interval: string; readonly amount: number } | null | undefined
  readonly spending_period?: { readonly interval: string; readonly amount: number } | null | undefined
}

/** Validated spend controls of a card. */
export interface SpendControls {
  readonly allowed_mcc_codes: ReadonlyArray<string>
  readonly blocked_mcc_codes: ReadonlyArray<string>
  readonly spending_period: SpendingPeriod | null
}

/** The one value of a parameter given in camelCase and/or snake_case; both with different values is a 400. */
const oneOf = <A>(camel: A | undefined, snake: A | undefined, param: string, alias: string) => {
  if (camel !== undefined && snake !== undefined && JSON.stringify(camel) !== JSON.stringify(snake)) {
    return Either.left(
      new InvalidRequest({
        message: `Conflicting parameters: ${param} and ${alias} were both given with different values. Send one of them.`,
        param
      })
    )
  }
  return Either.right(camel ?? snake)
}

const mccList = (codes: ReadonlyArray<string> | null | undefined, param: string) => {
  if (codes === undefined || codes === null) return Either.right<ReadonlyArray<string>>([])
  if (codes.length > MAX_MCC_CODES) {
    return Either.left(new InvalidRequest({ message: `${param} may hold at most ${MAX_MCC_CODES} codes.`, param }))
  }
  const bad = codes.findIndex((code) => typeof code !== "string" || !/^\d{4}$/.test(code))
  if (bad >= 0) {
    // The offending value is not echoed: a caller may have pasted a card number into the list.
    return Either.left(
      new InvalidRequest({
        message: `${param} must hold merchant category codes as 4-digit strings (entry ${bad} is not).`,
        param
      })
    )
  }
  // Duplicates carry no meaning; keep each code once, in order, for stable responses.
  return Either.right<ReadonlyArray<string>>([...new Set(codes)].sort())
}

const period = (value: { readonly interval: string; readonly amount: number } | null | undefined, param: string) => {
  if (value === undefined || value === null) return Either.right<SpendingPeriod | null>(null)
  if (!SPENDING_INTERVALS.includes(value.interval as SpendingInterval)) {
    return Either.left(
      new InvalidRequest({
        message: `${param}.interval must be one of ${SPENDING_INTERVALS.join(", ")}.`,
        param: `${param}.interval`
      })
    )
  }
  if (!Number.isSafeInteger(value.amount) || value.amount <= 0 || value.amount > MAX_SPENDING_AMOUNT_MINOR) {
    return Either.left(
      new InvalidRequest({
        message: `${param}.amount must be a positive integer in minor units, at most ${MAX_SPENDING_AMOUNT_MINOR}.`,
        param: `${param}.amount`
      })
    )
  }
  return Either.right<SpendingPeriod | null>({ interval: value.interval as SpendingInterval, amount: value.amount })
}

/**
 * Validates issuance spend controls: aliases must agree, MCCs are 4-digit strings in bounded lists,
 * no code is both allowed and blocked, and a spending period has a known interval and a positive
 * integer amount. Failures name the camelCase parameter.
 */
export const parseSpendControls = (input: SpendControlsInput): Either.Either<SpendControls, InvalidRequest> =>
  Either.gen(function*() {
    const allowedRaw = yield* oneOf(input.allowedMccCodes, input.allowed_mcc_codes, "allowedMccCodes", "allowed_mcc_codes")
    const blockedRaw = yield* oneOf(input.blockedMccCodes, input.blocked_mcc_codes, "blockedMccCodes", "blocked_mcc_codes")
    const periodRaw = yield* oneOf(input.spendingPeriod, input.spending_period, "spendingPeriod", "spending_period")
    const allowed = yield* mccList(allowedRaw, "allowedMccCodes")
    const blocked = yield* mccList(blockedRaw, "blockedMccCodes")
    const both = allowed.filter((code) => blocked.includes(code))
    if (both.length > 0) {
      return yield* Either.left(
        new InvalidRequest({
          message: `A merchant category code cannot be both allowed and blocked (${both.slice(0, 5).join(", ")}).`,
          param: "blockedMccCodes"
        })
      )
    }
    const spending = yield* period(periodRaw, "spendingPeriod")
    return { allowed_mcc_codes: allowed, blocked_mcc_codes: blocked, spending_period: spending }
  })
