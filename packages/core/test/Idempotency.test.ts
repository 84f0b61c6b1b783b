import { SqlError } from "@effect/sql/SqlError"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Idempotency } from "../src/idempotency/Idempotency.js"
import { type Claim, IdempotencyStore } from "../src/idempotency/IdempotencyStore.js"
import { Transactor } from "../src/sql/Transactor.js"
import { Vault } from "../src/vault/Vault.js"

/** An in-memory idempotency store whose database is "away" (every call fails) while `down` is true. */
const flakyStore = () => {
  const claims = new Map<string, { status: number | null }>()
  const state = { down: false, releases: 0 }
  const away = () => new SqlError({ cause: new Error("Connection terminated"), message: "Connection error" })
  const guard = <A>(f: () => A) => Effect.suspend(() => (state.down ? Effect.fail(away()) : Effect.sync(f)))
  const store = IdempotencyStore.of({
    claim: (request) =>
      guard((): Claim => {
        const held = claims.get(request.key)
        if (held === undefined) {
          claims.set(request.key, { status: null })
          return { _tag: "Claimed" }
        }
        return held.status === null ? { _tag: "InProgress" } : { _tag: "Replay", response: { status: held.status, sealedBody: "" } }
      }),
    complete: (_organization, key, response) => guard(() => void claims.set(key, { status: response.status })),
    release: (_organization, key) =>
      guard(() => {
        state.releases += 1
        claims.delete(key)
      }),
    purge: () => guard(() => 0)
  })
  return { store, state }
}

describe("Idempotency", () => {
  it.live("a request that failed while the database was away releases its key once the database is back", () => {
    const { store, state } = flakyStore()
    const layer = Idempotency.Default.pipe(
      Layer.provide(
        Layer.mergeAll(
          Layer.succeed(IdempotencyStore, store),
          Layer.succeed(Transactor, { withTransaction: (effect) => effect }),
          Vault.layer([Buffer.alloc(32, 3)])
        )
      )
    )
    return Effect.gen(function* () {
      const idempotency = yield* Idempotency
      const run = idempotency.run(
        "org",
        "key",
        ["POST", "/v1/transfers", "body"],
        // The request's work fails because the database went away meanwhile: its release fails too.
        Effect.suspend(() => {
          state.down = true
          return Effect.fail("database away")
        }),
        () => Effect.succeed({ status: 200, body: "{}" })
      )
      expect(yield* Effect.flip(run)).toBe("database away")
      expect(state.releases).toBe(0)
      // The database comes back: the key is let go in the background, and a retry with it runs.
      state.down = false
      for (let i = 0; i < 100 && state.releases === 0; i++) yield* Effect.sleep("20 millis")
      expect(state.releases).toBe(1)
      const retried = yield* idempotency.run("org", "key", ["POST", "/v1/transfers", "body"], Effect.succeed("ran"), () =>
        Effect.succeed({ status: 200, body: "{}" })
      )
      expect(retried).toEqual({ response: "ran", replayed: false })
    }).pipe(Effect.provide(layer))
  })
})
