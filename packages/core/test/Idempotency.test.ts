import { SqlError } from "@effect/sql/SqlError"
import { describe, expect, it } from "@effect/vitest"
import { type Context, Effect, Layer } from "effect"
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
    complete: (_organization, key, _token, response) =>
      guard(() => {
        claims.set(key, { status: response.status })
        return true
      }),
    renew: () => guard(() => undefined),
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
      expect(retried).toEqual({ _tag: "Ran", response: "ran" })
    }).pipe(Effect.provide(layer))
  })
})

describe("Idempotency claims (docs/api.md#idempotency)", () => {
  /** A store whose claims always succeed and whose `complete` reports the claim as taken over. */
  const takenOverStore = () => {
    const state = { completes: 0, renewals: [] as Array<ReadonlyArray<string>> }
    const store = IdempotencyStore.of({
      claim: () => Effect.succeed<Claim>({ _tag: "Claimed" }),
      complete: () =>
        Effect.sync(() => {
          state.completes += 1
          return false
        }),
      renew: (claims) => Effect.sync(() => void state.renewals.push(claims.map((claim) => claim.key))),
      release: () => Effect.void,
      purge: () => Effect.succeed(0)
    })
    return { store, state }
  }
  const layerOf = (store: Context.Tag.Service<typeof IdempotencyStore>, rolledBack: Array<unknown>) =>
    Idempotency.Default.pipe(
      Layer.provide(
        Layer.mergeAll(
          Layer.succeed(IdempotencyStore, store),
          // The write's transaction: records what it was rolled back with.
          Layer.succeed(Transactor, {
            withTransaction: (effect) => Effect.tapError(effect, (error) => Effect.sync(() => rolledBack.push(error)))
          }),
          Vault.layer([Buffer.alloc(32, 3)])
        )
      )
    )

  it.live("a request whose claim was taken over while it ran rolls its writes back and answers 409", () => {
    const { store } = takenOverStore()
    const rolledBack: Array<unknown> = []
    return Effect.gen(function* () {
      const idempotency = yield* Idempotency
      const error = yield* Effect.flip(
        idempotency.run("org", "key", ["POST", "/v1/transfers", "body"], Effect.succeed("wrote"), () =>
          Effect.succeed({ status: 200, body: "{}" })
        )
      )
      expect(error).toMatchObject({ _tag: "Conflict", param: "Idempotency-Key" })
      expect(rolledBack).toHaveLength(1)
    }).pipe(Effect.provide(layerOf(store, rolledBack)))
  })

  it.live("renews the claim of a request while it runs, and stops once it ends", () => {
    const { store, state } = takenOverStore()
    return Effect.gen(function* () {
      const idempotency = yield* Idempotency
      yield* Effect.flip(
        idempotency.run("org", "slow-key", ["POST", "/v1/transfers", "body"], Effect.as(Effect.sleep("2500 millis"), "wrote"), () =>
          Effect.succeed({ status: 200, body: "{}" })
        )
      )
      const renewedWhileRunning = state.renewals.length
      expect(renewedWhileRunning).toBeGreaterThanOrEqual(1)
      expect(state.renewals.every((keys) => keys.length === 1 && keys[0] === "slow-key")).toBe(true)
      yield* Effect.sleep("1500 millis")
      expect(state.renewals.length).toBe(renewedWhileRunning)
    }).pipe(Effect.provide(layerOf(store, [])))
  })
})
