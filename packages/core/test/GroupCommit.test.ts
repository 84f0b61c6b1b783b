import { SqlError } from "@effect/sql/SqlError"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { makeGroupCommit } from "../src/sql/GroupCommit.js"
import { awaitSuspended } from "../src/testing/Fixtures.js"
import type { TransactorService } from "../src/sql/Transactor.js"

describe("group commit", () => {
  it.live("a transaction that never began fails every unit queued while it waited; later units run in the next", () =>
    Effect.scoped(
      Effect.gen(function* () {
        // A transactor whose first BEGIN waits for a lock another process holds, then gives up
        // (SQLITE_BUSY_TIMEOUT); the transactions after it begin at once.
        const waiting = yield* Deferred.make<void>()
        const giveUp = yield* Deferred.make<void>()
        let begun = 0
        const transactor: TransactorService = {
          withTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError, R> =>
            Effect.suspend((): Effect.Effect<A, E | SqlError, R> => {
              begun += 1
              if (begun > 1) return effect
              return Deferred.succeed(waiting, undefined).pipe(
                Effect.zipRight(Deferred.await(giveUp)),
                Effect.zipRight(Effect.fail(new SqlError({ cause: { code: "SQLITE_BUSY_TIMEOUT" }, message: "lock wait timed out" })))
              )
            })
        }
        const lane = yield* makeGroupCommit(transactor, 64, 1)
        const ran: Array<string> = []
        const unit = (name: string) => Effect.fork(Effect.either(lane.submit(Effect.sync(() => ran.push(name)))))
        const first = yield* unit("first")
        yield* Deferred.await(waiting)
        // Queued while the first batch waits for its BEGIN.
        const queued = yield* Effect.forEach(["a", "b", "c"], unit)
        yield* Effect.forEach(queued, awaitSuspended)
        yield* Deferred.succeed(giveUp, undefined)
        const outcomes = yield* Fiber.joinAll([first, ...queued])
        // All four got the failure at once, instead of each waiting for a lock as the next batch's first unit.
        expect(outcomes.map((outcome) => outcome._tag)).toEqual(["Left", "Left", "Left", "Left"])
        expect(ran).toEqual([])
        // The lane goes on: a unit submitted now runs.
        const later = yield* Fiber.join(yield* unit("later"))
        expect(later._tag).toBe("Right")
        expect(ran).toEqual(["later"])
      })
    )
  )
})
