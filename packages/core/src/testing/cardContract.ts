import { SqlClient } from "@effect/sql"
import { expect, layer, type Vitest } from "@effect/vitest"
import { Effect, Option } from "effect"
import { AccessStore } from "../access/AccessStore.js"
import { hashSecret } from "../access/Secrets.js"
import { CardStore } from "../cards/CardStore.js"
import { type CardRecord, spendingPeriodOf } from "../cards/Records.js"
import { AmountMinor } from "../ledger/Records.js"
import { newId } from "../platform/Ids.js"
import { isUniqueViolation } from "../sql/Transactor.js"
import type { ContractStores, PortContract } from "./Contract.js"
import { freshOrganization, sampleApiKey } from "./Fixtures.js"

/** A card row of the program (not stored); the sealed values are opaque text to the store. */
/** The test registrar of a contract suite over a store layer (real clock). */
type It = Vitest.MethodsNonLive<ContractStores, true>

export const sampleCard = (programId: string, overrides: Partial<CardRecord["card"]> = {}): CardRecord => {
  const now = new Date().toISOString()
  const card: CardRecord["card"] = {
    id: newId(),
    object: "card",
    program_id: programId,
    wallet_id: newId(),
    financial_account_id: newId(),
    cardholder_id: null,
    type: "VIRTUAL",
    state: "ACTIVE",
    last_four: "4242",
    exp_month: 7,
    exp_year: 2031,
    allowed_mcc_codes: ["5411", "5812"],
    blocked_mcc_codes: [],
    allowed_merchant_countries: ["DE", "US"],
    blocked_merchant_countries: [],
    spending_limits: [
      { interval: "DAILY", amount: AmountMinor.make(20_000), count: null },
      { interval: "MONTHLY", amount: null, count: 30 }
    ],
    spending_period: { interval: "DAILY", amount: AmountMinor.make(20_000) },
    metadata: { cost_center: "42" },
    created_at: now,
    updated_at: now,
    ...overrides
  }
  return {
    card: { ...card, spending_period: spendingPeriodOf(card.spending_limits) },
    sealed: { pan_sealed: `v1.k1.${newId()}`, cvv_sealed: `v1.k1.${newId()}`, pan_fingerprint: newId(), vault_key_id: "k1" }
  }
}

const storesAndFindsByProgram = (it: It) =>
  it.effect("stores a card and finds it only within its program, by id or by fingerprint", () =>
    Effect.gen(function* () {
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
      // A network message finds it by its number alone, in whatever program it is.
      expect(Option.getOrThrow(yield* cards.findByFingerprintsInAnyProgram(fingerprints)).card.id).toBe(record.card.id)
      expect(Option.isNone(yield* cards.findByFingerprintsInAnyProgram([newId()]))).toBe(true)
      // Numbers are unique across programs: the fingerprint is taken for every program.
      expect(yield* cards.fingerprintTaken([record.sealed.pan_fingerprint])).toBe(true)
      expect(yield* cards.fingerprintTaken([newId()])).toBe(false)
      const duplicate = sampleCard(other.program.id)
      const failed = yield* Effect.flip(
        cards.insertCard({ ...duplicate, sealed: { ...duplicate.sealed, pan_fingerprint: record.sealed.pan_fingerprint } })
      )
      expect(isUniqueViolation(failed)).toBe(true)
    })
  )

const changesStateByCompareAndSet = (it: It) =>
  it.effect("changes state only from the allowed states (compare-and-set)", () =>
    Effect.gen(function* () {
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
      expect(Option.isNone(yield* cards.transition(otherProgram.program.id, record.card.id, ["FROZEN"], "CLOSED", at))).toBe(true)
      expect(Option.getOrThrow(yield* cards.findCard(program.id, record.card.id)).card.state).toBe("FROZEN")
    })
  )

const updatesControlsAndMetadata = (it: It) =>
  it.effect("replaces a card's controls and metadata unless it is closed, within its program", () =>
    Effect.gen(function* () {
      const cards = yield* CardStore
      const { program } = yield* freshOrganization
      const record = sampleCard(program.id)
      yield* cards.insertCard(record)
      const at = new Date(Date.parse(record.card.updated_at) + 1000).toISOString()
      const change = {
        allowed_mcc_codes: [],
        blocked_mcc_codes: ["7995"],
        allowed_merchant_countries: [],
        blocked_merchant_countries: ["KP"],
        spending_limits: [{ interval: "WEEKLY" as const, amount: null, count: 3 }],
        metadata: { team: "ops", ключ: "значение" }
      }
      const updated = Option.getOrThrow(yield* cards.updateCard(program.id, record.card.id, change, at))
      expect(updated.card).toEqual({ ...record.card, ...change, spending_period: null, updated_at: at })
      expect(Option.getOrThrow(yield* cards.findCard(program.id, record.card.id))).toEqual(updated)
      const otherProgram = yield* freshOrganization
      expect(Option.isNone(yield* cards.updateCard(otherProgram.program.id, record.card.id, { ...change, metadata: {} }, at))).toBe(true)
      yield* cards.transition(program.id, record.card.id, ["ACTIVE"], "CLOSED", at)
      expect(Option.isNone(yield* cards.updateCard(program.id, record.card.id, { ...change, metadata: {} }, at))).toBe(true)
      expect(Option.getOrThrow(yield* cards.findCard(program.id, record.card.id)).card.metadata).toEqual(change.metadata)
    })
  )

const listsByFilter = (it: It) =>
  it.effect("lists a program's cards by filter, newest first, with ties broken on id", () =>
    Effect.gen(function* () {
      const cards = yield* CardStore
      const { program } = yield* freshOrganization
      const at = new Date().toISOString()
      const walletId = newId()
      const written = Array.from({ length: 5 }, (_, index) =>
        sampleCard(program.id, { created_at: at, updated_at: at, wallet_id: index < 3 ? walletId : newId() })
      )
      for (const record of written) yield* cards.insertCard(record)
      const all = yield* cards.listCards(program.id, {}, { orderBy: "created_at", descending: true, limit: 100, offset: 0 })
      expect(all.total).toBe(5)
      expect(all.rows.map((row) => row.card.id)).toEqual(
        written
          .map((row) => row.card.id)
          .sort()
          .reverse()
      )
      const paged: Array<string> = []
      for (let offset = 0; offset < 5; offset += 2) {
        const page = yield* cards.listCards(program.id, {}, { orderBy: "created_at", descending: true, limit: 2, offset })
        paged.push(...page.rows.map((row) => row.card.id))
      }
      expect(paged).toEqual(all.rows.map((row) => row.card.id))
      const ofWallet = yield* cards.listCards(
        program.id,
        { walletId, state: "ACTIVE" },
        {
          orderBy: "created_at",
          descending: false,
          limit: 100,
          offset: 0
        }
      )
      expect(ofWallet.total).toBe(3)
    })
  )

const keepsEmbedSessions = (it: It) =>
  it.effect("finds embed sessions by token hash while their key may display cards, and forgets a card's sessions", () =>
    Effect.gen(function* () {
      const cards = yield* CardStore
      const access = yield* AccessStore
      const { organization, program } = yield* freshOrganization
      const record = sampleCard(program.id)
      yield* cards.insertCard(record)
      const key = sampleApiKey(organization.id, { role: "developer" })
      const revoked = sampleApiKey(organization.id, { role: "developer" })
      const withoutDisplay = sampleApiKey(organization.id, { role: "developer", card_display: false })
      for (const stored of [key, revoked, withoutDisplay]) yield* access.insertApiKey(stored, hashSecret(stored.id))
      const now = Date.now()
      const session = (apiKeyId: string) => ({
        id: newId(),
        program_id: program.id,
        card_id: record.card.id,
        token_hash: newId(),
        api_key_id: apiKeyId,
        created_at: new Date(now).toISOString(),
        expires_at: new Date(now + 300_000).toISOString()
      })
      const live = session(key.id)
      const ofRevoked = session(revoked.id)
      const ofWithoutDisplay = session(withoutDisplay.id)
      for (const stored of [live, ofRevoked, ofWithoutDisplay]) yield* cards.insertEmbedSession(stored)
      expect(Option.getOrThrow(yield* cards.findEmbedSession(live.token_hash))).toEqual(live)
      expect(Option.isSome(yield* cards.findEmbedSession(ofRevoked.token_hash))).toBe(true)
      yield* access.revokeApiKey(organization.id, revoked.id, new Date().toISOString())
      expect(Option.isNone(yield* cards.findEmbedSession(ofRevoked.token_hash))).toBe(true)
      expect(Option.isNone(yield* cards.findEmbedSession(ofWithoutDisplay.token_hash))).toBe(true)
      expect(Option.isNone(yield* cards.findEmbedSession(newId()))).toBe(true)
      yield* cards.deleteEmbedSessions(record.card.id)
      expect(Option.isNone(yield* cards.findEmbedSession(live.token_hash))).toBe(true)
    })
  )

const resealsByCompareAndSet = (it: It) =>
  it.effect("finds cards to re-seal in id order (other key or unbound) and re-seals only unchanged rows", () =>
    Effect.gen(function* () {
      const cards = yield* CardStore
      const { program } = yield* freshOrganization
      const bound = { vault_key_id: "k2", pan_sealed: `v2.k2.${newId()}`, cvv_sealed: `v2.k2.${newId()}` }
      const otherKey = sampleCard(program.id)
      const unbound = sampleCard(program.id)
      const done = sampleCard(program.id)
      const records = [
        otherKey,
        { ...unbound, sealed: { ...unbound.sealed, vault_key_id: "k2" } },
        { ...done, sealed: { ...done.sealed, ...bound } }
      ]
      for (const record of records) yield* cards.insertCard(record)
      const ids = (rows: ReadonlyArray<CardRecord>) => rows.map((row) => row.card.id)
      const due = (yield* cards.cardsToReseal("k2", "", 1000)).filter((row) => row.card.program_id === program.id)
      expect(ids(due)).toEqual([otherKey.card.id, unbound.card.id].sort())
      const [first] = yield* cards.cardsToReseal("k2", "", 1)
      expect(ids(yield* cards.cardsToReseal("k2", first!.card.id, 1000))).not.toContain(first!.card.id)

      const sealed = { ...bound, pan_fingerprint: newId() }
      expect(yield* cards.reseal(otherKey.card.id, otherKey.sealed, sealed)).toBe(true)
      // The row changed since it was read: the compare-and-set refuses to write the stale read.
      expect(yield* cards.reseal(otherKey.card.id, otherKey.sealed, { ...sealed, pan_fingerprint: newId() })).toBe(false)
      expect(Option.getOrThrow(yield* cards.findCard(program.id, otherKey.card.id)).sealed).toEqual(sealed)
    })
  )

const countsRecentSearches = (it: It) =>
  it.effect("keeps audit records with the client IP and counts a key's recent searches and misses, newest first", () =>
    Effect.gen(function* () {
      const cards = yield* CardStore
      const { program } = yield* freshOrganization
      const record = sampleCard(program.id)
      yield* cards.insertCard(record)
      const apiKeyId = newId()
      const now = Date.now()
      const audit = (cardId: string | null, agoMs: number, action: "search_by_pan" | "reveal" = "search_by_pan") => ({
        id: newId(),
        object: "card_audit_record" as const,
        program_id: program.id,
        api_key_id: apiKeyId,
        card_id: cardId,
        action,
        request_id: newId(),
        client_ip: "203.0.113.7",
        created_at: new Date(now - agoMs).toISOString()
      })
      const written = [audit(null, 1000), audit(record.card.id, 2000), audit(null, 3000), audit(null, 120_000), audit(null, 500, "reveal")]
      for (const row of written) yield* cards.insertAudit(row)
      const since = (agoMs: number) => new Date(now - agoMs).toISOString()
      expect(yield* cards.recentSearches(apiKeyId, since(60_000), 10, false)).toEqual(
        [written[0]!, written[1]!, written[2]!].map((row) => row.created_at)
      )
      expect(yield* cards.recentSearches(apiKeyId, since(600_000), 10, true)).toEqual(
        [written[0]!, written[2]!, written[3]!].map((row) => row.created_at)
      )
      expect(yield* cards.recentSearches(apiKeyId, since(600_000), 2, true)).toHaveLength(2)
      expect(yield* cards.recentSearches(newId(), since(600_000), 10, false)).toEqual([])
      const listed = yield* cards.listAudit(
        program.id,
        { action: "reveal" },
        { orderBy: "created_at", descending: true, limit: 10, offset: 0 }
      )
      expect(listed.rows).toEqual([written[4]])
    })
  )

/** Contract of the CardStore port: cards scoped by program, compare-and-set transitions, embed sessions. */
const readsSpendByWindow = (it: It) =>
  it.effect("reads a card's running totals per window — amount and approved authorizations — as the card's transactions sum them", () =>
    Effect.gen(function* () {
      const cards = yield* CardStore
      const sql = (yield* SqlClient.SqlClient).withoutTransforms()
      const { program } = yield* freshOrganization
      const cardId = newId()
      const other = newId()
      const transaction = (card: string | null, at: string, status: string, pending: number, settled: number, authorized = 1) =>
        Effect.as(
          sql`INSERT INTO issuing_transactions ${sql.insert({
            id: `txn_${at}_${status}_${pending}_${settled}_${card === cardId}`,
            program_id: program.id,
            status,
            amount_minor: Math.max(1, pending + settled),
            currency: "USD",
            card_id: card,
            created_at: at,
            updated_at: at,
            authorized_minor: authorized,
            pending_minor: pending,
            settled_minor: settled
          })}`,
          `txn_${at}_${status}_${pending}_${settled}_${card === cardId}`
        )
      // Saturday 31 October and Sunday 1 November 2026 share the ISO week of Monday 26 October.
      yield* transaction(cardId, "2026-10-31T23:59:59.999Z", "PENDING", 100, 0)
      const cleared = yield* transaction(cardId, "2026-11-01T00:00:00.000Z", "PENDING", 20, 5)
      yield* transaction(cardId, "2026-11-20T12:00:00.000Z", "SETTLED", 0, 7)
      // A force post spends without an authorization; a declined one and a void count nothing.
      yield* transaction(cardId, "2026-11-20T13:00:00.000Z", "SETTLED", 0, 9, 0)
      yield* transaction(cardId, "2026-11-20T14:00:00.000Z", "DECLINED", 0, 0)
      yield* transaction(cardId, "2026-11-20T15:00:00.000Z", "VOIDED", 0, 0)
      yield* transaction(other, "2026-11-20T12:00:00.000Z", "PENDING", 1_000, 0)
      yield* transaction(null, "2026-11-20T12:00:00.000Z", "SETTLED", 0, 10_000)
      const read = (interval: "DAILY" | "WEEKLY" | "MONTHLY" | "YEARLY" | "ALL_TIME", window: string) =>
        Effect.map(cards.windowSpend(cardId, [{ interval, window }]), (rows) =>
          rows.length === 0 ? [0, 0] : [rows[0]!.spent_minor, rows[0]!.spent_count]
        )
      expect(yield* read("ALL_TIME", "")).toEqual([141, 3])
      expect(yield* read("YEARLY", "2026-01-01")).toEqual([141, 3])
      expect(yield* read("MONTHLY", "2026-10-01")).toEqual([100, 1])
      expect(yield* read("MONTHLY", "2026-11-01")).toEqual([41, 2])
      expect(yield* read("WEEKLY", "2026-10-26")).toEqual([125, 2])
      expect(yield* read("WEEKLY", "2026-11-16")).toEqual([16, 1])
      expect(yield* read("DAILY", "2026-10-31")).toEqual([100, 1])
      expect(yield* read("DAILY", "2026-11-01")).toEqual([25, 1])
      expect(yield* read("DAILY", "2026-11-02")).toEqual([0, 0])
      // Several windows in one read, each its own row.
      const both = yield* cards.windowSpend(cardId, [
        { interval: "DAILY", window: "2026-11-20" },
        { interval: "ALL_TIME", window: "" }
      ])
      expect([...both].sort((a, b) => a.interval.localeCompare(b.interval))).toEqual([
        { interval: "ALL_TIME", window: "", spent_minor: 141, spent_count: 3 },
        { interval: "DAILY", window: "2026-11-20", spent_minor: 16, spent_count: 1 }
      ])
      // Part of a hold released: the amount comes off its window, the count stays; released whole, both.
      yield* sql`UPDATE issuing_transactions SET pending_minor = 0, settled_minor = 1 WHERE id = ${cleared}`
      expect(yield* read("MONTHLY", "2026-11-01")).toEqual([17, 2])
      yield* sql`UPDATE issuing_transactions SET status = 'VOIDED', settled_minor = 0 WHERE id = ${cleared}`
      expect(yield* read("MONTHLY", "2026-11-01")).toEqual([16, 1])
      expect(yield* read("ALL_TIME", "")).toEqual([116, 2])
      expect(yield* cards.windowSpend(newId(), [{ interval: "ALL_TIME", window: "" }])).toEqual([])
    })
  )

export const cardContract: PortContract = (name, store) =>
  layer(store, { excludeTestServices: true })(name, (it) => {
    storesAndFindsByProgram(it)
    changesStateByCompareAndSet(it)
    updatesControlsAndMetadata(it)
    listsByFilter(it)
    keepsEmbedSessions(it)
    resealsByCompareAndSet(it)
    countsRecentSearches(it)
    readsSpendByWindow(it)
  })
