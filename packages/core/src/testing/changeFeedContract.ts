import { expect, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { ChangeFeed } from "../changes/ChangeFeed.js"
import { makeVersionedCache } from "../changes/VersionedCache.js"
import { Transactor } from "../sql/Transactor.js"
import type { PortContract } from "./Contract.js"

const committed = Effect.flatMap(ChangeFeed, (feed) => feed.committed)
const asNumber = (version: Option.Option<string>) => Number(Option.getOrThrow(version))

/** Contract of the ChangeFeed port: publishes are part of their transaction, versions only grow. */
export const changeFeedContract: PortContract = (name, store) =>
  layer(store, { excludeTestServices: true })(name, (it) => {
    it.effect("a committed publish moves the committed version forward by one", () =>
      Effect.gen(function* () {
        const feed = yield* ChangeFeed
        const transactor = yield* Transactor
        const before = asNumber(yield* committed)
        yield* transactor.withTransaction(feed.publish("card", "a"))
        expect(asNumber(yield* committed)).toBe(before + 1)
      })
    )

    it.effect("a publish rolled back with its transaction moves nothing", () =>
      Effect.gen(function* () {
        const feed = yield* ChangeFeed
        const transactor = yield* Transactor
        const before = asNumber(yield* committed)
        const error = yield* Effect.flip(
          transactor.withTransaction(Effect.zipRight(feed.publish("api_key", "k"), Effect.fail("abort" as const)))
        )
        expect(error).toBe("abort")
        expect(asNumber(yield* committed)).toBe(before)
      })
    )

    it.effect("gives no version inside a transaction, so nothing read there is cached", () =>
      Effect.gen(function* () {
        const feed = yield* ChangeFeed
        const transactor = yield* Transactor
        expect(Option.isNone(yield* transactor.withTransaction(feed.version))).toBe(true)
      })
    )

    it.effect("a cache entry filled before a publish is not served after it, once the feed has the version", () =>
      Effect.gen(function* () {
        const feed = yield* ChangeFeed
        const transactor = yield* Transactor
        const cache = makeVersionedCache<string>({ maxEntries: 10, maxAgeMs: 60_000 })
        // PostgreSQL's listener connects in the background: wait until it gives a version.
        let version = yield* feed.version
        for (let attempt = 0; attempt < 100 && Option.isNone(version); attempt++) {
          yield* Effect.sleep("50 millis")
          version = yield* feed.version
        }
        expect(Option.isSome(version)).toBe(true)
        cache.set("card", "ACTIVE", version, 0)
        expect(cache.get("card", yield* feed.version, 1)).toBe("ACTIVE")
        yield* transactor.withTransaction(feed.publish("card", "c"))
        // The publishing node never serves the old entry again (PostgreSQL: no version until notified back).
        expect(cache.get("card", yield* feed.version, 2)).toBeUndefined()
        expect(cache.get("card", yield* feed.committed, 2)).toBeUndefined()
      })
    )
  })
