import { expect, layer, type Vitest } from "@effect/vitest"
import { Cause, Effect, Exit, Option } from "effect"
import { inKeyScope } from "../access/Access.js"
import { AccessStore } from "../access/AccessStore.js"
import type { ApiKeyOrderField } from "../access/OrderFields.js"
import type { KeyScope } from "../access/Records.js"
import { hashSecret } from "../access/Secrets.js"
import { newId } from "../platform/Ids.js"
import type { PageWindow } from "../platform/Paging.js"
import { isUniqueViolation, Transactor } from "../sql/Transactor.js"
import type { ContractStores, PortContract } from "./Contract.js"
import { freshOrganization, sampleApiKey, sampleProgram } from "./Fixtures.js"

/** The test registrar of a contract suite over a store layer (real clock). */
type It = Vitest.MethodsNonLive<ContractStores, true>

/** The scope of an unlimited admin key holding every right. */
const EVERY_KEY: KeyScope = { programIds: null, withoutRights: [] }

/** A window both lists accept (programs also sort by updated_at). */
const window = (overrides: Partial<PageWindow<ApiKeyOrderField>> = {}): PageWindow<ApiKeyOrderField> => ({
  orderBy: "created_at",
  descending: false,
  limit: 100,
  offset: 0,
  ...overrides
})

const findsProgramsWithinOrganization = (it: It) =>
  it.effect("stores a program and finds it only within its organization", () =>
    Effect.gen(function* () {
      const access = yield* AccessStore
      const { organization, program } = yield* freshOrganization
      const other = yield* freshOrganization
      expect(Option.getOrThrow(yield* access.findProgram(organization.id, program.id))).toEqual(program)
      expect(Option.isNone(yield* access.findProgram(other.organization.id, program.id))).toBe(true)
      expect(Option.isNone(yield* access.findProgram(organization.id, newId()))).toBe(true)
    })
  )

const listsProgramsInOrder = (it: It) =>
  it.effect("lists programs in order, limited to program ids, with ties broken on id", () =>
    Effect.gen(function* () {
      const access = yield* AccessStore
      const { organization, program: first } = yield* freshOrganization
      // Five programs with the very same created_at: only the id orders them.
      const sameInstant = new Date(Date.parse(first.created_at) + 1000).toISOString()
      const tied = Array.from({ length: 5 }, (_, index) =>
        sampleProgram(organization.id, { name: `P${index}`, created_at: sameInstant, updated_at: sameInstant })
      )
      for (const program of [...tied].reverse()) yield* access.insertProgram(program)

      const ascending = yield* access.listPrograms(organization.id, null, window())
      expect(ascending.total).toBe(6)
      expect(ascending.rows.map((row) => row.id)).toEqual([first.id, ...tied.map((p) => p.id).sort()])

      const descending = yield* access.listPrograms(organization.id, null, window({ descending: true }))
      expect(descending.rows.map((row) => row.id)).toEqual([...ascending.rows.map((row) => row.id)].reverse())

      // Pages of two partition the set: no overlap, nothing skipped.
      const seen: Array<string> = []
      for (let offset = 0; offset < 6; offset += 2) {
        const page = yield* access.listPrograms(organization.id, null, window({ limit: 2, offset }))
        expect(page.total).toBe(6)
        seen.push(...page.rows.map((row) => row.id))
      }
      expect(seen).toEqual(ascending.rows.map((row) => row.id))

      const byName = yield* access.listPrograms(organization.id, null, window({ orderBy: "name", descending: true }))
      expect(byName.rows.map((row) => row.name)).toEqual(["Program", "P4", "P3", "P2", "P1", "P0"])

      const limited = yield* access.listPrograms(organization.id, [tied[1]!.id, tied[3]!.id], window())
      expect(limited.total).toBe(2)
      expect(new Set(limited.rows.map((row) => row.id))).toEqual(new Set([tied[1]!.id, tied[3]!.id]))
      const none = yield* access.listPrograms(organization.id, [], window())
      expect(none).toEqual({ rows: [], total: 0 })

      expect(yield* access.countPrograms(organization.id, [first.id, tied[0]!.id, newId()])).toBe(2)
      expect(yield* access.countPrograms(organization.id, [])).toBe(0)
    })
  )

const refusesUnknownOrderField = (it: It) =>
  it.effect("an order field outside the list's table is a defect, not a sort on another column", () =>
    Effect.gen(function* () {
      const access = yield* AccessStore
      const { organization } = yield* freshOrganization
      // Only a cast gets such a window past the port's type; the store must not quietly sort by its first column.
      const unknown = window({ orderBy: "color" as ApiKeyOrderField })
      const exits: Array<Exit.Exit<unknown, unknown>> = [
        yield* Effect.exit(Effect.suspend(() => access.listPrograms(organization.id, null, unknown))),
        yield* Effect.exit(Effect.suspend(() => access.listApiKeys(organization.id, unknown, EVERY_KEY)))
      ]
      for (const exit of exits) {
        if (Exit.isSuccess(exit)) expect.fail("listed with an unknown order field")
        else {
          expect(Cause.isDie(exit.cause)).toBe(true)
          expect(Cause.pretty(exit.cause)).toContain("not one of this list's")
        }
      }
    })
  )

const keepsKeysBySecretHash = (it: It) =>
  it.effect("keeps API keys by secret hash, with their fields round-tripped", () =>
    Effect.gen(function* () {
      const access = yield* AccessStore
      const { organization, program } = yield* freshOrganization
      const limited = sampleApiKey(organization.id, {
        role: "viewer",
        program_ids: [program.id],
        pan_reveal: true,
        card_display: false
      })
      const open = sampleApiKey(organization.id, { role: "developer" })
      yield* access.insertApiKey(limited, hashSecret("secret-limited"))
      yield* access.insertApiKey(open, hashSecret("secret-open"))

      expect(Option.getOrThrow(yield* access.findActiveKeyByHash(hashSecret("secret-limited")))).toEqual(limited)
      expect(Option.getOrThrow(yield* access.findActiveKeyByHash(hashSecret("secret-open")))).toEqual(open)
      expect(Option.isNone(yield* access.findActiveKeyByHash(hashSecret("unknown")))).toBe(true)
      expect(Option.getOrThrow(yield* access.findApiKey(organization.id, open.id))).toEqual(open)
      expect(yield* access.countApiKeys).toBeGreaterThanOrEqual(2)
    })
  )

const revokesKeysOnce = (it: It) =>
  it.effect("revokes a key once, only within its organization, and forgets it for authentication", () =>
    Effect.gen(function* () {
      const access = yield* AccessStore
      const { organization } = yield* freshOrganization
      const other = yield* freshOrganization
      const key = sampleApiKey(organization.id)
      const kept = sampleApiKey(organization.id, { name: "Kept" })
      yield* access.insertApiKey(key, hashSecret(`revoke-${key.id}`))
      yield* access.insertApiKey(kept, hashSecret(`keep-${kept.id}`))

      expect(Option.isNone(yield* access.revokeApiKey(other.organization.id, key.id, new Date().toISOString()))).toBe(true)
      const at = new Date().toISOString()
      const revoked = Option.getOrThrow(yield* access.revokeApiKey(organization.id, key.id, at))
      expect(revoked.id).toBe(key.id)
      expect(revoked.revoked_at).toBe(at)
      expect(Option.isNone(yield* access.revokeApiKey(organization.id, key.id, at))).toBe(true)
      expect(Option.isNone(yield* access.findActiveKeyByHash(hashSecret(`revoke-${key.id}`)))).toBe(true)
      expect(Option.isNone(yield* access.findApiKey(organization.id, key.id))).toBe(true)

      const listed = yield* access.listApiKeys(organization.id, window(), EVERY_KEY)
      expect(listed.rows.map((row) => row.id)).toEqual([kept.id])
      expect(listed.total).toBe(1)
    })
  )

const listsKeysWithinScope = (it: It) =>
  it.effect("lists only the keys within a scope: programs a subset of its own, no right it lacks", () =>
    Effect.gen(function* () {
      const access = yield* AccessStore
      const { organization, program: a } = yield* freshOrganization
      const b = sampleProgram(organization.id)
      const c = sampleProgram(organization.id)
      yield* access.insertProgram(b)
      yield* access.insertProgram(c)
      const keys = {
        unlimited: sampleApiKey(organization.id),
        onA: sampleApiKey(organization.id, { program_ids: [a.id], card_display: false }),
        onAB: sampleApiKey(organization.id, { program_ids: [a.id, b.id], card_display: false }),
        onAC: sampleApiKey(organization.id, { program_ids: [a.id, c.id], card_display: false }),
        onAReveal: sampleApiKey(organization.id, { program_ids: [a.id], pan_reveal: true, card_display: false }),
        onADisplay: sampleApiKey(organization.id, { program_ids: [a.id], card_display: true })
      }
      for (const key of Object.values(keys)) yield* access.insertApiKey(key, hashSecret(`scope-${key.id}`))
      const ids = (rows: ReadonlyArray<{ readonly id: string }>) => rows.map((row) => row.id).sort()
      const within = (scope: KeyScope) =>
        Effect.map(access.listApiKeys(organization.id, window(), scope), ({ rows, total }) => {
          expect(total).toBe(rows.length)
          // The store's filter and the service's one-key rule agree.
          expect(ids(rows)).toEqual(ids(Object.values(keys).filter((key) => inKeyScope(scope, key))))
          return ids(rows)
        })
      expect(yield* within(EVERY_KEY)).toEqual(ids(Object.values(keys)))
      expect(yield* within({ programIds: [a.id, b.id], withoutRights: ["pan_reveal", "card_display"] })).toEqual(ids([keys.onA, keys.onAB]))
      expect(yield* within({ programIds: [a.id, b.id], withoutRights: ["pan_reveal"] })).toEqual(
        ids([keys.onA, keys.onAB, keys.onADisplay])
      )
      expect(yield* within({ programIds: [a.id, b.id, c.id], withoutRights: [] })).toEqual(
        ids(Object.values(keys).filter((key) => key !== keys.unlimited))
      )
      expect(yield* within({ programIds: null, withoutRights: ["card_display"] })).toEqual(
        ids([keys.onA, keys.onAB, keys.onAC, keys.onAReveal])
      )
      expect(yield* within({ programIds: [b.id], withoutRights: [] })).toEqual([])
      const page = yield* access.listApiKeys(organization.id, window({ limit: 1 }), { programIds: [a.id, b.id], withoutRights: [] })
      expect(page.rows).toHaveLength(1)
      expect(page.total).toBe(4)
    })
  )

const rejectsDuplicateSecretHash = (it: It) =>
  it.effect("rejects a second key with the same secret hash as a unique violation", () =>
    Effect.gen(function* () {
      const access = yield* AccessStore
      const { organization } = yield* freshOrganization
      const hash = hashSecret(`duplicate-${newId()}`)
      yield* access.insertApiKey(sampleApiKey(organization.id), hash)
      const error = yield* Effect.flip(access.insertApiKey(sampleApiKey(organization.id), hash))
      expect(isUniqueViolation(error)).toBe(true)
    })
  )

const keepsRateBuckets = (it: It) =>
  it.effect("creates a key's rate bucket once, then reads it as last written, per key", () =>
    Effect.gen(function* () {
      const access = yield* AccessStore
      const transactor = yield* Transactor
      const key = newId()
      const other = newId()
      const initial = { tokens: 20, refilledAtMs: 1_000, fullAtMs: 1_000 }
      expect(yield* transactor.withTransaction(access.lockRateBucket(key, initial))).toEqual(initial)
      // A second lock does not overwrite the row with its initial value.
      expect(yield* access.lockRateBucket(key, { tokens: 5, refilledAtMs: 9, fullAtMs: 9 })).toEqual(initial)
      const spent = { tokens: 17.25, refilledAtMs: 1_736_000_000_123, fullAtMs: 1_000 }
      yield* transactor.withTransaction(Effect.flatMap(access.lockRateBucket(key, initial), () => access.saveRateBucket(key, spent)))
      expect(yield* access.lockRateBucket(key, initial)).toEqual(spent)
      expect(yield* access.lockRateBucket(other, initial)).toEqual(initial)
    })
  )

const swapsRateBuckets = (it: It) =>
  it.effect("swaps a key's rate bucket only while its row holds exactly the expected bucket", () =>
    Effect.gen(function* () {
      const access = yield* AccessStore
      const key = newId()
      const initial = { tokens: 200, refilledAtMs: 1_736_000_000_000, fullAtMs: 1_736_000_000_000 }
      // No row yet: nothing to swap, nothing created.
      expect(yield* access.swapRateBucket(key, initial, { tokens: 1, refilledAtMs: 1, fullAtMs: 1 })).toBe(false)
      expect(yield* access.lockRateBucket(key, initial)).toEqual(initial)
      // A fraction as a refill leaves it, no short decimal: equal to what was written, exactly.
      const leased = { tokens: 179 + 1 / 3, refilledAtMs: 1_736_000_000_123, fullAtMs: 1_736_000_000_000 }
      expect(yield* access.swapRateBucket(key, initial, leased)).toBe(true)
      expect(yield* access.lockRateBucket(key, initial)).toEqual(leased)
      const next = { tokens: 161.5, refilledAtMs: 1_736_000_000_150, fullAtMs: 1_736_000_000_000 }
      // Another node's lease since: any field that differs refuses the swap and writes nothing.
      for (const stale of [
        initial,
        { ...leased, tokens: 179.333333333333 },
        { ...leased, refilledAtMs: 1_736_000_000_122 },
        { ...leased, fullAtMs: 1 }
      ]) {
        expect(yield* access.swapRateBucket(key, stale, next)).toBe(false)
      }
      expect(yield* access.lockRateBucket(key, initial)).toEqual(leased)
      expect(yield* access.swapRateBucket(key, leased, next)).toBe(true)
      expect(yield* access.lockRateBucket(key, initial)).toEqual(next)
    })
  )

const purgesIdleRateBuckets = (it: It) =>
  it.effect("purges the rate buckets last refilled before a time, and only those", () =>
    Effect.gen(function* () {
      const access = yield* AccessStore
      const idle = newId()
      const recent = newId()
      const initial = { tokens: 20, refilledAtMs: 1_000, fullAtMs: 1_000 }
      const spent = { tokens: 3, refilledAtMs: 5_000, fullAtMs: 1_000 }
      yield* access.lockRateBucket(idle, { tokens: 4, refilledAtMs: 1_500, fullAtMs: 1_000 })
      yield* Effect.flatMap(access.lockRateBucket(recent, initial), () => access.saveRateBucket(recent, spent))
      expect(yield* access.purgeRateBuckets(2_000)).toBeGreaterThanOrEqual(1)
      // The idle bucket is gone (a lock creates it anew); the recent one is as it was written.
      expect(yield* access.lockRateBucket(idle, initial)).toEqual(initial)
      expect(yield* access.lockRateBucket(recent, initial)).toEqual(spent)
    })
  )

/** Contract of the AccessStore port: organizations, programs, API keys, rate buckets. */
export const accessContract: PortContract = (name, store) =>
  layer(store, { excludeTestServices: true })(name, (it) => {
    findsProgramsWithinOrganization(it)
    listsProgramsInOrder(it)
    refusesUnknownOrderField(it)
    keepsKeysBySecretHash(it)
    revokesKeysOnce(it)
    listsKeysWithinScope(it)
    rejectsDuplicateSecretHash(it)
    keepsRateBuckets(it)
    swapsRateBuckets(it)
    purgesIdleRateBuckets(it)
  })
