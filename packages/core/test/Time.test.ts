import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { nowIso, nowMs } from "../src/platform/Time.js"

// The platform's clock is the fiber's: tests and `createIssuing`'s clock offset move it.
describe("nowIso and nowMs", () => {
  it.effect("read the fiber's clock", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(Date.UTC(2031, 4, 6, 7, 8, 9, 123))
      expect(yield* nowIso).toBe("2031-05-06T07:08:09.123Z")
      expect(yield* nowMs).toBe(Date.UTC(2031, 4, 6, 7, 8, 9, 123))
    })
  )
})
