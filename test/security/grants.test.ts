import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createClient, INTERACTION_URL, startOAuthPlatform } from "../oauth/support.js"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope, type ServedPlatform, servePlatform, TEST_VAULT_KEY, type TestPlatform, uuid } from "../support/platform.js"
import { refresh, tokensFor } from "./support.js"

// docs/oauth.md#incident-response: a grant is bound to the admin key that consented to it; revoking
// the key revokes its grants on every node at once; admins list and revoke grants.
describe.each(STORE_KINDS)("OAuth grants and their consenting key on %s", (kind) => {
  let platform: TestPlatform
  let other: ServedPlatform
  let cardId: string
  beforeAll(async () => {
    platform = await startOAuthPlatform(kind)
    // A second node on the same database, with its own caches and change feed.
    other = await servePlatform(platform.database, [TEST_VAULT_KEY], { oauthInteractionUrl: INTERACTION_URL })
    const wallet = await platform.request("POST", "/v1/wallets", { body: { holder: { name: "Ada" } } })
    const card = await platform.request("POST", "/v1/cards", { body: { wallet_id: wallet.body.id, type: "VIRTUAL" } })
    expect(card.status, card.text).toBe(200)
    cardId = card.body.id
  })
  afterAll(async () => {
    await other?.close()
    await platform?.close()
  })

  const adminKey = async (fields: Record<string, unknown> = {}) => {
    const response = await platform.request("POST", "/v1/api-keys", { program: null, body: { name: "consent", role: "admin", ...fields } })
    expect(response.status, response.text).toBe(200)
    return response.body as { id: string; secret: string }
  }
  const revealOn = (baseUrl: string, token: string) =>
    fetch(`${baseUrl}/v1/cards/${cardId}/reveal`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "x-program-id": platform.org.program_id }
    })
  const grants = async (key = platform.org.api_key) => {
    const response = await platform.request("GET", "/v1/oauth/grants?page_size=100", { key, program: null })
    expect(response.status, response.text).toBe(200)
    return response.body as { data: Array<{ id: string; api_key_id: string | null; revoked_at: string | null }>; total_count: number }
  }

  it("revokes the grants of a revoked key: its tokens stop revealing and refreshing, on every node at once", async () => {
    const consenter = await adminKey({ pan_reveal: true })
    const client = await createClient(platform, { scopes: ["read", "write", "pan_reveal"] })
    const tokens = await tokensFor(platform, client, { scopes: ["read", "pan_reveal"], adminKey: consenter.secret })
    // Both nodes serve (and cache) the token before the revocation.
    expect((await revealOn(platform.baseUrl, tokens.access_token)).status).toBe(200)
    expect((await revealOn(other.baseUrl, tokens.access_token)).status).toBe(200)
    const listed = (await grants()).data.find((grant) => grant.api_key_id === consenter.id)
    expect(listed).toBeDefined()

    const revoked = await platform.request("DELETE", `/v1/api-keys/${consenter.id}`, { program: null })
    expect(revoked.status, revoked.text).toBe(200)
    expect((await revealOn(other.baseUrl, tokens.access_token)).status).toBe(401)
    expect((await revealOn(platform.baseUrl, tokens.access_token)).status).toBe(401)
    const refreshed = await refresh(platform, client, tokens.refresh_token!)
    expect(refreshed.ok).toBe(false)
    expect((await grants()).data.some((grant) => grant.id === listed!.id)).toBe(false)
    const events = await platform.request("GET", "/v1/events?type=oauth_grant.revoked&page_size=100")
    expect(events.body.data.some((event: any) => event.data.object.id === listed!.id)).toBe(true)
  })

  it("keeps the grants of other keys when one key is revoked", async () => {
    const first = await adminKey()
    const second = await adminKey()
    const client = await createClient(platform)
    const kept = await tokensFor(platform, client, { adminKey: second.secret })
    const lost = await tokensFor(platform, client, { adminKey: first.secret })
    expect((await platform.request("DELETE", `/v1/api-keys/${first.id}`, { program: null })).status).toBe(200)
    expect((await platform.request("GET", "/v1/wallets", { key: lost.access_token })).status).toBe(401)
    expect((await platform.request("GET", "/v1/wallets", { key: kept.access_token })).status).toBe(200)
  })

  it("lists grants and revokes one for admin keys only (GET /v1/oauth/grants, DELETE /v1/oauth/grants/{id})", async () => {
    const client = await createClient(platform)
    const tokens = await tokensFor(platform, client)
    const page = await grants()
    expect(page.total_count).toBe(page.data.length)
    const grant = page.data[0]!
    expect(grant).toMatchObject({ object: "oauth_grant", client_id: client.client_id, scopes: ["read", "write"], revoked_at: null })
    expect((grant as any).organization_id).toBeUndefined()

    const developer = await platform.request("POST", "/v1/api-keys", { program: null, body: { name: "dev", role: "developer" } })
    for (const key of [developer.body.secret, tokens.access_token]) {
      expectEnvelope(await platform.request("GET", "/v1/oauth/grants", { key, program: null }), 403, { code: "permission_denied" })
      expectEnvelope(await platform.request("DELETE", `/v1/oauth/grants/${grant.id}`, { key, program: null }), 403, {
        code: "permission_denied"
      })
    }
    const stranger = await platform.createOrganization("Stranger")
    expectEnvelope(await platform.request("DELETE", `/v1/oauth/grants/${grant.id}`, { key: stranger.api_key, program: null }), 404, {
      code: "not_found",
      param: "grant_id"
    })
    for (const id of [uuid(), "not-a-uuid"]) {
      expectEnvelope(await platform.request("DELETE", `/v1/oauth/grants/${id}`, { program: null }), 404, { param: "grant_id" })
    }

    const deleted = await platform.request("DELETE", `/v1/oauth/grants/${grant.id}`, { program: null })
    expect(deleted.status, deleted.text).toBe(200)
    expect(deleted.body.id).toBe(grant.id)
    expect(deleted.body.revoked_at).not.toBeNull()
    expect((await platform.request("GET", "/v1/wallets", { key: tokens.access_token })).status).toBe(401)
    expect(
      (
        await fetch(`${other.baseUrl}/v1/wallets`, {
          headers: { authorization: `Bearer ${tokens.access_token}`, "x-program-id": platform.org.program_id }
        })
      ).status
    ).toBe(401)
    expect((await refresh(platform, client, tokens.refresh_token!)).ok).toBe(false)
    expectEnvelope(await platform.request("DELETE", `/v1/oauth/grants/${grant.id}`, { program: null }), 404, { param: "grant_id" })
    expect((await grants()).data.some((listed) => listed.id === grant.id)).toBe(false)
  })
})
