import { Clock, Effect } from "effect"

/** The current time as an RFC 3339 UTC string, read from the Effect clock. */
export const nowIso: Effect.Effect<string> = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString())

/** The current time in milliseconds since the epoch, read from the Effect clock. */
export const nowMs: Effect.Effect<number> = Clock.currentTimeMillis
