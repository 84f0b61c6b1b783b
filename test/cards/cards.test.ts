import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope, startPlatform, type TestPlatform, uuid } from "../support/platform.js"
import { createWallet, fund, issueCard, luhnValid, reveal } from "./helpers.js"

const CARD_FIELDS = [
  "allowed_mcc_codes",
  "allowed_merchant_countries",
  "blocked_mcc_codes",
  "blocked_merchant_countries",
  "cardholder_id",
  "created_at",
  "exp_month",
  "exp_year",
  "financial_account_id",
  "id",
  "last_four",
  "metadata",
  "object",
  "program_id",
  "spending_limits",
  "spending_period",
  "state",
  "type",
  "updated_at",
  "wallet_id"
]

describe.each(STORE_KINDS)("cards on %s", (kind) => {
  let platform: TestPlatform
  let wallet: { id: string; financial_account_id: string }

  beforeAll(async () => {
    platform = await startPlatform(kind)
    wallet = await createWallet(platform)
  })
  afterAll(async () => {
    await platform?.close()
  })

  const cardCount = async () => (await platform.request("GET", "/v1/cards?page_size=1")).body.total_count as number
  const events = async (type: string) => (await platform.request("GET", `/v1/events?type=${type}&page_size=100`)).body.data as Array<any>

  describe("issuance", () => {
    it("issues a card with exactly the contract's fields and emits card.created", async () => {
      const card = await issueCard(platform, wallet.id, {
        allowedMccCodes: ["5812", "5411"],
        blockedMccCodes: ["7995"],
        spendingPeriod: { interval: "MONTHLY", amount: 50_000 }
      })
      expect(Object.keys(card).sort()).toEqual(CARD_FIELDS)
      expect(card).toMatchObject({
        object: "card",
        program_id: platform.org.program_id,
        wallet_id: wallet.id,
        financial_account_id: wallet.financial_account_id,
        type: "VIRTUAL",
        state: "ACTIVE",
        allowed_mcc_codes: ["5411", "5812"],
        blocked_mcc_codes: ["7995"],
        spending_period: { interval: "MONTHLY", amount: 50_000 }
      })
      expect(card.last_four).toMatch(/^\d{4}$/)
      const now = new Date()
      expect(card.exp_month).toBe(now.getUTCMonth() + 1)
      expect(card.exp_year).toBe(now.getUTCFullYear() + 3)
      const created = (await events("card.created")).find((event) => event.data.object.id === card.id)
      expect(created?.data.object).toEqual(card)
      expect(await platform.request("GET", `/v1/cards/${card.id}`).then((r) => r.body)).toEqual(card)
    })

    it("issues 16-digit Luhn-valid numbers under the program BIN, unique, with 3-digit codes", async () => {
      const program = await platform.request("POST", "/v1/programs", { program: null, body: { name: "BIN 8", bin: "55554444" } })
      expect(program.status).toBe(200)
      const otherWallet = await createWallet(platform, { program: program.body.id })
      const pans = new Set<string>()
      for (let i = 0; i < 8; i++) {
        const response = await platform.request("POST", "/v1/cards", {
          program: program.body.id,
          body: { wallet_id: otherWallet.id, type: i % 2 === 0 ? "VIRTUAL" : "PHYSICAL" }
        })
        expect(response.status).toBe(200)
        const revealed = await platform.request("POST", `/v1/cards/${response.body.id}/reveal`, { program: program.body.id })
        const { cvv, pan } = revealed.body
        expect(pan).toMatch(/^55554444\d{8}$/)
        expect(luhnValid(pan)).toBe(true)
        expect(cvv).toMatch(/^\d{3}$/)
        expect(pan.slice(-4)).toBe(response.body.last_four)
        pans.add(pan)
      }
      expect(pans.size).toBe(8)
      const card = await issueCard(platform, wallet.id)
      expect((await reveal(platform, card.id)).pan).toMatch(/^400000\d{10}$/)
    })

    it("accepts the snake_case aliases, and the same value under both names", async () => {
      const card = await issueCard(platform, wallet.id, {
        type: "PHYSICAL",
        allowed_mcc_codes: ["5812"],
        blocked_mcc_codes: ["5813"],
        spending_period: { interval: "PER_TRANSACTION", amount: 100 },
        spendingPeriod: { interval: "PER_TRANSACTION", amount: 100 }
      })
      expect(card).toMatchObject({
        type: "PHYSICAL",
        allowed_mcc_codes: ["5812"],
        blocked_mcc_codes: ["5813"],
        spending_period: { interval: "PER_TRANSACTION", amount: 100 }
      })
      const plain = await issueCard(platform, wallet.id)
      expect(plain).toMatchObject({ allowed_mcc_codes: [], blocked_mcc_codes: [], spending_period: null })
    })

    it.each([
      [{ allowedMccCodes: ["5812"], allowed_mcc_codes: ["5411"] }, "allowedMccCodes", /conflicting/i],
      [{ blockedMccCodes: ["5812"], blocked_mcc_codes: [] }, "blockedMccCodes", /conflicting/i],
      [
        { spendingPeriod: { interval: "DAILY", amount: 1 }, spending_period: { interval: "DAILY", amount: 2 } },
        "spendingPeriod",
        /conflicting/i
      ],
      [{ allowedMccCodes: ["581"] }, "allowedMccCodes", /4-digit/],
      [{ allowedMccCodes: ["58120"] }, "allowedMccCodes", /4-digit/],
      [{ blocked_mcc_codes: ["abcd"] }, "blockedMccCodes", /4-digit/],
      [{ allowedMccCodes: Array.from({ length: 501 }, (_, i) => String(1000 + i)) }, "allowedMccCodes", /at most 500/],
      [{ allowedMccCodes: ["5812", "7995"], blockedMccCodes: ["7995"] }, "blockedMccCodes", /both allowed and blocked/],
      [{ spendingPeriod: { interval: "HOURLY", amount: 100 } }, "spendingPeriod.interval", /PER_TRANSACTION/],
      [{ spendingPeriod: { interval: "DAILY", amount: 0 } }, "spendingPeriod.amount", /positive integer/],
      [{ spendingPeriod: { interval: "DAILY", amount: -5 } }, "spendingPeriod.amount", /positive integer/],
      [{ spendingPeriod: { interval: "DAILY", amount: 10.5 } }, "spendingPeriod.amount", /positive integer/]
    ])("rejects bad spend controls %j with 400 (param %s) and writes nothing", async (extra, param, message) => {
      const before = await cardCount()
      const response = await platform.request("POST", "/v1/cards", { body: { wallet_id: wallet.id, type: "VIRTUAL", ...extra } })
      const error = expectEnvelope(response, 400, { type: "invalid_request_error", code: "invalid_request", param })
      expect(error.message).toMatch(message)
      expect(await cardCount()).toBe(before)
    })

    it("validates the rest of the body with 400s naming the field", async () => {
      expectEnvelope(await platform.request("POST", "/v1/cards", { body: { type: "VIRTUAL" } }), 400, { param: "wallet_id" })
      expectEnvelope(await platform.request("POST", "/v1/cards", { body: { wallet_id: wallet.id } }), 400, { param: "type" })
      expectEnvelope(await platform.request("POST", "/v1/cards", { body: { wallet_id: wallet.id, type: "PLASTIC" } }), 400, {
        param: "type"
      })
      expectEnvelope(
        await platform.request("POST", "/v1/cards", { body: { wallet_id: wallet.id, type: "VIRTUAL", allowedMccCodes: "5812" } }),
        400,
        { param: "allowedMccCodes" }
      )
      expectEnvelope(await platform.request("POST", "/v1/cards", { rawBody: "{", headers: { "content-type": "application/json" } }), 400)
    })

    it("answers 404 (param wallet_id) for unknown and other programs' wallets, 400 for a malformed id", async () => {
      const before = await cardCount()
      expectEnvelope(await platform.request("POST", "/v1/cards", { body: { wallet_id: uuid(), type: "VIRTUAL" } }), 404, {
        code: "not_found",
        param: "wallet_id"
      })
      // A body id that is not a UUID fails the schema (docs/api.md#ids): 400, not 404.
      expectEnvelope(await platform.request("POST", "/v1/cards", { body: { wallet_id: "not-a-uuid", type: "VIRTUAL" } }), 400, {
        code: "invalid_request",
        param: "wallet_id"
      })
      const other = await platform.createOrganization("Other")
      const foreign = await createWallet(platform, { key: other.api_key, program: other.program_id })
      expectEnvelope(await platform.request("POST", "/v1/cards", { body: { wallet_id: foreign.id, type: "VIRTUAL" } }), 404, {
        code: "not_found",
        param: "wallet_id"
      })
      expect(await cardCount()).toBe(before)
    })

    it("returns the stored card for a retried Idempotency-Key", async () => {
      const key = uuid()
      const first = await platform.request("POST", "/v1/cards", { idempotencyKey: key, body: { wallet_id: wallet.id, type: "VIRTUAL" } })
      const again = await platform.request("POST", "/v1/cards", { idempotencyKey: key, body: { wallet_id: wallet.id, type: "VIRTUAL" } })
      expect(again.status).toBe(200)
      expect(again.headers.get("idempotent-replayed")).toBe("true")
      expect(again.body).toEqual(first.body)
    })
  })

  describe("reading", () => {
    it("lists with wallet and state filters and paging, newest first", async () => {
      const own = await createWallet(platform)
      const cards = [] as Array<any>
      for (let i = 0; i < 3; i++) cards.push(await issueCard(platform, own.id))
      await platform.request("POST", `/v1/cards/${cards[1].id}/freeze`)
      const all = await platform.request("GET", `/v1/cards?wallet_id=${own.id}`)
      expect(all.body.total_count).toBe(3)
      expect(all.body.data.map((card: any) => card.id)).toEqual([cards[2].id, cards[1].id, cards[0].id])
      const frozen = await platform.request("GET", `/v1/cards?wallet_id=${own.id}&state=FROZEN`)
      expect(frozen.body).toMatchObject({ total_count: 1, data: [{ id: cards[1].id, state: "FROZEN" }] })
      const page = await platform.request("GET", `/v1/cards?wallet_id=${own.id}&page=2&page_size=2&order_by=created_at`)
      expect(page.body.total_count).toBe(3)
      expect(page.body.data.map((card: any) => card.id)).toEqual([cards[2].id])
      for (const card of all.body.data) expect(Object.keys(card).sort()).toEqual(CARD_FIELDS)
      expectEnvelope(await platform.request("GET", "/v1/cards?state=LOST"), 400, { param: "state" })
      expectEnvelope(await platform.request("GET", "/v1/cards?wallet_id=nope"), 400, { param: "wallet_id" })
      expectEnvelope(await platform.request("GET", "/v1/cards?order_by=pan"), 400, { param: "order_by" })
    })

    it("answers 404 (param card_id) for malformed, unknown and other programs' cards", async () => {
      const card = await issueCard(platform, wallet.id)
      const other = await platform.createOrganization("Other reader")
      for (const path of ["", "/freeze", "/unfreeze", "/close", "/reissue", "/reveal", "/embed-sessions"]) {
        const method = path === "" ? "GET" : "POST"
        expectEnvelope(await platform.request(method, `/v1/cards/nope${path}`), 404, { param: "card_id" })
        expectEnvelope(await platform.request(method, `/v1/cards/${uuid()}${path}`), 404, { param: "card_id" })
        expectEnvelope(
          await platform.request(method, `/v1/cards/${card.id}${path}`, { key: other.api_key, program: other.program_id }),
          404,
          { param: "card_id" }
        )
      }
      expectEnvelope(await platform.request("GET", "/v1/cards", { program: null }), 400, { param: "X-Program-ID" })
      expectEnvelope(await platform.request("GET", "/v1/cards", { key: undefined }), 401, { code: "authentication_error" })
    })
  })

  describe("lifecycle", () => {
    it("freezes, unfreezes, reissues and closes, emitting card.updated, with 409 from incompatible states", async () => {
      const card = await issueCard(platform, wallet.id)
      const step = async (action: string, status: number, state?: string) => {
        const response = await platform.request("POST", `/v1/cards/${card.id}/${action}`)
        if (status === 409) {
          expectEnvelope(response, 409, { type: "conflict_error", code: "conflict" })
          return response
        }
        expect(response.status, response.text).toBe(200)
        expect(response.body.state).toBe(state)
        return response
      }
      await step("unfreeze", 409)
      await step("freeze", 200, "FROZEN")
      await step("freeze", 409)
      const before = await reveal(platform, card.id)
      const reissued = await step("reissue", 200, "FROZEN")
      const after = await reveal(platform, card.id)
      expect(after.pan).not.toBe(before.pan)
      expect(reissued.body.last_four).toBe(after.pan.slice(-4))
      expect(luhnValid(after.pan)).toBe(true)
      expect(reissued.body.exp_year).toBe(new Date().getUTCFullYear() + 3)
      // A new expiry, even when the card is reissued in the month it was issued (docs/card-data.md#lifecycle).
      expect(reissued.body.exp_year * 12 + reissued.body.exp_month).toBeGreaterThan(card.exp_year * 12 + card.exp_month)
      // The old number no longer finds the card; the new one does.
      expectEnvelope(await platform.request("POST", "/v1/cards/search-by-pan", { body: { pan: before.pan } }), 404, { param: "pan" })
      expect((await platform.request("POST", "/v1/cards/search-by-pan", { body: { pan: after.pan } })).body.id).toBe(card.id)
      await step("unfreeze", 200, "ACTIVE")
      await step("reissue", 200, "ACTIVE")
      await step("close", 200, "CLOSED")
      for (const action of ["freeze", "unfreeze", "close", "reissue"]) await step(action, 409)
      expectEnvelope(await platform.request("POST", `/v1/cards/${card.id}/reveal`), 409, { code: "conflict" })
      expectEnvelope(await platform.request("POST", `/v1/cards/${card.id}/embed-sessions`), 409, { code: "conflict" })

      const updates = (await events("card.updated")).filter((event) => event.data.object.id === card.id)
      expect(updates.map((event) => event.data.object.state).reverse()).toEqual(["FROZEN", "FROZEN", "ACTIVE", "ACTIVE", "CLOSED"])
      expect(updates[0].data.object).toEqual((await platform.request("GET", `/v1/cards/${card.id}`)).body)
    })

    it("never lets two concurrent changes both win", async () => {
      const card = await issueCard(platform, wallet.id)
      const results = await Promise.all(Array.from({ length: 6 }, () => platform.request("POST", `/v1/cards/${card.id}/freeze`)))
      expect(results.filter((response) => response.status === 200)).toHaveLength(1)
      expect(results.filter((response) => response.status === 409)).toHaveLength(5)
    })
  })

  describe("reveal and search-by-pan", () => {
    it("reveals only to keys enabled for PAN reveal, and audits every reveal", async () => {
      const card = await issueCard(platform, wallet.id)
      const response = await platform.request("POST", `/v1/cards/${card.id}/reveal`)
      expect(response.status).toBe(200)
      expect(Object.keys(response.body).sort()).toEqual(["card_id", "cvv", "exp_month", "exp_year", "object", "pan"])
      expect(response.body).toMatchObject({ object: "card_reveal", card_id: card.id, exp_month: card.exp_month, exp_year: card.exp_year })

      const plain = await platform.request("POST", "/v1/api-keys", { program: null, body: { name: "no reveal", role: "developer" } })
      const denied = await platform.request("POST", `/v1/cards/${card.id}/reveal`, { key: plain.body.secret })
      expectEnvelope(denied, 403, { type: "permission_error", code: "permission_denied" })
      expect(denied.text).not.toContain(response.body.pan)

      const audit = await platform.request("GET", `/v1/card-audit-records?card_id=${card.id}&action=reveal`)
      expect(audit.body.total_count).toBe(1)
      expect(audit.body.data[0]).toMatchObject({
        object: "card_audit_record",
        card_id: card.id,
        action: "reveal",
        request_id: response.headers.get("request-id"),
        program_id: platform.org.program_id
      })
      expect(audit.body.data[0].api_key_id).toMatch(/^[0-9a-f-]{36}$/)
    })

    it("replays a reveal under its Idempotency-Key from the sealed stored response", async () => {
      const card = await issueCard(platform, wallet.id)
      const key = uuid()
      const first = await platform.request("POST", `/v1/cards/${card.id}/reveal`, { idempotencyKey: key })
      const again = await platform.request("POST", `/v1/cards/${card.id}/reveal`, { idempotencyKey: key })
      expect(again.headers.get("idempotent-replayed")).toBe("true")
      expect(again.body).toEqual(first.body)
    })

    it("finds the program's card by number (spaces allowed), audits hits and misses", async () => {
      const card = await issueCard(platform, wallet.id)
      const { pan } = await reveal(platform, card.id)
      const spaced = pan.replace(/(\d{4})(?=\d)/g, "$1 ")
      const found = await platform.request("POST", "/v1/cards/search-by-pan", { body: { pan: spaced } })
      expect(found.status).toBe(200)
      expect(found.body).toEqual((await platform.request("GET", `/v1/cards/${card.id}`)).body)
      expect(found.text).not.toContain(pan)

      const miss = await platform.request("POST", "/v1/cards/search-by-pan", { body: { pan: "4000001234567899" } })
      expectEnvelope(miss, 404, { code: "not_found", param: "pan" })
      expectEnvelope(await platform.request("POST", "/v1/cards/search-by-pan", { body: { pan: "12ab" } }), 400, { param: "pan" })
      expectEnvelope(await platform.request("POST", "/v1/cards/search-by-pan", { body: {} }), 400, { param: "pan" })

      const other = await platform.createOrganization("Searcher")
      expectEnvelope(
        await platform.request("POST", "/v1/cards/search-by-pan", { key: other.api_key, program: other.program_id, body: { pan } }),
        404,
        { param: "pan" }
      )
      const audits = (await platform.request("GET", "/v1/card-audit-records?action=search_by_pan&page_size=100")).body.data
      expect(audits.find((record: any) => record.request_id === found.headers.get("request-id"))?.card_id).toBe(card.id)
      const missRecord = audits.find((record: any) => record.request_id === miss.body.error.request_id)
      expect(missRecord).toMatchObject({ card_id: null, action: "search_by_pan" })
    })
  })

  describe("embed sessions and the embed document", () => {
    it("creates a session whose embed_url serves the document with the contract's headers", async () => {
      const card = await issueCard(platform, wallet.id)
      const { cvv, exp_month, exp_year, pan } = await reveal(platform, card.id)
      const session = await platform.request("POST", `/v1/cards/${card.id}/embed-sessions`, { idempotencyKey: uuid() })
      expect(session.status).toBe(200)
      expect(Object.keys(session.body).sort()).toEqual(["card_id", "embed_url", "expires_at", "object", "session_token"])
      const token = session.body.session_token
      expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/)
      expect(session.body.embed_url).toBe(`${platform.baseUrl}/v1/cards/embed?session_token=${token}`)
      const ttlMs = Date.parse(session.body.expires_at) - Date.now()
      expect(ttlMs).toBeGreaterThan(290_000)
      expect(ttlMs).toBeLessThanOrEqual(300_000)
      expect(session.text).not.toContain(pan)

      const document = await fetch(session.body.embed_url)
      expect(document.status).toBe(200)
      expect(document.headers.get("content-type")).toMatch(/^text\/html/)
      const csp = document.headers.get("content-security-policy")!
      expect(csp).toContain("default-src 'none'")
      expect(csp).toMatch(/script-src 'sha256-[A-Za-z0-9+/=]+'(;|$)/)
      expect(csp).toMatch(/style-src 'sha256-[A-Za-z0-9+/=]+'(;|$)/)
      expect(csp).not.toContain("unsafe-inline")
      expect(document.headers.get("cache-control")).toBe("no-store")
      expect(document.headers.get("referrer-policy")).toBe("no-referrer")
      expect(document.headers.get("x-content-type-options")).toBe("nosniff")
      expect(document.headers.get("set-cookie")).toBeNull()
      const html = await document.text()
      expect(html).toContain(pan.replace(/(\d{4})(?=\d)/g, "$1 "))
      expect(html).toContain(`data-copy="${pan}"`)
      expect(html).toContain(`${String(exp_month).padStart(2, "0")}/${String(exp_year % 100).padStart(2, "0")}`)
      expect(html).toContain(`data-copy="${cvv}"`)
      // Self-contained: nothing is loaded from anywhere.
      expect(html).not.toMatch(/\b(src|href)=/i)
      expect(html).not.toMatch(/@import|url\(/i)
      // The hashes in the policy are those of the document's own script and style.
      const { createHash } = await import("node:crypto")
      const hash = (text: string) => `'sha256-${createHash("sha256").update(text).digest("base64")}'`
      const script = /<script>([\s\S]*?)<\/script>/.exec(html)![1]!
      const style = /<style>([\s\S]*?)<\/style>/.exec(html)![1]!
      expect(csp).toContain(`script-src ${hash(script)}`)
      expect(csp).toContain(`style-src ${hash(style)}`)

      const audit = await platform.request("GET", `/v1/card-audit-records?card_id=${card.id}`)
      expect(audit.body.data.map((record: any) => record.action)).toEqual(["embed_view", "embed_session", "reveal"])
      expect(audit.body.data[1].request_id).toBe(session.headers.get("request-id"))
      expect(audit.body.data[0].request_id).toBe(document.headers.get("request-id"))
    })

    it("answers 401 for unknown, missing and malformed tokens, without Authorization or X-Program-ID", async () => {
      for (const query of ["", "?session_token=", `?session_token=${"A".repeat(43)}`, "?session_token=%3Cscript%3E"]) {
        const response = await platform.request("GET", `/v1/cards/embed${query}`, { key: undefined, program: null })
        expectEnvelope(response, 401, { type: "authentication_error", code: "authentication_error", param: null })
      }
    })

    it("ends sessions when the card is reissued or closed", async () => {
      const card = await issueCard(platform, wallet.id)
      const first = await platform.request("POST", `/v1/cards/${card.id}/embed-sessions`)
      expect((await fetch(first.body.embed_url)).status).toBe(200)
      await platform.request("POST", `/v1/cards/${card.id}/reissue`)
      expect((await fetch(first.body.embed_url)).status).toBe(401)
      const second = await platform.request("POST", `/v1/cards/${card.id}/embed-sessions`)
      const { pan } = await reveal(platform, card.id)
      expect(await (await fetch(second.body.embed_url)).text()).toContain(`data-copy="${pan}"`)
      await platform.request("POST", `/v1/cards/${card.id}/close`)
      expect((await fetch(second.body.embed_url)).status).toBe(401)
    })
  })

  describe("session expiry", () => {
    let short: TestPlatform
    beforeAll(async () => {
      short = await startPlatform(kind, { embedSessionTtlSeconds: 1 })
    })
    afterAll(async () => {
      await short?.close()
    })

    it("answers 401 once expires_at has passed, and a new session works", async () => {
      const own = await createWallet(short)
      const card = await issueCard(short, own.id)
      const session = await short.request("POST", `/v1/cards/${card.id}/embed-sessions`)
      expect(Date.parse(session.body.expires_at) - Date.now()).toBeLessThanOrEqual(1000)
      expect((await fetch(session.body.embed_url)).status).toBe(200)
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, Date.parse(session.body.expires_at) - Date.now()) + 50))
      const expired = await short.request("GET", `/v1/cards/embed?session_token=${session.body.session_token}`, {
        key: undefined,
        program: null
      })
      expectEnvelope(expired, 401, { code: "authentication_error" })
      const fresh = await short.request("POST", `/v1/cards/${card.id}/embed-sessions`)
      expect(fresh.body.session_token).not.toBe(session.body.session_token)
      expect((await fetch(fresh.body.embed_url)).status).toBe(200)
    })
  })

  describe("simulated authorizations", () => {
    const authorize = (body: Record<string, unknown>) => platform.request("POST", "/v1/simulate/authorizations", { body })
    const balance = async (accountId: string) =>
      (await platform.request("GET", `/v1/financial-accounts/${accountId}`)).body.balance.amount as number

    it("approves within funds and controls: holds the amount (no book transfer yet) and emits transaction.updated", async () => {
      const own = await createWallet(platform)
      await fund(platform, own.financial_account_id, 10_000)
      const card = await issueCard(platform, own.id, { allowedMccCodes: ["5812"] })
      const response = await authorize({ card_id: card.id, amount: 2_500, mcc: "5812", merchant_name: "Corner Bistro" })
      expect(response.status, response.text).toBe(200)
      expect(response.body).toMatchObject({
        object: "transaction",
        status: "PENDING",
        amount: 2_500,
        authorized_amount: 2_500,
        pending_amount: 2_500,
        settled_amount: 0,
        currency: "USD",
        card_id: card.id,
        decline_reason: null,
        mcc: "5812",
        merchant_name: "Corner Bistro"
      })
      const account = await platform.request("GET", `/v1/financial-accounts/${own.financial_account_id}`)
      expect([account.body.balance.amount, account.body.pending_balance.amount, account.body.available_balance.amount]).toEqual([
        10_000, 2_500, 7_500
      ])
      const updated = (await events("transaction.updated")).find((event) => event.data.object.id === response.body.id)
      expect(updated?.data.object.status).toBe("PENDING")
      const transfers = await platform.request("GET", `/v1/transactions/${response.body.id}/book-transfers`)
      expect(transfers.body.total_count).toBe(0)
      expect(await balance(own.financial_account_id)).toBe(10_000)
    })

    it("declines with each reason, records a DECLINED transaction and moves no money", async () => {
      const own = await createWallet(platform)
      await fund(platform, own.financial_account_id, 1_000)
      const card = await issueCard(platform, own.id, { allowedMccCodes: ["5812", "5411"], blockedMccCodes: ["7995"] })
      const expectDecline = async (body: Record<string, unknown>, reason: string) => {
        const response = await authorize({ card_id: card.id, ...body })
        expect(response.status, response.text).toBe(200)
        expect(response.body).toMatchObject({ status: "DECLINED", decline_reason: reason, card_id: card.id })
        const updated = (await events("transaction.updated")).find((event) => event.data.object.id === response.body.id)
        expect(updated?.data.object.decline_reason).toBe(reason)
      }
      await expectDecline({ amount: 100, mcc: "5999" }, "MCC_NOT_ALLOWED")
      await expectDecline({ amount: 1_001, mcc: "5812" }, "INSUFFICIENT_FUNDS")
      const blocked = await issueCard(platform, own.id, { blockedMccCodes: ["7995"] })
      const blockedResponse = await authorize({ card_id: blocked.id, amount: 100, mcc: "7995" })
      expect(blockedResponse.body).toMatchObject({ status: "DECLINED", decline_reason: "MCC_BLOCKED" })
      await platform.request("POST", `/v1/cards/${card.id}/freeze`)
      await expectDecline({ amount: 100, mcc: "5812" }, "CARD_FROZEN")
      await platform.request("POST", `/v1/cards/${card.id}/close`)
      await expectDecline({ amount: 100, mcc: "5812" }, "CARD_CLOSED")
      expect(await balance(own.financial_account_id)).toBe(1_000)
      const declined = await platform.request("GET", `/v1/transactions?card_id=${card.id}&status=DECLINED`)
      expect(declined.body.total_count).toBe(4)
    })

    it("enforces spending periods over approved authorizations in UTC windows", async () => {
      const own = await createWallet(platform)
      await fund(platform, own.financial_account_id, 100_000)
      const perTransaction = await issueCard(platform, own.id, { spendingPeriod: { interval: "PER_TRANSACTION", amount: 1_000 } })
      expect((await authorize({ card_id: perTransaction.id, amount: 1_000, mcc: "5411" })).body.status).toBe("PENDING")
      expect((await authorize({ card_id: perTransaction.id, amount: 1_000, mcc: "5411" })).body.status).toBe("PENDING")
      expect((await authorize({ card_id: perTransaction.id, amount: 1_001, mcc: "5411" })).body.decline_reason).toBe(
        "SPENDING_LIMIT_EXCEEDED"
      )

      for (const interval of ["DAILY", "WEEKLY", "MONTHLY", "YEARLY", "ALL_TIME"]) {
        const card = await issueCard(platform, own.id, { spending_period: { interval, amount: 3_000 } })
        expect((await authorize({ card_id: card.id, amount: 2_000, mcc: "5411" })).body.status).toBe("PENDING")
        // Declines do not count toward the limit.
        expect((await authorize({ card_id: card.id, amount: 1_500, mcc: "5411" })).body.decline_reason).toBe("SPENDING_LIMIT_EXCEEDED")
        expect((await authorize({ card_id: card.id, amount: 1_000, mcc: "5411" })).body.status).toBe("PENDING")
        expect((await authorize({ card_id: card.id, amount: 1, mcc: "5411" })).body.decline_reason).toBe("SPENDING_LIMIT_EXCEEDED")
      }
    })

    it("never approves past the limit under concurrent authorizations", async () => {
      const own = await createWallet(platform)
      await fund(platform, own.financial_account_id, 100_000)
      const card = await issueCard(platform, own.id, { spendingPeriod: { interval: "DAILY", amount: 5_000 } })
      const results = await Promise.all(Array.from({ length: 10 }, () => authorize({ card_id: card.id, amount: 1_000, mcc: "5411" })))
      expect(results.every((response) => response.status === 200)).toBe(true)
      expect(results.filter((response) => response.body.status === "PENDING")).toHaveLength(5)
      const account = await platform.request("GET", `/v1/financial-accounts/${own.financial_account_id}`)
      expect([account.body.balance.amount, account.body.available_balance.amount]).toEqual([100_000, 95_000])
    })

    it("validates the request", async () => {
      const card = await issueCard(platform, wallet.id)
      expectEnvelope(await authorize({ card_id: uuid(), amount: 100, mcc: "5411" }), 404, { param: "card_id" })
      expectEnvelope(await authorize({ card_id: "x", amount: 100, mcc: "5411" }), 400, { param: "card_id" })
      expectEnvelope(await authorize({ card_id: card.id, amount: 0, mcc: "5411" }), 400, { param: "amount" })
      expectEnvelope(await authorize({ card_id: card.id, amount: 1.5, mcc: "5411" }), 400, { param: "amount" })
      expectEnvelope(await authorize({ card_id: card.id, amount: 100, mcc: "54" }), 400, { param: "mcc" })
      expectEnvelope(await authorize({ card_id: card.id, amount: 100 }), 400, { param: "mcc" })
      expectEnvelope(await authorize({ card_id: card.id, amount: 100, mcc: "5411", currency: "usd" }), 400, { param: "currency" })
      expectEnvelope(await authorize({ card_id: card.id, amount: 100, mcc: "5411", currency: "EUR" }), 422, {
        code: "currency_mismatch",
        param: "currency"
      })
    })
  })
})

describe("simulated authorizations in production", () => {
  it("are not served (404)", async () => {
    const platform = await startPlatform("sqlite", { environment: "production" })
    try {
      expectEnvelope(
        await platform.request("POST", "/v1/simulate/authorizations", { body: { card_id: uuid(), amount: 1, mcc: "5411" } }),
        404,
        { code: "not_found", param: null }
      )
      // No input reveals the route: an invalid body is the same 404, and so is a missing key (an
      // unknown URL is 404 before the key is looked at; test/security/sandbox-only-routes.test.ts).
      for (const body of [{ card_id: uuid(), amount: -5, mcc: "5411" }, { amount: "x" }, {}]) {
        expectEnvelope(await platform.request("POST", "/v1/simulate/authorizations", { body }), 404, { code: "not_found", param: null })
      }
      expectEnvelope(await platform.request("POST", "/v1/simulate/authorizations", { key: undefined, body: {} }), 404, {
        code: "not_found",
        param: null
      })
    } finally {
      await platform.close()
    }
  })
})
