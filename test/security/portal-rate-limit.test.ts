import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope, startPlatform, type TestPlatform } from "../support/platform.js"

/**
 * docs/webhooks.md#the-page-and-its-calls: each webhook portal session has a rate-limit bucket of
 * its own, so the customer holding a portal URL cannot spend the budget of the key that made it.
 */
describe.each(STORE_KINDS)("webhook portal rate limit on %s", (kind) => {
  let platform: TestPlatform
  beforeAll(async () => {
    // A burst of 3 that does not refill within the test (a token every 100 s).
    platform = await startPlatform(kind, { rateLimitBurst: 3, rateLimitPerSecond: 0.01 })
  })
  afterAll(async () => {
    await platform?.close()
  })

  const portalToken = async () => {
    const response = await platform.request("POST", "/v1/webhook-portal-sessions", { body: { scope_tag: "customer-a" } })
    expect(response.status, response.text).toBe(200)
    return new URL(response.body.url).searchParams.get("session_token")!
  }
  const portalList = (token: string) =>
    platform.request("GET", "/v1/webhook-portal/subscriptions", {
      key: undefined,
      program: null,
      headers: { authorization: `Bearer ${token}` }
    })

  it("spends a bucket per session, never the creating key's", async () => {
    // The key spends two of its three tokens creating two sessions.
    const first = await portalToken()
    const second = await portalToken()

    // Each session gets the whole burst, then 429 with Retry-After; the other session's is its own.
    for (const token of [first, second]) {
      for (let i = 0; i < 3; i++) {
        const response = await portalList(token)
        expect(response.status, response.text).toBe(200)
      }
      const limited = await portalList(token)
      expectEnvelope(limited, 429, { type: "rate_limit_error", code: "rate_limited", param: null })
      expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
    }

    // The key still has its third token, then its own bucket runs dry.
    const own = await platform.request("GET", "/v1/cards")
    expect(own.status, own.text).toBe(200)
    expectEnvelope(await platform.request("GET", "/v1/cards"), 429, { code: "rate_limited" })
    // The sessions' buckets are untouched by the key's spending: still empty, not refilled.
    expectEnvelope(await portalList(first), 429, { code: "rate_limited" })
  })
})
