import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { newId } from "../platform/Ids.js"
import { IdempotencyStore } from "../idempotency/IdempotencyStore.js"
import type { ClaimRequest } from "../idempotency/IdempotencyStore.js"
import { Transactor } from "../sql/Transactor.js"
import type { PortContract } from "./Contract.js"

const HOUR_MS = 3_600_000

const iso = (ms: number) => new Date(ms).toISOString()

/** The lease the contract's claims are made with. */
const LEASE_MS = 4_000

/** A claim at `nowMs` under a token of its own, with a 4 s lease and 24 h retention (or `retentionMs`). */
const claimAt = (
  organizationId: string,
  key: string,
  fingerprint: string,
  nowMs: number,
  olderFingerprints: ReadonlyArray<string> = [],
  token: string = newId(),
  retentionMs: number = 24 * HOUR_MS
): ClaimRequest => ({
  organizationId,
  key,
  fingerprint,
  olderFingerprints,
  now: new Date(nowMs).toISOString(),
  token,
  staleBefore: new Date(nowMs - LEASE_MS).toISOString(),
  expiresAt: new Date(nowMs + retentionMs).toISOString(),
  expiredBefore: new Date(nowMs - 24 * HOUR_MS).toISOString()
})

/** Contract of the IdempotencyStore port (docs/api.md#idempotency). */
export const idempotencyContract: PortContract = (name, store) =>
  layer(store, { excludeTestServices: true })(name, (it) => {
    it.effect("claims a new key, then reports it running, mismatched, and finally replays it", () =>
      Effect.gen(function* () {
        const keys = yield* IdempotencyStore
        const org = newId()
        const key = newId()
        const now = Date.now()
        const first = claimAt(org, key, "fp-a", now)
        expect(yield* keys.claim(first)).toEqual({ _tag: "Claimed" })
        expect(yield* keys.claim(claimAt(org, key, "fp-a", now + 10))).toEqual({ _tag: "InProgress" })
        expect(yield* keys.claim(claimAt(org, key, "fp-b", now + 10))).toEqual({ _tag: "Mismatch" })
        expect(yield* keys.complete(org, key, first.token, { status: 201, sealedBody: "sealed-body" })).toBe(true)
        expect(yield* keys.claim(claimAt(org, key, "fp-a", now + 20))).toEqual({
          _tag: "Replay",
          response: { status: 201, sealedBody: "sealed-body" }
        })
        expect(yield* keys.claim(claimAt(org, key, "fp-b", now + 20))).toEqual({ _tag: "Mismatch" })
      })
    )

    it.effect("a record stored under an older vault key's fingerprint is the same request", () =>
      Effect.gen(function* () {
        const keys = yield* IdempotencyStore
        const org = newId()
        const key = newId()
        const now = Date.now()
        const old = claimAt(org, key, "fp-old", now)
        expect(yield* keys.claim(old)).toEqual({ _tag: "Claimed" })
        yield* keys.complete(org, key, old.token, { status: 200, sealedBody: "sealed" })
        // After a rotation the request's current fingerprint differs; its older one matches.
        expect(yield* keys.claim(claimAt(org, key, "fp-new", now + 10, ["fp-old"]))).toEqual({
          _tag: "Replay",
          response: { status: 200, sealedBody: "sealed" }
        })
        expect(yield* keys.claim(claimAt(org, key, "fp-new", now + 10, ["fp-other"]))).toEqual({ _tag: "Mismatch" })
      })
    )

    it.effect("scopes keys per organization", () =>
      Effect.gen(function* () {
        const keys = yield* IdempotencyStore
        const key = newId()
        const now = Date.now()
        expect(yield* keys.claim(claimAt(newId(), key, "fp", now))).toEqual({ _tag: "Claimed" })
        expect(yield* keys.claim(claimAt(newId(), key, "other", now))).toEqual({ _tag: "Claimed" })
      })
    )

    it.effect("releases an unfinished claim but never a completed one", () =>
      Effect.gen(function* () {
        const keys = yield* IdempotencyStore
        const org = newId()
        const key = newId()
        const now = Date.now()
        const first = claimAt(org, key, "fp-a", now)
        yield* keys.claim(first)
        yield* keys.release(org, key, first.token)
        // Released: the key is free again, even for a different request.
        const second = claimAt(org, key, "fp-b", now)
        expect(yield* keys.claim(second)).toEqual({ _tag: "Claimed" })
        yield* keys.complete(org, key, second.token, { status: 200, sealedBody: "kept" })
        yield* keys.release(org, key, second.token)
        expect((yield* keys.claim(claimAt(org, key, "fp-b", now)))._tag).toBe("Replay")
      })
    )

    it.effect("lets a retry take over a claim whose lease ran out, exactly once", () =>
      Effect.gen(function* () {
        const keys = yield* IdempotencyStore
        const org = newId()
        const key = newId()
        const now = Date.now()
        const first = claimAt(org, key, "fp", now)
        yield* keys.claim(first)
        const later = now + LEASE_MS + 1
        const requests = Array.from({ length: 4 }, () => claimAt(org, key, "fp", later))
        const takeovers = yield* Effect.all(
          requests.map((request) => keys.claim(request)),
          { concurrency: "unbounded" }
        )
        expect(takeovers.filter((claim) => claim._tag === "Claimed")).toHaveLength(1)
        expect(takeovers.filter((claim) => claim._tag === "InProgress")).toHaveLength(3)
        const winner = requests[takeovers.findIndex((claim) => claim._tag === "Claimed")]!
        // The first request's late release and late response name its own claim: the takeover keeps the key.
        yield* keys.release(org, key, first.token)
        expect(yield* keys.complete(org, key, first.token, { status: 201, sealedBody: "late" })).toBe(false)
        expect(yield* keys.claim(claimAt(org, key, "fp", later + 1))).toEqual({ _tag: "InProgress" })
        yield* keys.release(org, key, winner.token)
        expect(yield* keys.claim(claimAt(org, key, "fp", later + 2))).toEqual({ _tag: "Claimed" })
      })
    )

    it.effect("keeps a renewed claim from a takeover, and renews only the claims still held under their token", () =>
      Effect.gen(function* () {
        const keys = yield* IdempotencyStore
        const org = newId()
        const [renewedKey, lostKey] = [newId(), newId()]
        const now = Date.now()
        const renewed = claimAt(org, renewedKey, "fp", now)
        const lost = claimAt(org, lostKey, "fp", now)
        yield* keys.claim(renewed)
        yield* keys.claim(lost)
        // `lost` ran out and a retry took it over; then the first holder's heartbeat renews both.
        const retry = claimAt(org, lostKey, "fp", now + LEASE_MS + 1)
        expect(yield* keys.claim(retry)).toEqual({ _tag: "Claimed" })
        yield* keys.renew(
          [renewed, lost].map((claim) => ({ organizationId: org, key: claim.key, token: claim.token })),
          iso(now + LEASE_MS + 2)
        )
        // Renewed: still running one lease after its claim. The retry's claim kept its own lock time.
        expect(yield* keys.claim(claimAt(org, renewedKey, "fp", now + LEASE_MS + 3))).toEqual({ _tag: "InProgress" })
        expect(yield* keys.claim(claimAt(org, lostKey, "fp", now + 2 * LEASE_MS + 2))).toEqual({ _tag: "Claimed" })
        expect(yield* keys.complete(org, lostKey, retry.token, { status: 200, sealedBody: "x" })).toBe(false)
        expect(yield* keys.complete(org, renewedKey, renewed.token, { status: 200, sealedBody: "kept" })).toBe(true)
      })
    )

    it.effect("grants a key to exactly one of many concurrent first requests", () =>
      Effect.gen(function* () {
        const keys = yield* IdempotencyStore
        const org = newId()
        const key = newId()
        const now = Date.now()
        const claims = yield* Effect.all(
          Array.from({ length: 6 }, () => keys.claim(claimAt(org, key, "fp", now))),
          { concurrency: "unbounded" }
        )
        expect(claims.filter((claim) => claim._tag === "Claimed")).toHaveLength(1)
      })
    )

    it.effect("treats a key past retention as new, and purges expired keys", () =>
      Effect.gen(function* () {
        const keys = yield* IdempotencyStore
        const org = newId()
        const key = newId()
        const old = Date.now() - 25 * HOUR_MS
        const oldClaim = claimAt(org, key, "fp-old", old)
        yield* keys.claim(oldClaim)
        yield* keys.complete(org, key, oldClaim.token, { status: 201, sealedBody: "old" })
        expect(yield* keys.claim(claimAt(org, key, "fp-new", Date.now()))).toEqual({ _tag: "Claimed" })

        const stale = newId()
        yield* keys.claim(claimAt(org, stale, "fp", old))
        const fresh = newId()
        yield* keys.claim(claimAt(org, fresh, "fp", Date.now()))
        const purged = yield* keys.purge(new Date().toISOString(), new Date(Date.now() - 24 * HOUR_MS).toISOString())
        expect(purged).toBeGreaterThanOrEqual(1)
        expect(yield* keys.claim(claimAt(org, stale, "other", Date.now()))).toEqual({ _tag: "Claimed" })
        expect(yield* keys.claim(claimAt(org, fresh, "fp", Date.now()))).toEqual({ _tag: "InProgress" })
      })
    )

    it.effect("keeps a record for its own retention: a 35-day one outlives the 24 h ones", () =>
      Effect.gen(function* () {
        const keys = yield* IdempotencyStore
        const org = newId()
        const key = newId()
        const old = Date.now() - 25 * HOUR_MS
        const long = claimAt(org, key, "fp", old, [], newId(), 35 * 24 * HOUR_MS)
        yield* keys.claim(long)
        yield* keys.complete(org, key, long.token, { status: 200, sealedBody: "kept" })
        yield* keys.purge(new Date().toISOString(), new Date(Date.now() - 24 * HOUR_MS).toISOString())
        expect(yield* keys.claim(claimAt(org, key, "fp", Date.now()))).toEqual({
          _tag: "Replay",
          response: { status: 200, sealedBody: "kept" }
        })
        // Past its own end it is absent, whatever the 24 h cut says.
        expect(yield* keys.claim(claimAt(org, key, "other", old + 35 * 24 * HOUR_MS))).toEqual({ _tag: "Claimed" })
      })
    )

    it.effect("stores a response only when the write's transaction commits", () =>
      Effect.gen(function* () {
        const keys = yield* IdempotencyStore
        const transactor = yield* Transactor
        const org = newId()
        const key = newId()
        const now = Date.now()
        const first = claimAt(org, key, "fp", now)
        yield* keys.claim(first)
        yield* Effect.flip(
          transactor.withTransaction(
            Effect.zipRight(keys.complete(org, key, first.token, { status: 201, sealedBody: "lost" }), Effect.fail("boom" as const))
          )
        )
        expect(yield* keys.claim(claimAt(org, key, "fp", now + 1))).toEqual({ _tag: "InProgress" })
        expect(yield* transactor.withTransaction(keys.complete(org, key, first.token, { status: 201, sealedBody: "kept" }))).toBe(true)
        expect(yield* keys.claim(claimAt(org, key, "fp", now + 2))).toEqual({
          _tag: "Replay",
          response: { status: 201, sealedBody: "kept" }
        })
      })
    )
  })
