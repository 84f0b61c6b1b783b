import { expect, layer, type Vitest } from "@effect/vitest"
import { Effect, Option } from "effect"
import { CardStore } from "../cards/CardStore.js"
import type { CardRecord } from "../cards/Records.js"
import { AmountMinor } from "../ledger/Records.js"
import { newId } from "../platform/Ids.js"
import { isUniqueViolation } from "../sql/Transactor.js"
import type { ContractStores, PortContract } from "./Contract.js"
import { freshOrganization } from "./Fixtures.js"

/** A card row of the program (not stored); the sealed values are opaque text to the store. */
/** The test registrar of a contract suite over a store layer (real clock). */
type It = Vitest.MethodsNonLive<ContractStores, true>

const sampleCard = (programId: string, overrides: Partial<CardRecord["card"]> = {}): CardRecord => {
  const now = new Date().toISOString()
  return {
    card: {
      id: newId(),
      object: "card",
      program_id: programId,
      wallet_id: newId(),
      financial_account_id: newId(),
      type: "VIRTUAL",
      state: "ACTIVE",
      last_four: "4242",
      exp_month: 7,
      exp_year: 2031,
      allowed_mcc_codes: ["5411", "5812"],
      blocked_mcc_codes: [],
      spending_period: { interval: "DAILY", amount: AmountMinor.make(20_000) },
      created_at: now,
      updated_at: now,
      ...overrides
    },
    sealed: { pan_sealed: `v1.k1.${newId()}`, cvv_sealed: `v1.k1.${newId()}`, pan_fingerprint: newId(), vault_key_id: "k1" }
  }
}

const storesAndFindsByProgram = (it: It) =>
  it.effect("stores a card and finds it only within its program, by id or by fingerprint", () =>
    Effect.gen(function*() {
      const cards = yield* CardStore
      const { program } = yield* freshOrganization
      const other = yield* freshOrganization
      const record = sampleCard(program.id)
      yield* cards.insertCard(record)
      expect(Option.getOrThrow(yield* cards.findCard(program.id, record.card.id))).toEqual(record)
      expect(Option.isNone(yield* cards.findCard(other.program.id, record.card.id))).toBe(true)
      const fingerprints = [newId(), record.sealed.pan_fingerprint]
      expect(Option.getOrThrow(yield* cards.findByFingerprints(program.id, fingerprints)).card.id).toBe(record.card.id)
      expect(Option.isNone(yield* cards.findByFingerprints(other.program.id, fingerprints))).toBe(true)
      // Numbers are unique across programs: the fingerprint is taken for every program.
      expect(yield* cards.fingerprintTaken([record.sealed.pan_fingerprint])).toBe(true)
      expect(yield* cards.fingerprintTaken([newId()])).toBe(false)
      const duplicate = sampleCard(other.program.id)
      const failed = yield* Effect.flip(
        cards.insertCard({ ...duplicate, sealed: { ...duplicate.sealed, pan_fingerprint: record.sealed.pan_fingerprint } })
      )
      expect(isUniqueViolation(failed)).toBe(true)
    }))

const changesStateByCompareAndSet = (it: It) =>
  it.effect("changes state only from the allowed states (compare-and-set)", () =>
    Effect.gen(function*() {
      const cards = yield* CardStore
      const { program } = yield* freshOrganization
      const record = sampleCard(program.id)
      yield* cards.insertCard(record)
      const at = new Date(Date.parse(record.card.updated_at) + 1000).toISOString()
      const frozen = Option.getOrThrow(yield* cards.transition(program.id, record.card.id, ["ACTIVE"], "FROZEN", at))
      expect(frozen.card.state).toBe("FROZEN")
      expect(frozen.card.updated_at).toBe(at)
      expect(Option.isNone(yield* cards.transition(program.id, record.card.id, ["ACTIVE"], "FROZEN", at))).toBe(true)
      const otherProgram = yield* freshOrganization
      expect(Option.isNone(yield* cards.transition(otherProgram.program.id, record.card.id, ["FROZEN"], "CLOSED", at)))
        .toBe(true)
      expect(Option.getOrThrow(yield* cards.findCard(program.id, record.card.id)).card.state).toBe("FROZEN")
    }))

const listsByFilter = (it: It) =>
  it.effect("lists a program's cards by filter, newest first, with ties broken on id", () =>
    Effect.gen(function*() {
      const cards = yield* CardStore
      const { program } = yield* freshOrganization
      const at = new Date().toISOString()
      const walletId = newId()
      const written = Array.from({ length: 5 }, (_, index) =>
        sampleCard(program.id, { created_at: at, updated_at: at, wallet_id: index < 3 ? walletId : newId() }))
      for (const record of written) yield* cards.insertCard(record)
      const all = yield* cards.listCards(program.id, {}, { orderBy: "created_at", descending: true, limit: 100, offset: 0 })
      expect(all.total).toBe(5)
      expect(all.rows.map((row) => row.card.id)).toEqual(written.map((row) => row.card.id).sort().reverse())
      const paged: Array<string> = []
      for (let offset = 0; offset < 5; offset += 2) {
        const page = yield* cards.listCards(program.id, {}, { orderBy: "created_at", descending: true, limit: 2, offset })
        paged.push(...page.rows.map((row) => row.card.id))
      }
      expect(paged).toEqual(all.rows.map((row) => row.card.id))
      const ofWallet = yield* cards.listCards(program.id, { walletId, state: "ACTIVE" }, {
        orderBy: "created_at",
        descending: false,
        limit: 100,
        offset: 0
      })
      expect(ofWallet.total).toBe(3)
    }))

const keepsEmbedSessions = (it: It) =>
  it.effect("finds embed sessions by token hash and forgets a card's sessions", () =>
    Effect.gen(function*() {
      const cards = yield* CardStore
      const { program } = yield* freshOrganization
      const record = sampleCard(program.id)
      yield* cards.insertCard(record)
      const now = Date.now()
      const session = {
        id: newId(),
        program_id: program.id,
        card_id: record.card.id,
        token_hash: newId(),
        api_key_id: newId(),
        created_at: new Date(now).toISOString(),
        expires_at: new Date(now + 300_000).toISOString()
      }
      yield* cards.insertEmbedSession(session)
      expect(Option.getOrThrow(yield* cards.findEmbedSession(session.token_hash))).toEqual(session)
      expect(Option.isNone(yield* cards.findEmbedSession(newId()))).toBe(true)
      yield* cards.deleteEmbedSessions(record.card.id)
      expect(Option.isNone(yield* cards.findEmbedSession(session.token_hash))).toBe(true)
    }))

/** Contract of the CardStore port: cards scoped by program, compare-and-set transitions, embed sessions. */
export const cardContract: PortContract = (name, store) =>
  layer(store, { excludeTestServices: true })(name, (it) => {
    storesAndFindsByProgram(it)
    changesStateByCompareAndSet(it)
    listsByFilter(it)
    keepsEmbedSessions(it)
  })
