import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Option, Queue, Schedule, Stream } from "effect"
import { awaitSuspended } from "../src/testing/Fixtures.js"
import { makeWorkSignal } from "../src/webhooks/WorkSignal.js"

/** Fails the test instead of hanging when a wait is not ended in time. */
const within = <A, E>(effect: Effect.Effect<A, E>, what: string) =>
  effect.pipe(Effect.timeoutFail({ duration: "2 seconds", onTimeout: () => new Error(`${what} did not end`) }))

describe("WorkSignal", () => {
  it.live("one ring ends every wait it finds, and only those", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const signal = yield* makeWorkSignal(Option.none())
        const waits = yield* Effect.forEach([1, 2, 3], () => Effect.fork(signal.wait(60_000)))
        // All three are parked in their wait before the ring (a ring before them would be kept for one).
        yield* Effect.forEach(waits, awaitSuspended)
        yield* signal.ring
        yield* within(Fiber.joinAll(waits), "a woken wait")
        // The ring was taken by the waits it ended: the next wait runs until its own time.
        const started = Date.now()
        yield* within(signal.wait(100), "an unrung wait")
        expect(Date.now() - started).toBeGreaterThanOrEqual(90)
      })
    )
  )

  it.live("tells a ring whether a worker was waiting for it", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const signal = yield* makeWorkSignal(Option.none())
        expect(yield* signal.ringWaiting).toBe(false)
        // That ring was kept: this wait ends at once, and no one waits any more.
        yield* within(signal.wait(60_000), "a wait after a ring")
        const waiting = yield* Effect.fork(signal.wait(60_000))
        yield* awaitSuspended(waiting)
        expect(yield* signal.ringWaiting).toBe(true)
        yield* within(Fiber.join(waiting), "a woken wait")
        // A wait that ended by its time (or was interrupted) is not counted as waiting.
        yield* signal.wait(10)
        const interrupted = yield* Effect.fork(signal.wait(60_000))
        yield* awaitSuspended(interrupted)
        yield* Fiber.interrupt(interrupted)
        expect(yield* signal.ringWaiting).toBe(false)
      })
    )
  )

  it.live("keeps a ring nobody waited for, once", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const signal = yield* makeWorkSignal(Option.none())
        yield* signal.ring
        yield* signal.ring
        yield* within(signal.wait(60_000), "a wait after a ring")
        const started = Date.now()
        yield* signal.wait(100)
        expect(Date.now() - started).toBeGreaterThanOrEqual(90)
      })
    )
  )

  it.live("rings on every notification, and listens again after the stream fails", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const notifications = yield* Queue.unbounded<"notify" | "fail">()
        let connections = 0
        const stream = Stream.suspend(() => {
          connections++
          return Stream.fromQueue(notifications).pipe(
            Stream.mapEffect((item) => (item === "fail" ? Effect.fail("connection lost") : Effect.succeed(item)))
          )
        })
        const signal = yield* makeWorkSignal(Option.some(stream))
        // Nobody listens before the first wait.
        expect(connections).toBe(0)
        const first = yield* Effect.fork(signal.wait(60_000))
        yield* awaitSuspended(first)
        yield* notifications.offer("notify")
        yield* within(Fiber.join(first), "a wait woken by a notification")
        expect(connections).toBe(1)
        yield* notifications.offer("fail")
        // The listener comes back a second later (however long the machine takes to run it) and the
        // notifications ring again.
        yield* Effect.repeat(
          Effect.sync(() => connections),
          { until: (n) => n >= 2, schedule: Schedule.spaced("20 millis") }
        ).pipe(Effect.timeoutFail({ duration: "20 seconds", onTimeout: () => new Error("the listener never came back") }))
        expect(connections).toBe(2)
        const second = yield* Effect.fork(signal.wait(60_000))
        yield* notifications.offer("notify")
        yield* within(Fiber.join(second), "a wait woken after the listener restarted")
      })
    )
  )
})
