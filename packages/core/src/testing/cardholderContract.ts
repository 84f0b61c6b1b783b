import { expect, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { CardholderStore } from "../cardholders/CardholderStore.js"
import type { Cardholder } from "../cardholders/Records.js"
import { AccessStore } from "../access/AccessStore.js"
import { newId } from "../platform/Ids.js"
import { Transactor } from "../sql/Transactor.js"
import type { PortContract } from "./Contract.js"
import { freshOrganization } from "./Fixtures.js"

/** A cardholder record of the program (not stored). */
const cardholder = (programId: string, at: string, overrides: Partial<Cardholder> = {}): Cardholder => ({
  id: newId(),
  object: "cardholder",
  program_id: programId,
  type: "individual",
  name: "Ada Lovelace",
  email: "ada@example.com",
  phone_number: "+14155550123",
  billing_address: { line1: "1 Main St", line2: null, city: "London", state: null, postal_code: "N1", country: "GB" },
  individual: { first_name: "Ada", last_name: "Lovelace", dob: { day: 10, month: 12, year: 1990 } },
  metadata: { crm: "c_1" },
  status: "PENDING_VERIFICATION",
  verification: { status: "PENDING_VERIFICATION", reference: null, updated_at: at },
  created_at: at,
  updated_at: at,
  ...overrides
})

/** Contract of the CardholderStore port: rows round-trip, found and changed only within their program, listed with exact totals. */
export const cardholderContract: PortContract = (name, store) =>
  layer(store, { excludeTestServices: true })(name, (it) => {
    it.effect("stores cardholders, finds, updates and lists them only within their program, with maintained totals", () =>
      Effect.gen(function* () {
        const cardholders = yield* CardholderStore
        const transactor = yield* Transactor
        const { organization, program } = yield* freshOrganization
        const other = yield* freshOrganization
        const at = new Date().toISOString()
        const ada = cardholder(program.id, at)
        const acme = cardholder(program.id, at, { type: "business", name: "Acme", email: null, phone_number: null, individual: null })
        yield* cardholders.insert(ada)
        yield* cardholders.insert(acme)
        expect(Option.getOrThrow(yield* cardholders.find(program.id, ada.id))).toEqual(ada)
        expect(Option.getOrThrow(yield* cardholders.find(program.id, acme.id))).toEqual(acme)
        expect(Option.getOrThrow(yield* transactor.withTransaction(cardholders.find(program.id, ada.id, true))).id).toBe(ada.id)
        expect(Option.isNone(yield* cardholders.find(other.program.id, ada.id))).toBe(true)

        const window = { orderBy: "created_at" as const, descending: false, limit: 10, offset: 0 }
        const ids = (rows: ReadonlyArray<Cardholder>) => rows.map((row) => row.id)
        const all = yield* cardholders.list(program.id, {}, window)
        expect(all.total).toBe(2)
        expect(new Set(ids(all.rows))).toEqual(new Set([ada.id, acme.id]))
        expect(yield* cardholders.list(program.id, { email: "ada@example.com" }, window)).toEqual({ rows: [ada], total: 1 })
        expect((yield* cardholders.list(other.program.id, {}, window)).total).toBe(0)

        const later = new Date(Date.parse(at) + 1000).toISOString()
        const verified: Cardholder = {
          ...ada,
          email: "ada@lovelace.example",
          billing_address: { ...ada.billing_address, line2: "Flat 2", state: "LDN" },
          metadata: {},
          status: "VERIFIED",
          verification: { status: "VERIFIED", reference: "kyc_1", updated_at: later },
          updated_at: later
        }
        // Named with another program, nothing changes.
        yield* cardholders.update({ ...verified, program_id: other.program.id })
        expect(Option.getOrThrow(yield* cardholders.find(program.id, ada.id))).toEqual(ada)
        yield* cardholders.update(verified)
        expect(Option.getOrThrow(yield* cardholders.find(program.id, ada.id))).toEqual(verified)
        expect(yield* cardholders.list(program.id, { status: "VERIFIED" }, window)).toEqual({ rows: [verified], total: 1 })
        expect((yield* cardholders.list(program.id, { status: "PENDING_VERIFICATION" }, window)).total).toBe(1)
        expect((yield* cardholders.list(program.id, { email: "ada@example.com" }, window)).total).toBe(0)
        expect((yield* cardholders.list(program.id, { email: "ada@lovelace.example", status: "VERIFIED" }, window)).total).toBe(1)

        // The program's setting, read from its row.
        expect(yield* cardholders.requiresVerifiedCardholder(program.id)).toBe(false)
        const access = yield* AccessStore
        yield* access.updateProgram(organization.id, program.id, { require_verified_cardholder: true }, later)
        expect(yield* cardholders.requiresVerifiedCardholder(program.id)).toBe(true)
        expect(yield* cardholders.requiresVerifiedCardholder(other.program.id)).toBe(false)
      })
    )
  })
