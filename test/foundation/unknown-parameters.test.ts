import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { auditRecords, createWallet, fund, issueCard } from "../cards/helpers.js"
import { authorize, authorizeQuery, createClient, INTERACTION_URL, postForm, REDIRECT_URI } from "../oauth/support.js"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope, startPlatform, type TestPlatform, uuid } from "../support/platform.js"

// docs/api.md#requests-and-responses: a /v1 operation refuses a body field or query parameter it
// does not know (400 naming it, nothing written); the OAuth protocol endpoints ignore them.
describe.each(STORE_KINDS)("unknown parameters on %s", (kind) => {
  let platform: TestPlatform
  let wallet: { id: string; financial_account_id: string }

  beforeAll(async () => {
    platform = await startPlatform(kind, { oauthInteractionUrl: INTERACTION_URL })
    wallet = await createWallet(platform)
    await fund(platform, wallet.financial_account_id, 100_000)
  })
  afterAll(async () => {
    await platform?.close()
  })

  const expectUnknown = (response: Awaited<ReturnType<TestPlatform["request"]>>, param: string) => {
    const error = expectEnvelope(response, 400, { type: "invalid_request_error", code: "invalid_request", param })
    expect(error.message).toBe(`Received unknown parameter: ${param}`)
  }
  const count = async (path: string) => {
    const response = await platform.request("GET", `${path}${path.includes("?") ? "&" : "?"}page_size=1`)
    expect(response.status, response.text).toBe(200)
    return response.body.total_count as number
  }

  it("refuses a misspelled body field of a creation and writes nothing (the issue's card with no restrictions)", async () => {
    const cards = await count("/v1/cards")
    const events = await count("/v1/events?type=card.created")
    for (const misspelled of [{ allowed_mccs: ["5411"] }, { spending_limit: { interval: "DAILY", amount: 100 } }]) {
      const response = await platform.request("POST", "/v1/cards", {
        body: { wallet_id: wallet.id, type: "VIRTUAL", ...misspelled },
        idempotencyKey: uuid()
      })
      expectUnknown(response, Object.keys(misspelled)[0]!)
    }
    expect(await count("/v1/cards")).toBe(cards)
    expect(await count("/v1/events?type=card.created")).toBe(events)
  })

  it("names a nested unknown field by its path", async () => {
    const period = { interval: "DAILY", amount: 100, intervall: "WEEKLY" }
    expectUnknown(
      await platform.request("POST", "/v1/cards", { body: { wallet_id: wallet.id, type: "VIRTUAL", spending_period: period } }),
      "spending_period.intervall"
    )
    const card = await issueCard(platform, wallet.id)
    expectUnknown(await platform.request("PATCH", `/v1/cards/${card.id}`, { body: { spendingPeriod: period } }), "spendingPeriod.intervall")
    expectUnknown(
      await platform.request("POST", "/v1/wallets", { body: { holder: { name: "Ada", e_mail: "ada@example.com" } } }),
      "holder.e_mail"
    )
    expect((await platform.request("GET", `/v1/cards/${card.id}`)).body).toEqual(card)
  })

  it("refuses an unknown field of a batch item under its index, and of the batch itself", async () => {
    const transfer = { paymentRail: "fednow_instant", amount: 100, currency: "USD", to_financial_account_id: wallet.financial_account_id }
    const transfers = await count("/v1/transfers")
    // An item's error reads as that item's (as its other 400s do); param places it in the batch.
    const item = await platform.request("POST", "/v1/transfers/batch", {
      body: { atomic: true, transfers: [transfer, { ...transfer, amout: 5 }] }
    })
    expect(expectEnvelope(item, 400, { code: "invalid_request", param: "transfers.1.amout" }).message).toBe(
      "Received unknown parameter: amout"
    )
    expectUnknown(await platform.request("POST", "/v1/transfers/batch", { body: { atomik: true, transfers: [transfer] } }), "atomik")
    expectUnknown(await platform.request("POST", "/v1/transfers", { body: { ...transfer, descripton: "rent" } }), "descripton")
    expect(await count("/v1/transfers")).toBe(transfers)
  })

  it("refuses an unknown query parameter, on lists and on operations that take no query", async () => {
    expectUnknown(await platform.request("GET", "/v1/cards?state=ACTIVE&stat=ACTIVE"), "stat")
    expectUnknown(await platform.request("GET", "/v1/events?types=card.created"), "types")
    const card = await issueCard(platform, wallet.id)
    expectUnknown(await platform.request("GET", `/v1/cards/${card.id}?expand=wallet`), "expand")
    const wallets = await count("/v1/wallets")
    expectUnknown(await platform.request("POST", "/v1/wallets?currency=EUR", { body: { holder: { name: "Ada" } } }), "currency")
    expectUnknown(await platform.request("POST", `/v1/cards/${card.id}/freeze?now=1`), "now")
    expect(await count("/v1/wallets")).toBe(wallets)
    expect((await platform.request("GET", `/v1/cards/${card.id}`)).body.state).toBe("ACTIVE")
    // Organization-scoped and public /v1 operations too.
    expectUnknown(await platform.request("GET", "/v1/programs?limit=5", { program: null }), "limit")
    expectUnknown(await platform.request("GET", "/v1/cards/embed?session_token=x&theme=dark", { key: undefined, program: null }), "theme")
  })

  it("still answers 401 before naming an unknown parameter to a caller without a key", async () => {
    expectEnvelope(await platform.request("GET", "/v1/wallets?foo=1", { key: undefined }), 401)
  })

  it("accepts every declared spelling: aliases, paging aliases, an empty body", async () => {
    const card = await issueCard(platform, wallet.id, { allowed_mcc_codes: ["5411"], blockedMccCodes: ["7995"] })
    expect(card.allowed_mcc_codes).toEqual(["5411"])
    const sent = await platform.request("POST", "/v1/transfers", {
      body: {
        payment_rail: "book",
        amount: 1,
        currency: "USD",
        from_financial_account_id: wallet.financial_account_id,
        to_financial_account_id: (await createWallet(platform)).financial_account_id
      }
    })
    expect(sent.status, sent.text).toBe(200)
    expect((await platform.request("GET", "/v1/cards?page-size=1&order-by=created_at&ascending=false")).status).toBe(200)
    expect((await platform.request("POST", `/v1/cards/${card.id}/freeze`, { rawBody: "", headers: {} })).status).toBe(200)
  })

  // A POST that declares no body refuses any field of one (issue 43: expire {"amount":1} released the whole hold).
  describe("on an operation that takes no body", () => {
    const post = (path: string, body?: unknown) => platform.request("POST", path, body === undefined ? {} : { body })
    const get = async (path: string) => {
      const response = await platform.request("GET", path)
      expect(response.status, response.text).toBe(200)
      return response.body
    }

    it("refuses a field on expire and keeps the hold as it was; {} and no body still expire", async () => {
      const card = await issueCard(platform, wallet.id)
      const hold = await post("/v1/simulate/authorizations", { card_id: card.id, amount: 500, mcc: "5411" })
      expect(hold.status, hold.text).toBe(200)
      const before = await get(`/v1/transactions/${hold.body.id}`)
      const account = await get(`/v1/financial-accounts/${wallet.financial_account_id}`)
      expect(before.status).toBe("PENDING")
      expectUnknown(await post(`/v1/transactions/${hold.body.id}/expire`, { amount: 1 }), "amount")
      expect(await get(`/v1/transactions/${hold.body.id}`)).toEqual(before)
      expect(await get(`/v1/financial-accounts/${wallet.financial_account_id}`)).toEqual(account)
      const expired = await post(`/v1/transactions/${hold.body.id}/expire`, {})
      expect(expired.status, expired.text).toBe(200)
      expect(expired.body.status).not.toBe("PENDING")
    })

    it("refuses a field on freeze, unfreeze, reissue, reveal and embed-sessions, changing and recording nothing", async () => {
      const card = await issueCard(platform, wallet.id)
      const audit = await auditRecords(platform, card.id)
      expectUnknown(await post(`/v1/cards/${card.id}/freeze`, { state: "FROZEN" }), "state")
      expectUnknown(await post(`/v1/cards/${card.id}/reissue`, { keep_number: true }), "keep_number")
      expectUnknown(await post(`/v1/cards/${card.id}/close`, { reason: "lost" }), "reason")
      expectUnknown(await post(`/v1/cards/${card.id}/reveal`, { fields: ["pan"] }), "fields")
      expectUnknown(await post(`/v1/cards/${card.id}/embed-sessions`, { ttl_seconds: 86_400 }), "ttl_seconds")
      expect(await get(`/v1/cards/${card.id}`)).toEqual(card)
      expect(await auditRecords(platform, card.id)).toEqual(audit)
      // No body and {} are no fields.
      expect((await post(`/v1/cards/${card.id}/freeze`, {})).body.state).toBe("FROZEN")
      expectUnknown(await post(`/v1/cards/${card.id}/unfreeze`, { now: true }), "now")
      expect((await get(`/v1/cards/${card.id}`)).state).toBe("FROZEN")
      expect((await post(`/v1/cards/${card.id}/unfreeze`)).body.state).toBe("ACTIVE")
    })

    it("refuses a field on settle and leaves the transfer PENDING", async () => {
      const inbound = await post("/v1/transfers", {
        paymentRail: "ach_same_day",
        amount: 700,
        currency: "USD",
        to_financial_account_id: wallet.financial_account_id
      })
      expect(inbound.body.status, inbound.text).toBe("PENDING")
      expectUnknown(await post(`/v1/simulate/transfers/${inbound.body.id}/settle`, { status: "FAILED" }), "status")
      expect(await get(`/v1/transfers/${inbound.body.id}`)).toEqual(inbound.body)
      expect((await post(`/v1/simulate/transfers/${inbound.body.id}/settle`, {})).body.status).toBe("SETTLED")
    })

    it("refuses a field on a subscription's rotate-secret and test, and a body that is not an object", async () => {
      const created = await post("/v1/webhook-subscriptions", { url: "https://hooks.example.com/in", event_types: ["card.created"] })
      expect(created.status, created.text).toBe(200)
      const { secret: _, ...subscription } = created.body
      expectUnknown(await post(`/v1/webhook-subscriptions/${subscription.id}/rotate-secret`, { secret: "mine" }), "secret")
      expectUnknown(await post(`/v1/webhook-subscriptions/${subscription.id}/test`, { event_type: "card.created" }), "event_type")
      expect(await get(`/v1/webhook-subscriptions/${subscription.id}`)).toEqual(subscription)
      expect((await get(`/v1/webhook-attempts?webhook_subscription_id=${subscription.id}`)).data).toEqual([])
      // Not an object, or not JSON: no body a payload route would take either.
      for (const rawBody of ["[]", '"rotate"', "1", "null", "true", "{"]) {
        const response = await platform.request("POST", `/v1/webhook-subscriptions/${subscription.id}/rotate-secret`, {
          rawBody,
          headers: { "content-type": "application/json" }
        })
        expectEnvelope(response, 400, { code: "invalid_request", param: null })
      }
      expect(await get(`/v1/webhook-subscriptions/${subscription.id}`)).toEqual(subscription)
      const rotated = await post(`/v1/webhook-subscriptions/${subscription.id}/rotate-secret`, {})
      expect(rotated.status, rotated.text).toBe(200)
      expect(rotated.body.secret).not.toBe(created.body.secret)
    })

    it("refuses a field on every /v1 POST the API document shows without a body, present and future", async () => {
      const document = await platform.request("GET", "/openapi.json", { key: undefined, program: null })
      expect(document.status).toBe(200)
      const bodiless = Object.entries(document.body.paths as Record<string, Record<string, { requestBody?: unknown }>>)
        .filter(
          ([path, operations]) => path.startsWith("/v1/") && operations.post !== undefined && operations.post.requestBody === undefined
        )
        .map(([path]) => path)
      // The document lists the issue's routes, so the walk below is not empty.
      for (const path of [
        "/v1/transactions/{transaction_id}/expire",
        "/v1/cards/{card_id}/freeze",
        "/v1/cards/{card_id}/reveal",
        "/v1/simulate/transfers/{transfer_id}/settle",
        "/v1/webhook-subscriptions/{webhook_subscription_id}/rotate-secret",
        "/v1/webhook-subscriptions/{webhook_subscription_id}/test",
        "/v1/webhook-portal/subscriptions/{webhook_subscription_id}/test",
        "/v1/oauth-clients/{oauth_client_id}/rotate-secret"
      ]) {
        expect(bodiless).toContain(path)
      }
      const session = await post("/v1/webhook-portal-sessions", {})
      expect(session.status, session.text).toBe(200)
      const portalToken = new URL(session.body.url).searchParams.get("session_token")!
      for (const template of bodiless) {
        // Unknown ids: the field is refused before the operation looks anything up.
        const path = template.replace(/\{[^}]+\}/g, () => uuid())
        const credentials = template.startsWith("/v1/webhook-portal/")
          ? { key: undefined, program: null, headers: { authorization: `Bearer ${portalToken}` } }
          : {}
        const response = await platform.request("POST", path, { ...credentials, body: { unexpected: 1 }, idempotencyKey: uuid() })
        expect(response.status, `${template}: ${response.text}`).toBe(400)
        expectUnknown(response, "unexpected")
      }
    })
  })

  it("leaves the OAuth protocol endpoints ignoring what they do not know (RFC 6749 §3.1)", async () => {
    const metadata = await fetch(`${platform.baseUrl}/.well-known/oauth-authorization-server?unknown=1`)
    expect(metadata.status).toBe(200)
    const client = await createClient(platform)
    const start = await authorize(platform, `${authorizeQuery(client)}&prompt=consent&unknown=1`)
    expect(start.status, start.text).toBe(302)
    expect(start.location!.startsWith(INTERACTION_URL)).toBe(true)
    const token = await postForm(platform, "/oauth/token", {
      grant_type: "authorization_code",
      code: "not-a-code",
      redirect_uri: REDIRECT_URI,
      client_id: client.client_id,
      client_secret: client.client_secret!,
      code_verifier: "a".repeat(43),
      unknown: "1"
    })
    // The code is refused for what it is, not for the extra field.
    expect(token.status).toBe(400)
    expect(token.body.error).toBe("invalid_grant")
  })
})
