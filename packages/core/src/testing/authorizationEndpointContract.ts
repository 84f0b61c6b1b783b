import { expect, layer } from "@effect/vitest"
import { Effect, Either, Option } from "effect"
import type { StoredAuthorizationEndpoint } from "../cards/AuthorizationEndpointRecords.js"
import { AuthorizationEndpointStore } from "../cards/AuthorizationEndpointStore.js"
import { newId } from "../platform/Ids.js"
import { isUniqueViolation, Transactor } from "../sql/Transactor.js"
import type { PortContract } from "./Contract.js"
import { freshOrganization } from "./Fixtures.js"

/** An endpoint record of the program (not stored). */
const endpoint = (programId: string, overrides: Partial<StoredAuthorizationEndpoint> = {}): StoredAuthorizationEndpoint => {
  const at = new Date().toISOString()
  const id = newId()
  return {
    id,
    object: "authorization_endpoint",
    program_id: programId,
    url: `https://example.com/decide/${id}`,
    timeout_ms: 2000,
    timeout_decision: "DECLINE",
    disabled: false,
    secret_sealed: "v1.contract.sealed-secret",
    previous_secret_sealed: null,
    previous_secret_expires_at: null,
    created_at: at,
    updated_at: at,
    ...overrides
  }
}

/** Contract of the AuthorizationEndpointStore port: one endpoint per program, found and changed only within it. */
export const authorizationEndpointContract: PortContract = (name, store) =>
  layer(store, { excludeTestServices: true })(name, (it) => {
    it.effect("stores one endpoint per program, found, listed, updated and removed only within it", () =>
      Effect.gen(function* () {
        const endpoints = yield* AuthorizationEndpointStore
        const transactor = yield* Transactor
        const { program } = yield* freshOrganization
        const other = yield* freshOrganization
        const stored = endpoint(program.id, { timeout_ms: 150, timeout_decision: "APPROVE" })
        yield* endpoints.insert(stored)
        expect(Option.getOrThrow(yield* endpoints.find(program.id, stored.id))).toEqual(stored)
        expect(Option.getOrThrow(yield* endpoints.findForProgram(program.id))).toEqual(stored)
        const locked = yield* transactor.withTransaction(endpoints.find(program.id, stored.id, true))
        expect(Option.getOrThrow(locked).id).toBe(stored.id)
        expect(Option.isNone(yield* endpoints.find(other.program.id, stored.id))).toBe(true)
        expect(Option.isNone(yield* endpoints.findForProgram(other.program.id))).toBe(true)

        // A second one for the program is the store's unique violation; another program's is its own.
        const second = yield* Effect.either(endpoints.insert(endpoint(program.id)))
        expect(Either.isLeft(second) && isUniqueViolation(second.left)).toBe(true)
        yield* endpoints.insert(endpoint(other.program.id))

        const window = { orderBy: "created_at" as const, descending: true, limit: 10, offset: 0 }
        expect(yield* endpoints.list(program.id, window)).toEqual({ rows: [stored], total: 1 })

        const later = new Date(Date.parse(stored.updated_at) + 1000).toISOString()
        const updated: StoredAuthorizationEndpoint = {
          ...stored,
          url: "https://example.com/elsewhere",
          timeout_ms: 5000,
          timeout_decision: "DECLINE",
          disabled: true,
          secret_sealed: "v1.contract.new-secret",
          previous_secret_sealed: stored.secret_sealed,
          previous_secret_expires_at: later,
          updated_at: later
        }
        // Named with another program, nothing changes.
        yield* endpoints.update({ ...updated, program_id: other.program.id })
        expect(Option.getOrThrow(yield* endpoints.find(program.id, stored.id))).toEqual(stored)
        yield* endpoints.update(updated)
        expect(Option.getOrThrow(yield* endpoints.find(program.id, stored.id))).toEqual(updated)

        expect(yield* endpoints.remove(other.program.id, stored.id)).toBe(false)
        expect(yield* endpoints.remove(program.id, stored.id)).toBe(true)
        expect(yield* endpoints.remove(program.id, stored.id)).toBe(false)
        expect(Option.isNone(yield* endpoints.findForProgram(program.id))).toBe(true)
        expect(yield* endpoints.list(program.id, window)).toEqual({ rows: [], total: 0 })
        // Freed: the program may have one again.
        yield* endpoints.insert(endpoint(program.id))
        expect((yield* endpoints.list(program.id, window)).total).toBe(1)
      })
    )
  })
