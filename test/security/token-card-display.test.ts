import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { authorize, authorizeQuery, createClient, interactionOf, startOAuthPlatform } from "../oauth/support.js"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope, type TestPlatform } from "../support/platform.js"
import { tokensFor } from "./support.js"

// docs/oauth.md#scopes: `write` includes card display, so only a key with card_display grants it;
// an embed session created with a token works, and dies with the token's grant.
describe.each(STORE_KINDS)("card display through OAuth tokens on %s", (kind) => {
  let platform: TestPlatform
  let cardId: string
  beforeAll(async () => {
    platform = await startOAuthPlatform(kind)
    const wallet = await platform.request("POST", "/v1/wallets", { body: { holder: { name: "Ada" } } })
    const card = await platform.request("POST", "/v1/cards", { body: { wallet_id: wallet.body.id, type: "VIRTUAL" } })
    cardId = card.body.id
  })
  afterAll(async () => {
    await platform?.close()
  })

  const embedDocument = (url: string) => fetch(url).then((response) => response.status)

  it("refuses a write grant from a key without card_display (403, param scopes), not a read one", async () => {
    const noDisplay = await platform.request("POST", "/v1/api-keys", {
      program: null,
      body: { name: "no display", role: "admin", card_display: false }
    })
    const client = await createClient(platform)
    const grant = async (scopes: Array<string>) => {
      const start = await authorize(platform, authorizeQuery(client, { scope: scopes.join(" ") }))
      return platform.request("POST", `/v1/oauth/interactions/${interactionOf(start.location)}/grant`, {
        key: noDisplay.body.secret,
        program: null,
        body: { program_ids: [platform.org.program_id], scopes }
      })
    }
    expectEnvelope(await grant(["read", "write"]), 403, { code: "permission_denied", param: "scopes" })
    expect((await grant(["read"])).status).toBe(200)
  })

  it("makes a token's embed session work, and die with its grant", async () => {
    const client = await createClient(platform)
    const tokens = await tokensFor(platform, client)
    const session = await platform.request("POST", `/v1/cards/${cardId}/embed-sessions`, { key: tokens.access_token })
    expect(session.status, session.text).toBe(200)
    expect(await embedDocument(session.body.embed_url)).toBe(200)
    const grants = await platform.request("GET", "/v1/oauth/grants?page_size=100", { program: null })
    const grantId = grants.body.data.find((grant: { client_id: string }) => grant.client_id === client.client_id).id
    expect((await platform.request("DELETE", `/v1/oauth/grants/${grantId}`, { program: null })).status).toBe(200)
    expect(await embedDocument(session.body.embed_url)).toBe(401)
  })

  it("lets a read token create no embed session, and says so of a token, not of an API key", async () => {
    const client = await createClient(platform)
    const tokens = await tokensFor(platform, client, { scopes: ["read"] })
    const refused = await platform.request("POST", `/v1/cards/${cardId}/embed-sessions`, { key: tokens.access_token })
    expectEnvelope(refused, 403, { code: "permission_denied" })
    expect(refused.body.error.message).not.toMatch(/API key/)
  })
})
