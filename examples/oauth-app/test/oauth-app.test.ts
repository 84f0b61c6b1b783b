import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startPlatform, type TestPlatform } from "../../../test/support/platform.js"
import { startOAuthApp } from "../app.js"
import { startConsentServer } from "../consent.js"

/** A browser: follows redirects by hand (to see each hop) and keeps cookies per origin. */
const browser = () => {
  const cookies = new Map<string, string>()
  const get = async (url: string, init: RequestInit = {}) => {
    const origin = new URL(url).origin
    const headers = new Headers(init.headers)
    if (cookies.has(origin)) headers.set("cookie", cookies.get(origin)!)
    const response = await fetch(url, { ...init, headers, redirect: "manual" })
    const cookie = response.headers.get("set-cookie")
    if (cookie !== null) cookies.set(origin, cookie.split(";")[0]!)
    return response
  }
  /** Follows redirects from `url` until a non-redirect answer; returns it and the hops. */
  const follow = async (url: string, init: RequestInit = {}) => {
    const hops: Array<string> = [url]
    let response = await get(url, init)
    while (response.status === 302) {
      const next = new URL(response.headers.get("location")!, hops.at(-1)).toString()
      hops.push(next)
      response = await get(next)
    }
    return { response, hops }
  }
  return { follow }
}

// examples/oauth-app: the connected application and the host's consent route against the real platform.
describe("examples/oauth-app", () => {
  const settings = { issuingUrl: "", adminKey: "", programIds: [] as Array<string> }
  let consent: Awaited<ReturnType<typeof startConsentServer>>
  let platform: TestPlatform
  let app: Awaited<ReturnType<typeof startOAuthApp>>
  beforeAll(async () => {
    consent = await startConsentServer({ settings })
    platform = await startPlatform("sqlite", { oauthInteractionUrl: `${consent.url}/consent` })
    Object.assign(settings, { issuingUrl: platform.baseUrl, adminKey: platform.org.api_key, programIds: [platform.org.program_id] })
    // The app's redirect URI is known once it listens: register the client after, then start it for real.
    const probe = await startOAuthApp({ issuer: platform.baseUrl, clientId: "x", clientSecret: "x", allowHttp: true })
    await probe.close()
    const port = Number(new URL(probe.url).port)
    const client = await platform.request("POST", "/v1/oauth-clients", {
      program: null,
      body: { name: "Example expense tool", type: "confidential", scopes: ["read", "write"], redirect_uris: [probe.redirectUri] }
    })
    expect(client.status, client.text).toBe(200)
    app = await startOAuthApp({
      issuer: platform.baseUrl,
      clientId: client.body.client_id,
      clientSecret: client.body.client_secret,
      port,
      allowHttp: true
    })
  })
  afterAll(async () => {
    await app?.close()
    await platform?.close()
    await consent?.close()
  })

  it("connects through the consent screen and reads the program's cards with an access token", async () => {
    const wallet = await platform.request("POST", "/v1/wallets", { body: { holder: { name: "Ada" } } })
    await platform.request("POST", "/v1/cards", { body: { wallet_id: wallet.body.id, type: "VIRTUAL" } })
    const user = browser()
    const toConsent = await user.follow(`${app.url}/connect`)
    expect(toConsent.response.status).toBe(200)
    expect(toConsent.hops[1]).toContain(`${platform.baseUrl}/oauth/authorize?`)
    const page = await toConsent.response.text()
    expect(page).toContain("Example expense tool asks for: read, write")
    const interaction = /name="interaction" value="([^"]+)"/.exec(page)![1]!

    const done = await user.follow(`${consent.url}/consent`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ interaction, decision: "allow" }).toString()
    })
    expect(done.hops.some((hop) => hop.startsWith(`${app.redirectUri}?code=`))).toBe(true)
    expect(done.response.status).toBe(200)
    const cards = await done.response.json()
    expect(cards.total_count).toBe(1)
    expect(cards.data[0].wallet_id).toBe(wallet.body.id)
  })

  it("shows a refusal when the user denies", async () => {
    const user = browser()
    const page = await (await user.follow(`${app.url}/connect`)).response.text()
    const interaction = /name="interaction" value="([^"]+)"/.exec(page)![1]!
    const denied = await user.follow(`${consent.url}/consent`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ interaction, decision: "deny" }).toString()
    })
    expect(denied.response.status).toBe(403)
    expect(await denied.response.text()).toContain("access_denied")
  })
})
