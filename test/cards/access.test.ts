import { Cards, makeVault } from "@issuing/core"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { onDatabase } from "../foundation/fixtures.js"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope, servePlatform, startPlatform, TEST_VAULT_KEY, type TestPlatform } from "../support/platform.js"
import { auditRecords, createKey, createWallet, issueCard, reveal } from "./helpers.js"

// Who may reach card data, and how (docs/card-data.md): the card_display right and its audit
// trail, the search-by-pan limits, and ciphertexts bound to their row.

/** Small limits, so a test reaches them in a few requests. */
const PER_MINUTE = 4
const MAX_MISSES = 3

/** A Luhn-valid number under the default BIN that no card has (cards draw random digits after the BIN). */
const UNUSED_PAN = "4000001234567899"

describe.each(STORE_KINDS)("card data access on %s", (kind) => {
  let platform: TestPlatform
  let walletId: string
  beforeAll(async () => {
    platform = await startPlatform(kind, { panSearchPerMinute: PER_MINUTE, panSearchMaxMisses: MAX_MISSES })
    walletId = (await createWallet(platform)).id
  })
  afterAll(async () => {
    await platform?.close()
  })

  const search = (key: string, pan: string) => platform.request("POST", "/v1/cards/search-by-pan", { key, body: { pan } })

  describe("card_display", () => {
    it("is a field of API keys: true by default for admin and developer keys, false for viewers, settable", async () => {
      expect((await createKey(platform, { role: "developer" })).card_display).toBe(true)
      expect((await createKey(platform, { role: "admin" })).card_display).toBe(true)
      expect((await createKey(platform, { role: "viewer" })).card_display).toBe(false)
      const off = await createKey(platform, { role: "developer", card_display: false })
      expect(off.card_display).toBe(false)
      const listed = await platform.request("GET", "/v1/api-keys?page_size=100", { program: null })
      expect(listed.body.data.find((key: { id: string }) => key.id === off.id).card_display).toBe(false)
      expectEnvelope(
        await platform.request("POST", "/v1/api-keys", { program: null, body: { name: "k", role: "developer", card_display: "yes" } }),
        400,
        { code: "invalid_request", param: "card_display" }
      )
    })

    it("is needed to create an embed session, and is only handed out by keys that have it", async () => {
      const card = await issueCard(platform, walletId)
      // The issue's case: a key refused by reveal. Without card_display it cannot display the card either.
      const key = await createKey(platform, { role: "admin", card_display: false })
      expectEnvelope(await platform.request("POST", `/v1/cards/${card.id}/reveal`, { key: key.secret }), 403, { code: "permission_denied" })
      const refused = await platform.request("POST", `/v1/cards/${card.id}/embed-sessions`, { key: key.secret })
      expectEnvelope(refused, 403, { code: "permission_denied", param: null })
      expect(refused.text).not.toContain("session_token")
      const viewer = await createKey(platform, { role: "viewer", card_display: true })
      expectEnvelope(await platform.request("POST", `/v1/cards/${card.id}/embed-sessions`, { key: viewer.secret }), 403, {
        code: "permission_denied"
      })
      expect(await auditRecords(platform, card.id, "embed_session")).toEqual([])

      const grant = (body: Record<string, unknown>) =>
        platform.request("POST", "/v1/api-keys", { key: key.secret, program: null, body: { name: "granted", ...body } })
      expectEnvelope(await grant({ role: "developer", card_display: true }), 403, { code: "permission_denied", param: "card_display" })
      // By default a key without the right creates keys without it.
      expect((await grant({ role: "developer" })).body.card_display).toBe(false)
      expect((await grant({ role: "developer", card_display: false })).status).toBe(200)
    })

    it("audits every session created and every document served: key, card, time, client IP", async () => {
      const card = await issueCard(platform, walletId)
      const key = await createKey(platform, { role: "developer" })
      const before = Date.now()
      const session = await platform.request("POST", `/v1/cards/${card.id}/embed-sessions`, { key: key.secret })
      expect(session.status, session.text).toBe(200)
      const views = [await fetch(session.body.embed_url), await fetch(session.body.embed_url)]
      expect(views.map((view) => view.status)).toEqual([200, 200])
      const records = await auditRecords(platform, card.id)
      expect(records.map((record) => record.action)).toEqual(["embed_view", "embed_view", "embed_session"])
      expect(records.map((record) => record.request_id)).toEqual([
        views[1]!.headers.get("request-id"),
        views[0]!.headers.get("request-id"),
        session.headers.get("request-id")
      ])
      for (const record of records) {
        expect(Object.keys(record).sort()).toEqual([
          "action",
          "api_key_id",
          "card_id",
          "client_ip",
          "created_at",
          "id",
          "object",
          "program_id",
          "request_id"
        ])
        expect(record).toMatchObject({ api_key_id: key.id, card_id: card.id, client_ip: "127.0.0.1" })
        expect(Date.parse(record.created_at)).toBeGreaterThanOrEqual(before - 1000)
      }
    })

    it("ends a key's sessions when the key is revoked", async () => {
      const card = await issueCard(platform, walletId)
      const key = await createKey(platform, { role: "developer" })
      const kept = await createKey(platform, { role: "developer" })
      const session = await platform.request("POST", `/v1/cards/${card.id}/embed-sessions`, { key: key.secret })
      const other = await platform.request("POST", `/v1/cards/${card.id}/embed-sessions`, { key: kept.secret })
      expect((await fetch(session.body.embed_url)).status).toBe(200)
      const revoked = await platform.request("DELETE", `/v1/api-keys/${key.id}`, { program: null })
      expect(revoked.status, revoked.text).toBe(200)
      const after = await platform.request("GET", `/v1/cards/embed?session_token=${session.body.session_token}`, {
        key: undefined,
        program: null
      })
      expectEnvelope(after, 401, { code: "authentication_error" })
      // Another key's session of the same card is untouched.
      expect((await fetch(other.body.embed_url)).status).toBe(200)
      // Another process sharing the database refuses it too: the key is read with the session.
      const second = await servePlatform(platform.database)
      try {
        expect((await fetch(`${second.baseUrl}/v1/cards/embed?session_token=${session.body.session_token}`)).status).toBe(401)
        expect((await fetch(`${second.baseUrl}/v1/cards/embed?session_token=${other.body.session_token}`)).status).toBe(200)
      } finally {
        await second.close()
      }
    })
  })

  describe("search-by-pan", () => {
    it("requires pan_reveal, before anything is looked up or audited", async () => {
      const card = await issueCard(platform, walletId)
      const { pan } = await reveal(platform, card.id)
      const key = await createKey(platform, { role: "developer" })
      const refused = await search(key.secret, pan)
      expectEnvelope(refused, 403, { code: "permission_denied", param: null })
      expect(refused.text).not.toContain(card.id)
      const records = (await platform.request("GET", "/v1/card-audit-records?action=search_by_pan&page_size=100")).body.data
      expect(records.filter((record: { api_key_id: string }) => record.api_key_id === key.id)).toEqual([])
    })

    it(`allows ${PER_MINUTE} searches per key per minute, then 429 with Retry-After; every search audited`, async () => {
      const card = await issueCard(platform, walletId)
      const { pan } = await reveal(platform, card.id)
      const key = await createKey(platform, { role: "developer", pan_reveal: true })
      const found = []
      for (let i = 0; i < PER_MINUTE; i++) found.push(await search(key.secret, pan))
      expect(found.map((response) => response.status)).toEqual(Array(PER_MINUTE).fill(200))
      const limited = await search(key.secret, pan)
      expectEnvelope(limited, 429, { type: "rate_limit_error", code: "rate_limited", param: null })
      const retryAfter = Number(limited.headers.get("retry-after"))
      expect(retryAfter).toBeGreaterThanOrEqual(1)
      expect(retryAfter).toBeLessThanOrEqual(60)
      // Another key has its own budget.
      const other = await createKey(platform, { role: "developer", pan_reveal: true })
      expect((await search(other.secret, pan)).status).toBe(200)
      // One record per search that ran (the refused one did not search).
      const records = (await auditRecords(platform, card.id, "search_by_pan")).filter((record) => record.api_key_id === key.id)
      expect(records.map((record) => record.request_id).sort()).toEqual(found.map((response) => response.headers.get("request-id")).sort())
      expect(records.every((record) => record.client_ip === "127.0.0.1")).toBe(true)
    })

    it(`refuses a key's searches (429) once it has ${MAX_MISSES} misses in the last hour, in every process`, async () => {
      const card = await issueCard(platform, walletId)
      const { pan } = await reveal(platform, card.id)
      const key = await createKey(platform, { role: "developer", pan_reveal: true })
      for (let i = 0; i < MAX_MISSES; i++) expectEnvelope(await search(key.secret, UNUSED_PAN), 404, { param: "pan" })
      // Even the right number is refused now: the answer must not tell a guess from a hit.
      const limited = await search(key.secret, pan)
      expectEnvelope(limited, 429, { code: "rate_limited" })
      const retryAfter = Number(limited.headers.get("retry-after"))
      expect(retryAfter).toBeGreaterThan(3500)
      expect(retryAfter).toBeLessThanOrEqual(3600)
      expect(limited.text).not.toContain(card.id)
      // The misses are counted from the audit trail: another process sharing the database refuses too.
      const second = await servePlatform(platform.database, [TEST_VAULT_KEY], {
        panSearchPerMinute: PER_MINUTE,
        panSearchMaxMisses: MAX_MISSES
      })
      try {
        const elsewhere = await fetch(`${second.baseUrl}/v1/cards/search-by-pan`, {
          method: "POST",
          headers: { authorization: `Bearer ${key.secret}`, "x-program-id": platform.org.program_id, "content-type": "application/json" },
          body: JSON.stringify({ pan })
        })
        expect(elsewhere.status).toBe(429)
      } finally {
        await second.close()
      }
      const misses = (await platform.request("GET", "/v1/card-audit-records?action=search_by_pan&page_size=100")).body.data.filter(
        (record: { api_key_id: string; card_id: string | null }) => record.api_key_id === key.id
      )
      expect(misses).toHaveLength(MAX_MISSES)
      expect(misses.every((record: { card_id: string | null }) => record.card_id === null)).toBe(true)
      // The organization's other keys keep searching.
      expect((await search(platform.org.api_key, pan)).status).toBe(200)
    })
  })

  describe("sealed card data", () => {
    const sealedOf = (cardId: string) =>
      onDatabase(
        platform,
        async (query) =>
          (await query(`SELECT pan_sealed, cvv_sealed FROM issuing_cards WHERE id = '${cardId}'`))[0] as {
            pan_sealed: string
            cvv_sealed: string
          }
      )
    const writeSealed = (cardId: string, sealed: { pan_sealed: string; cvv_sealed: string }) =>
      onDatabase(platform, (query) =>
        query(`UPDATE issuing_cards SET pan_sealed = '${sealed.pan_sealed}', cvv_sealed = '${sealed.cvv_sealed}' WHERE id = '${cardId}'`)
      )

    it("binds each ciphertext to its row: moved to another card it does not decrypt (500, nothing shown)", async () => {
      const source = await issueCard(platform, walletId)
      const target = await issueCard(platform, walletId)
      const secrets = await reveal(platform, source.id)
      const moved = await sealedOf(source.id)
      expect(moved.pan_sealed).toMatch(/^v2\./)
      expect(moved.cvv_sealed).toMatch(/^v2\./)
      await writeSealed(target.id, moved)

      const refused = await platform.request("POST", `/v1/cards/${target.id}/reveal`)
      expectEnvelope(refused, 500, { code: "internal_error" })
      expect(refused.text).not.toContain(secrets.pan)
      expect(refused.text).not.toContain(target.id)
      const session = await platform.request("POST", `/v1/cards/${target.id}/embed-sessions`)
      const document = await fetch(session.body.embed_url)
      expect(document.status).toBe(500)
      expect(await document.text()).not.toContain(secrets.pan)
      // Nothing was revealed, so nothing was audited as revealed.
      expect(await auditRecords(platform, target.id, "reveal")).toEqual([])
      // Swapping number and code inside one row fails the same way.
      await writeSealed(source.id, { pan_sealed: moved.cvv_sealed, cvv_sealed: moved.pan_sealed })
      expectEnvelope(await platform.request("POST", `/v1/cards/${source.id}/reveal`), 500, { code: "internal_error" })
      await writeSealed(source.id, moved)
      expect(await reveal(platform, source.id)).toEqual(secrets)
    })

    it("keeps reading unbound ciphertexts until vault reseal binds them", async () => {
      const card = await issueCard(platform, walletId)
      const other = await issueCard(platform, walletId)
      const secrets = await reveal(platform, card.id)
      // As sealed before binding: the same key, the key id alone as associated data.
      const legacy = makeVault([TEST_VAULT_KEY])
      const unbound = { pan_sealed: legacy.encrypt(secrets.pan), cvv_sealed: legacy.encrypt(secrets.cvv) }
      expect(unbound.pan_sealed).toMatch(/^v1\./)
      await writeSealed(card.id, unbound)
      expect(await reveal(platform, card.id)).toEqual(secrets)

      const resealed = await platform.instance.runtime.runPromise(Effect.flatMap(Cards, (cards) => cards.resealWithCurrentKey))
      expect(resealed).toBeGreaterThanOrEqual(1)
      const bound = await sealedOf(card.id)
      expect(bound.pan_sealed).toMatch(/^v2\./)
      expect(bound.cvv_sealed).toMatch(/^v2\./)
      expect(await reveal(platform, card.id)).toEqual(secrets)
      expect(await platform.instance.runtime.runPromise(Effect.flatMap(Cards, (cards) => cards.resealWithCurrentKey))).toBe(0)
      // Now bound, it no longer reads in another row.
      await writeSealed(other.id, bound)
      expectEnvelope(await platform.request("POST", `/v1/cards/${other.id}/reveal`), 500, { code: "internal_error" })
    })
  })
})
