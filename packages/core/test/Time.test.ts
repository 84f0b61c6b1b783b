import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect } from "effect"
import { nowIso, nowMs } from "../src/platform/Time.js"

const FIXED = Date.UTC(2031, 4, 6, 7, 8, 9, 123)

/**
 * A clock stopped at FIXED. Built here rather than taken from TestClock: the suite's forks share
 * one module graph (docs/testing.md), and another file's services can stand in for it there.
 */
const stopped: Clock.Clock = {
  [Clock.ClockTypeId]: Clock.ClockTypeId,
  unsafeCurrentTimeMillis: () => FIXED,
  currentTimeMillis: Effect.succeed(FIXED),
  unsafeCurrentTimeNanos: () => BigInt(FIXED) * 1_000_000n,
  currentTimeNanos: Effect.succeed(BigInt(FIXED) * 1_000_000n),
  sleep: () => Effect.void
}

// The platform's clock is the fiber's: tests and `createIssuing`'s clock offset move it.
describe("nowIso and nowMs", () => {
  it.effect("read the fiber's clock", () =>
    Effect.gen(function* () {
      expect(yield* nowIso).toBe("2031-05-06T07:08:09.123Z")
      expect(yield* nowMs).toBe(FIXED)
    }).pipe(Effect.withClock(stopped))
  )
})
