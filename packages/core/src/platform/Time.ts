import { Clock, Context, Effect } from "effect"

/**
 * The current time as an RFC 3339 UTC string, read from the Effect clock: the fiber's own (a
 * test's TestClock, `createIssuing`'s offset clock), as `Clock.currentTimeMillis` reads it, in one
 * step where mapping that takes two more fiber operations (docs/decisions.md#the-cost-of-a-request-on-the-api-node).
 */
export const nowIso: Effect.Effect<string> = Effect.withFiberRuntime((fiber) =>
  Effect.succeed(new Date(Context.get(fiber.currentDefaultServices, Clock.Clock).unsafeCurrentTimeMillis()).toISOString())
)

/** The current time in milliseconds since the epoch, read from the Effect clock. */
export const nowMs: Effect.Effect<number> = Clock.currentTimeMillis

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/

/**
 * Parses an RFC 3339 timestamp to epoch milliseconds. Sub-millisecond digits round toward the
 * inside of the window (`begin` up, `end` down), since event times are stored to the millisecond.
 */
export const parseWindowBound = (text: string, bound: "begin" | "end"): number | undefined => {
  const match = RFC3339.exec(text.trim())
  if (match === null) return undefined
  const [, year, month, day, hour, minute, second, fraction = "", zone] = match
  if (Number(month) < 1 || Number(month) > 12 || Number(day) < 1 || Number(day) > 31) return undefined
  if (Number(hour) > 23 || Number(minute) > 59 || Number(second) > 60) return undefined
  // A leap second (:60) is the instant the next minute starts; Date.parse refuses it.
  const leap = Number(second) === 60 ? 1000 : 0
  const parsed = Date.parse(`${year}-${month}-${day}T${hour}:${minute}:${leap ? "59" : second}${zone!.toUpperCase()}`)
  if (Number.isNaN(parsed)) return undefined
  const whole = parsed + leap
  const check = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)))
  if (check.getUTCDate() !== Number(day)) return undefined
  const digits = fraction.slice(1)
  const millis = Number(digits.slice(0, 3).padEnd(3, "0"))
  const remainder = /[1-9]/.test(digits.slice(3)) ? 1 : 0
  return whole + millis + (bound === "begin" ? remainder : 0)
}
