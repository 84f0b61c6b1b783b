import * as oauth from "oauth4webapi"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope, type TestPlatform } from "../support/platform.js"
import { dumpDatabase } from "../foundation/fixtures.js"
import { consent, type CreatedClient, createClient, discover, insecure, pkce, REDIRECT_URI, startOAuthPlatform } from "./support.js"

// docs/oauth.md: the whole flow driven by oauth4webapi (panva), a client library nobody here wrote.
describe.each(STORE_KINDS)("OAuth 2.1 code flow with oauth4webapi on %s", (kind) => {
  let platform: TestPlatform
  let as: oauth.AuthorizationServer
  beforeAll(async () => {
    platform = await startOAuthPlatform(kind)
    as = await discover(platform)
  })
  afterAll(async () => {
    await platform?.close()
  })

  /** Runs the code flow for a client; returns the token response. */
  const codeFlow = async (created: CreatedClient, clientAuth: oauth.ClientAuth, scopes = ["read", "write"]) => {
    const client: oauth.Client = { client_id: created.client_id }
    const { challenge, verifier } = await pkce()
    const state = oauth.generateRandomState()
    const callback = await consent(platform, created, { challenge, scopes, state })
    const params = oauth.validateAuthResponse(as, client, callback, state)
    const response = await oauth.authorizationCodeGrantRequest(as, client, clientAuth, params, REDIRECT_URI, verifier, insecure)
    expect(response.headers.get("cache-control")).toBe("no-store")
    return oauth.processAuthorizationCodeResponse(as, client, response)
  }

  it("discovers the server's metadata (RFC 8414), issuer = ISSUING_BASE_URL", async () => {
    expect(as.issuer).toBe(platform.baseUrl)
    expect(as.token_endpoint).toBe(`${platform.baseUrl}/oauth/token`)
    expect(as.code_challenge_methods_supported).toEqual(["S256"])
    expect(as.authorization_response_iss_parameter_supported).toBe(true)
    expect(as.revocation_endpoint).toBe(`${platform.baseUrl}/oauth/revoke`)
    expect(as.introspection_endpoint).toBe(`${platform.baseUrl}/oauth/introspect`)
  })

  it("runs the code flow with PKCE for a confidential client (client_secret_basic), and the token works on /v1", async () => {
    const created = await createClient(platform)
    const tokens = await codeFlow(created, oauth.ClientSecretBasic(created.client_secret!))
    expect(tokens.token_type).toBe("bearer")
    expect(tokens.access_token).toMatch(/^at_/)
    expect(tokens.refresh_token).toMatch(/^rt_/)
    expect(tokens.expires_in).toBe(900)
    expect(tokens.scope).toBe("read write")
    const cards = await platform.request("GET", "/v1/cards", { key: tokens.access_token })
    expect(cards.status, cards.text).toBe(200)
    const wallet = await platform.request("POST", "/v1/wallets", { key: tokens.access_token, body: { holder: { name: "Ada" } } })
    expect(wallet.status, wallet.text).toBe(200)
  })

  it("runs the code flow for a confidential client with client_secret_post, and for a public client", async () => {
    const confidential = await createClient(platform)
    const posted = await codeFlow(confidential, oauth.ClientSecretPost(confidential.client_secret!))
    expect(posted.access_token).toMatch(/^at_/)
    const publicClient = await createClient(platform, { type: "public", scopes: ["read"] })
    expect(publicClient.client_secret).toBeUndefined()
    const tokens = await codeFlow(publicClient, oauth.None(), ["read"])
    expect(tokens.scope).toBe("read")
    expect((await platform.request("GET", "/v1/wallets", { key: tokens.access_token })).status).toBe(200)
  })

  it("refreshes with rotation: a new pair each time, the old refresh token retired", async () => {
    const created = await createClient(platform)
    const client: oauth.Client = { client_id: created.client_id }
    const auth = oauth.ClientSecretBasic(created.client_secret!)
    const first = await codeFlow(created, auth)
    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, auth, first.refresh_token!, insecure)
    )
    expect(refreshed.refresh_token).not.toBe(first.refresh_token)
    expect(refreshed.access_token).not.toBe(first.access_token)
    expect((await platform.request("GET", "/v1/cards", { key: refreshed.access_token })).status).toBe(200)
    // A narrower scope on refresh narrows the new access token only.
    const narrowed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, auth, refreshed.refresh_token!, {
        ...insecure,
        additionalParameters: { scope: "read" }
      })
    )
    expect(narrowed.scope).toBe("read")
    expectEnvelope(await platform.request("POST", "/v1/wallets", { key: narrowed.access_token, body: { holder: { name: "Ada" } } }), 403, {
      code: "permission_denied"
    })
    const wide = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, auth, narrowed.refresh_token!, insecure)
    )
    expect(wide.scope).toBe("read write")
  })

  it("introspects (RFC 7662) and revokes (RFC 7009): an access token alone, then a refresh token and its whole grant", async () => {
    const created = await createClient(platform)
    const client: oauth.Client = { client_id: created.client_id }
    const auth = oauth.ClientSecretPost(created.client_secret!)
    const tokens = await codeFlow(created, auth)
    const introspect = async (token: string) =>
      oauth.processIntrospectionResponse(as, client, await oauth.introspectionRequest(as, client, auth, token, insecure))
    const active = await introspect(tokens.access_token)
    expect(active.active).toBe(true)
    expect(active.client_id).toBe(created.client_id)
    expect(active.scope).toBe("read write")
    expect(active.token_type).toBe("access_token")
    expect(active.program_ids).toEqual([platform.org.program_id])
    expect((await introspect(tokens.refresh_token!)).active).toBe(true)
    expect((await introspect("at_unknown_token_value")).active).toBe(false)

    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, auth, tokens.access_token, insecure))
    expect((await introspect(tokens.access_token)).active).toBe(false)
    expectEnvelope(await platform.request("GET", "/v1/cards", { key: tokens.access_token }), 401, { code: "authentication_error" })

    // The refresh token still works; revoking it revokes the grant with every token of it.
    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token!, insecure)
    )
    expect((await platform.request("GET", "/v1/cards", { key: refreshed.access_token })).status).toBe(200)
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, auth, refreshed.refresh_token!, insecure))
    expectEnvelope(await platform.request("GET", "/v1/cards", { key: refreshed.access_token }), 401, { code: "authentication_error" })
    expect((await introspect(refreshed.refresh_token!)).active).toBe(false)
    // Revoking an unknown token is answered like a known one (RFC 7009 §2.2).
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, auth, "rt_never_issued", insecure))
  })

  it("emits oauth_grant.created and oauth_grant.revoked on the granted program", async () => {
    const created = await createClient(platform)
    const auth = oauth.ClientSecretBasic(created.client_secret!)
    const tokens = await codeFlow(created, auth)
    const client: oauth.Client = { client_id: created.client_id }
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, auth, tokens.refresh_token!, insecure))
    const events = async (type: string) =>
      ((await platform.request("GET", `/v1/events?type=${type}&page_size=100`)).body.data as Array<any>).filter(
        (event) => event.data.object.client_id === created.client_id
      )
    const [createdEvent] = await events("oauth_grant.created")
    expect(createdEvent.program_id).toBe(platform.org.program_id)
    expect(createdEvent.data.object).toMatchObject({ object: "oauth_grant", program_ids: [platform.org.program_id], revoked_at: null })
    const [revokedEvent] = await events("oauth_grant.revoked")
    expect(revokedEvent.data.object.id).toBe(createdEvent.data.object.id)
    expect(typeof revokedEvent.data.object.revoked_at).toBe("string")
  })

  it("keeps client secrets, codes and tokens only as hashes", async () => {
    const created = await createClient(platform)
    const client: oauth.Client = { client_id: created.client_id }
    const { challenge, verifier } = await pkce()
    const callback = await consent(platform, created, { challenge, state: "s" })
    const code = callback.searchParams.get("code")!
    const auth = oauth.ClientSecretBasic(created.client_secret!)
    const params = oauth.validateAuthResponse(as, client, callback, "s")
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, auth, params, REDIRECT_URI, verifier, insecure)
    )
    const dump = await dumpDatabase(platform)
    for (const secret of [created.client_secret!, code, tokens.access_token, tokens.refresh_token!]) expect(dump).not.toContain(secret)
  })
})
