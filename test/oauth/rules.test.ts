import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createKey, createProgram, onDatabase } from "../foundation/fixtures.js"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope, type TestPlatform, uuid } from "../support/platform.js"
import {
  authorize,
  authorizeQuery,
  consent,
  type CreatedClient,
  createClient,
  exchange,
  expectOAuthError,
  interactionOf,
  pkce,
  postForm,
  REDIRECT_URI,
  startOAuthPlatform
} from "./support.js"

// docs/oauth.md#rules: a test per rule, hostile and sloppy clients being the normal case; never a 500.
describe.each(STORE_KINDS)("OAuth rules on %s", (kind) => {
  let platform: TestPlatform
  let client: CreatedClient
  beforeAll(async () => {
    platform = await startOAuthPlatform(kind)
    client = await createClient(platform)
  })
  afterAll(async () => {
    await platform?.close()
  })

  const count = (table: string) => onDatabase(platform, async (query) => Number((await query(`SELECT COUNT(*) AS n FROM ${table}`))[0]!.n))

  /** Consent and code exchange; returns the token response body. */
  const tokensFor = async (options: { scopes?: Array<string>; programIds?: Array<string>; of?: CreatedClient; adminKey?: string } = {}) => {
    const { challenge, verifier } = await pkce()
    const callback = await consent(platform, options.of ?? client, { challenge, ...options })
    const response = await exchange(platform, options.of ?? client, { code: callback.searchParams.get("code")!, code_verifier: verifier })
    expect(response.status, response.text).toBe(200)
    return response.body as { access_token: string; refresh_token: string; scope: string }
  }

  describe("GET /oauth/authorize", () => {
    it("shows an HTML page, never a redirect, for an unknown client or a redirect_uri not registered exactly", async () => {
      for (const query of [
        authorizeQuery({ client_id: "client_unknown" }),
        authorizeQuery(client, { client_id: null }),
        authorizeQuery(client, { redirect_uri: null }),
        authorizeQuery(client, { redirect_uri: `${REDIRECT_URI}/` }),
        authorizeQuery(client, { redirect_uri: REDIRECT_URI.toUpperCase() }),
        authorizeQuery(client, { redirect_uri: "https://attacker.example/callback" }),
        `${authorizeQuery(client)}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}`
      ]) {
        const response = await authorize(platform, query)
        expect(response.status, query).toBe(400)
        expect(response.location).toBeNull()
        expect(response.headers.get("content-type")).toContain("text/html")
        expect(response.text).toContain("Authorization request refused")
      }
    })

    const refusedWith = async (overrides: Record<string, string | null>, error: string, description: RegExp) => {
      const before = await count("issuing_oauth_interactions")
      const response = await authorize(platform, authorizeQuery(client, overrides))
      expect(response.status).toBe(302)
      const location = new URL(response.location!)
      expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI)
      expect(location.searchParams.get("error")).toBe(error)
      expect(location.searchParams.get("error_description")).toMatch(description)
      expect(location.searchParams.get("state")).toBe("st-123")
      expect(location.searchParams.get("iss")).toBe(platform.baseUrl)
      expect(await count("issuing_oauth_interactions")).toBe(before)
    }

    it("refuses a missing code_challenge_method", () => refusedWith({ code_challenge_method: null }, "invalid_request", /S256/))
    it("refuses the plain method", () => refusedWith({ code_challenge_method: "plain" }, "invalid_request", /plain/))
    it("refuses any other method", () => refusedWith({ code_challenge_method: "s256" }, "invalid_request", /S256/))
    it("refuses a missing code_challenge", () => refusedWith({ code_challenge: null }, "invalid_request", /code_challenge/))
    it("refuses a 42-character challenge", () => refusedWith({ code_challenge: "a".repeat(42) }, "invalid_request", /43/))
    it("refuses a 44-character challenge", () => refusedWith({ code_challenge: "a".repeat(44) }, "invalid_request", /43/))
    it("refuses a challenge outside base64url", () => refusedWith({ code_challenge: `${"a".repeat(42)}=` }, "invalid_request", /base64url/))
    it("refuses a response_type other than code", () => refusedWith({ response_type: "token" }, "unsupported_response_type", /code/))
    it("refuses a scope the client was not registered for", () => refusedWith({ scope: "read pan_reveal" }, "invalid_scope", /scope/))
    it("refuses a repeated parameter", async () => {
      const response = await authorize(platform, `${authorizeQuery(client)}&scope=read`)
      expect(new URL(response.location!).searchParams.get("error")).toBe("invalid_request")
    })

    it("sends a valid request to the consent page, with the interaction the host app reads", async () => {
      const response = await authorize(platform, authorizeQuery(client, { scope: "read" }))
      const interaction = await platform.request("GET", `/v1/oauth/interactions/${interactionOf(response.location)}`, { program: null })
      expect(interaction.status, interaction.text).toBe(200)
      expect(interaction.body).toMatchObject({
        object: "oauth_interaction",
        client: { id: client.id, client_id: client.client_id, name: "Expense tool", type: "confidential" },
        redirect_uri: REDIRECT_URI,
        scopes: ["read"],
        status: "pending"
      })
    })
  })

  describe("interactions", () => {
    const pending = async (scope = "read write") => interactionOf((await authorize(platform, authorizeQuery(client, { scope }))).location)
    const grant = (id: string, body: unknown, key = platform.org.api_key) =>
      platform.request("POST", `/v1/oauth/interactions/${id}/grant`, { key, program: null, body })

    it("decides once: a second grant or a deny afterwards is 409", async () => {
      const id = await pending()
      expect((await grant(id, { program_ids: [platform.org.program_id], scopes: ["read"] })).status).toBe(200)
      expectEnvelope(await grant(id, { program_ids: [platform.org.program_id], scopes: ["read"] }), 409, { code: "conflict" })
      expectEnvelope(await platform.request("POST", `/v1/oauth/interactions/${id}/deny`, { program: null }), 409, { code: "conflict" })
    })

    it("deny sends the browser back with access_denied, state and iss", async () => {
      const denied = await platform.request("POST", `/v1/oauth/interactions/${await pending()}/deny`, { program: null })
      expect(denied.status).toBe(200)
      const location = new URL(denied.body.redirect_to)
      expect(location.searchParams.get("error")).toBe("access_denied")
      expect(location.searchParams.get("state")).toBe("st-123")
      expect(location.searchParams.get("iss")).toBe(platform.baseUrl)
    })

    it("refuses wider scopes, foreign programs, an expired interaction, non-admin keys, unknown ids; writes nothing", async () => {
      const id = await pending("read")
      const grants = await count("issuing_oauth_grants")
      expectEnvelope(await grant(id, { program_ids: [platform.org.program_id], scopes: ["read", "write"] }), 400, { param: "scopes" })
      expectEnvelope(await grant(id, { program_ids: [], scopes: ["read"] }), 400, { param: "program_ids" })
      expectEnvelope(await grant(id, { program_ids: [platform.org.program_id], scopes: ["admin"] }), 400, { param: "scopes.0" })
      const other = await platform.createOrganization("Other")
      expectEnvelope(await grant(id, { program_ids: [other.program_id], scopes: ["read"] }), 400, { param: "program_ids" })
      const developer = await createKey(platform, { role: "developer" })
      expectEnvelope(await grant(id, { program_ids: [platform.org.program_id], scopes: ["read"] }, developer.secret), 403, {
        code: "permission_denied"
      })
      // Another organization's admin does not see the interaction.
      expectEnvelope(await grant(id, { program_ids: [other.program_id], scopes: ["read"] }, other.api_key), 404, {
        param: "interaction_id"
      })
      expectEnvelope(await grant(uuid(), { program_ids: [platform.org.program_id], scopes: ["read"] }), 404, { param: "interaction_id" })
      await onDatabase(platform, (query) =>
        query(`UPDATE issuing_oauth_interactions SET expires_at = '2000-01-01T00:00:00.000Z' WHERE id = '${id}'`)
      )
      expectEnvelope(await grant(id, { program_ids: [platform.org.program_id], scopes: ["read"] }), 409, { code: "conflict" })
      expect(await count("issuing_oauth_grants")).toBe(grants)
    })
  })

  describe("POST /oauth/token", () => {
    const codeWith = async (challenge: string) => (await consent(platform, client, { challenge })).searchParams.get("code")!

    it("refuses a verifier with a forbidden character or of the wrong length, without spending the code", async () => {
      const { challenge, verifier } = await pkce()
      const code = await codeWith(challenge)
      for (const bad of [`${verifier.slice(0, 42)}+`, `${verifier.slice(0, 42)} `, verifier.slice(0, 42), "a".repeat(129)]) {
        expectOAuthError(await exchange(platform, client, { code, code_verifier: bad }), 400, "invalid_request")
      }
      expectOAuthError(await exchange(platform, client, { code }), 400, "invalid_request")
      expect((await exchange(platform, client, { code, code_verifier: verifier })).status).toBe(200)
    })

    it("refuses a wrong verifier", async () => {
      const { challenge } = await pkce()
      const other = await pkce()
      expectOAuthError(
        await exchange(platform, client, { code: await codeWith(challenge), code_verifier: other.verifier }),
        400,
        "invalid_grant"
      )
    })

    it("refuses a mismatched redirect_uri", async () => {
      const { challenge, verifier } = await pkce()
      const code = await codeWith(challenge)
      const response = await exchange(platform, client, { code, code_verifier: verifier, redirect_uri: "https://app.example/other" })
      expectOAuthError(response, 400, "invalid_grant")
    })

    it("refuses an expired code", async () => {
      const { challenge, verifier } = await pkce()
      const code = await codeWith(challenge)
      await onDatabase(platform, (query) =>
        query("UPDATE issuing_oauth_codes SET expires_at = '2000-01-01T00:00:00.000Z' WHERE used_at IS NULL")
      )
      expectOAuthError(await exchange(platform, client, { code, code_verifier: verifier }), 400, "invalid_grant")
    })

    it("refuses a reused code and revokes the tokens its first use issued", async () => {
      const { challenge, verifier } = await pkce()
      const code = await codeWith(challenge)
      const first = await exchange(platform, client, { code, code_verifier: verifier })
      expect(first.status).toBe(200)
      expect((await platform.request("GET", "/v1/cards", { key: first.body.access_token })).status).toBe(200)
      expectOAuthError(await exchange(platform, client, { code, code_verifier: verifier }), 400, "invalid_grant")
      expectEnvelope(await platform.request("GET", "/v1/cards", { key: first.body.access_token }), 401, { code: "authentication_error" })
      const refresh = await postForm(platform, "/oauth/token", {
        grant_type: "refresh_token",
        refresh_token: first.body.refresh_token,
        client_id: client.client_id,
        client_secret: client.client_secret!
      })
      expectOAuthError(refresh, 400, "invalid_grant")
    })

    it("lets exactly one of two racing refreshes with the same token win, then revokes the grant", async () => {
      const tokens = await tokensFor()
      const refresh = () =>
        postForm(platform, "/oauth/token", {
          grant_type: "refresh_token",
          refresh_token: tokens.refresh_token,
          client_id: client.client_id,
          client_secret: client.client_secret!
        })
      const results = await Promise.all([refresh(), refresh()])
      expect(results.map((result) => result.status).sort()).toEqual([200, 400])
      const winner = results.find((result) => result.status === 200)!
      expectOAuthError(results.find((result) => result.status === 400)!, 400, "invalid_grant")
      // The grant is revoked: the winner's new tokens are dead too.
      expectEnvelope(await platform.request("GET", "/v1/cards", { key: winner.body.access_token }), 401, { code: "authentication_error" })
      expectEnvelope(await platform.request("GET", "/v1/cards", { key: tokens.access_token }), 401, { code: "authentication_error" })
      const again = await postForm(platform, "/oauth/token", {
        grant_type: "refresh_token",
        refresh_token: winner.body.refresh_token,
        client_id: client.client_id,
        client_secret: client.client_secret!
      })
      expectOAuthError(again, 400, "invalid_grant")
    })

    it("authenticates confidential clients: wrong or missing secret, two methods at once, another client's code", async () => {
      const { challenge, verifier } = await pkce()
      const code = await codeWith(challenge)
      const base = { grant_type: "authorization_code", code, code_verifier: verifier, redirect_uri: REDIRECT_URI }
      const wrong = await postForm(platform, "/oauth/token", { ...base, client_id: client.client_id, client_secret: "cs_wrong" })
      expectOAuthError(wrong, 401, "invalid_client")
      expect(wrong.headers.get("www-authenticate")).toContain("Basic")
      expectOAuthError(await postForm(platform, "/oauth/token", { ...base, client_id: client.client_id }), 401, "invalid_client")
      expectOAuthError(await postForm(platform, "/oauth/token", base), 401, "invalid_client")
      const basic = `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString("base64")}`
      const both = await postForm(platform, "/oauth/token", { ...base, client_secret: client.client_secret! }, { authorization: basic })
      expectOAuthError(both, 400, "invalid_request")
      expectOAuthError(await postForm(platform, "/oauth/token", base, { authorization: "Basic !!!" }), 401, "invalid_client")
      const other = await createClient(platform)
      expectOAuthError(await exchange(platform, other, { code, code_verifier: verifier }), 400, "invalid_grant")
      // None of that spent the code.
      expect((await postForm(platform, "/oauth/token", base, { authorization: basic })).status).toBe(200)
    })

    it("refuses other content types, missing or unknown grant types and repeated parameters", async () => {
      const json = await fetch(`${platform.baseUrl}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ grant_type: "refresh_token" })
      })
      expect(json.status).toBe(400)
      expect((await json.json()).error).toBe("invalid_request")
      const auth = { client_id: client.client_id, client_secret: client.client_secret! }
      expectOAuthError(await postForm(platform, "/oauth/token", auth), 400, "invalid_request")
      expectOAuthError(await postForm(platform, "/oauth/token", { ...auth, grant_type: "password" }), 400, "unsupported_grant_type")
      const repeated = await fetch(`${platform.baseUrl}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: `grant_type=refresh_token&grant_type=authorization_code&client_id=${client.client_id}`
      })
      expect(repeated.status).toBe(400)
      expect((await repeated.json()).error).toBe("invalid_request")
    })
  })

  describe("access tokens on /v1", () => {
    it("a read token cannot write; no token reaches programs, keys, OAuth clients or interactions", async () => {
      const tokens = await tokensFor({ scopes: ["read"] })
      expect((await platform.request("GET", "/v1/wallets", { key: tokens.access_token })).status).toBe(200)
      expectEnvelope(await platform.request("POST", "/v1/wallets", { key: tokens.access_token, body: { holder: { name: "A" } } }), 403, {
        code: "permission_denied"
      })
      const write = await tokensFor({ scopes: ["read", "write"] })
      for (const [method, path] of [
        ["GET", "/v1/programs"],
        ["POST", "/v1/programs"],
        ["GET", "/v1/api-keys"],
        ["POST", "/v1/api-keys"],
        ["GET", "/v1/oauth-clients"],
        ["POST", "/v1/oauth-clients"],
        ["DELETE", `/v1/oauth-clients/${client.id}`],
        ["GET", `/v1/oauth/interactions/${uuid()}`]
      ] as const) {
        const response = await platform.request(method, path, {
          key: write.access_token,
          program: null,
          body: method === "POST" ? {} : undefined
        })
        expectEnvelope(response, 403, { code: "permission_denied" })
      }
    })

    it("reveals a card only with pan_reveal", async () => {
      const panClient = await createClient(platform, { scopes: ["read", "write", "pan_reveal"] })
      const wallet = await platform.request("POST", "/v1/wallets", { body: { holder: { name: "Ada" } } })
      const card = await platform.request("POST", "/v1/cards", { body: { wallet_id: wallet.body.id, type: "VIRTUAL" } })
      expect(card.status, card.text).toBe(200)
      const plain = await tokensFor({ of: panClient, scopes: ["read", "write"] })
      expectEnvelope(await platform.request("POST", `/v1/cards/${card.body.id}/reveal`, { key: plain.access_token }), 403, {
        code: "permission_denied"
      })
      const reveal = await tokensFor({ of: panClient, scopes: ["read", "pan_reveal"] })
      const revealed = await platform.request("POST", `/v1/cards/${card.body.id}/reveal`, { key: reveal.access_token })
      expect(revealed.status, revealed.text).toBe(200)
      expect(revealed.body.object).toBe("card_reveal")
    })

    it("acts only on the granted programs: 403 on another program, 404 for its resources, 403 on another organization's", async () => {
      const second = await createProgram(platform, "Second")
      const tokens = await tokensFor({ programIds: [platform.org.program_id] })
      expectEnvelope(await platform.request("GET", "/v1/wallets", { key: tokens.access_token, program: second.id }), 403, {
        param: "X-Program-ID"
      })
      const foreignWallet = await platform.request("POST", "/v1/wallets", { program: second.id, body: { holder: { name: "B" } } })
      expectEnvelope(await platform.request("GET", `/v1/wallets/${foreignWallet.body.id}`, { key: tokens.access_token }), 404, {
        code: "not_found"
      })
      const other = await platform.createOrganization("Elsewhere")
      expectEnvelope(await platform.request("GET", "/v1/wallets", { key: tokens.access_token, program: other.program_id }), 403, {
        param: "X-Program-ID"
      })
    })

    it("answers 401 once the access token has expired", async () => {
      const tokens = await tokensFor()
      // The token's end of life moved into the past in the database (no sleeping through 900 s).
      await onDatabase(platform, (query) =>
        query("UPDATE issuing_oauth_tokens SET expires_at = '2000-01-01T00:00:00.000Z' WHERE kind = 'access' AND revoked_at IS NULL")
      )
      expectEnvelope(await platform.request("GET", "/v1/cards", { key: tokens.access_token }), 401, { code: "authentication_error" })
    })

    it("rotating a client's secret retires the old one; deleting a client revokes every token at once", async () => {
      const own = await createClient(platform)
      const tokens = await tokensFor({ of: own })
      const rotated = await platform.request("POST", `/v1/oauth-clients/${own.id}/rotate-secret`, { program: null })
      expect(rotated.status).toBe(200)
      expect(rotated.body.client_secret).toMatch(/^cs_/)
      const refreshWith = (secret: string) =>
        postForm(platform, "/oauth/token", {
          grant_type: "refresh_token",
          refresh_token: tokens.refresh_token,
          client_id: own.client_id,
          client_secret: secret
        })
      expectOAuthError(await refreshWith(own.client_secret!), 401, "invalid_client")
      const refreshed = await refreshWith(rotated.body.client_secret)
      expect(refreshed.status).toBe(200)
      expect((await platform.request("GET", "/v1/cards", { key: refreshed.body.access_token })).status).toBe(200)

      const deleted = await platform.request("DELETE", `/v1/oauth-clients/${own.id}`, { program: null })
      expect(deleted.status).toBe(200)
      expectEnvelope(await platform.request("GET", "/v1/cards", { key: refreshed.body.access_token }), 401, {
        code: "authentication_error"
      })
      const afterDelete = await postForm(platform, "/oauth/token", {
        grant_type: "refresh_token",
        refresh_token: refreshed.body.refresh_token,
        client_id: own.client_id,
        client_secret: rotated.body.client_secret
      })
      expectOAuthError(afterDelete, 401, "invalid_client")
      expect((await authorize(platform, authorizeQuery(own))).status).toBe(400)
      expectEnvelope(await platform.request("GET", `/v1/oauth-clients/${own.id}`, { program: null }), 404, { param: "oauth_client_id" })
    })
  })

  describe("/v1/oauth-clients", () => {
    it("validates a new client, shows the secret once, and is for unlimited admin keys only", async () => {
      const before = await count("issuing_oauth_clients")
      const post = (body: unknown, key = platform.org.api_key) =>
        platform.request("POST", "/v1/oauth-clients", { key, program: null, body })
      const valid = { name: "App", type: "confidential", scopes: ["read"], redirect_uris: [REDIRECT_URI] }
      expectEnvelope(await post({ ...valid, redirect_uris: [] }), 400, { param: "redirect_uris" })
      expectEnvelope(await post({ ...valid, redirect_uris: ["http://app.example/cb"] }), 400, { param: "redirect_uris.0" })
      expectEnvelope(await post({ ...valid, redirect_uris: ["https://app.example/cb#frag"] }), 400, { param: "redirect_uris.0" })
      expectEnvelope(await post({ ...valid, scopes: ["admin"] }), 400, { param: "scopes.0" })
      expectEnvelope(await post({ ...valid, scopes: [] }), 400, { param: "scopes" })
      expectEnvelope(await post({ ...valid, type: "spa" }), 400, { param: "type" })
      const developer = await createKey(platform, { role: "developer" })
      expectEnvelope(await post(valid, developer.secret), 403, { code: "permission_denied" })
      const limited = await createKey(platform, { role: "admin", program_ids: [platform.org.program_id] })
      expectEnvelope(await post(valid, limited.secret), 403, { code: "permission_denied" })
      expect(await count("issuing_oauth_clients")).toBe(before)

      const created = await post({ ...valid, redirect_uris: ["http://127.0.0.1:9999/cb", "com.example.app:/cb"] })
      expect(created.status, created.text).toBe(200)
      expect(Object.keys(created.body).sort()).toEqual(
        ["client_id", "client_secret", "created_at", "id", "name", "object", "redirect_uris", "scopes", "type"].sort()
      )
      const fetched = await platform.request("GET", `/v1/oauth-clients/${created.body.id}`, { program: null })
      expect(fetched.body.client_secret).toBeUndefined()
      const listed = await platform.request("GET", "/v1/oauth-clients?page_size=100", { program: null })
      expect(listed.body.data.some((row: any) => row.id === created.body.id && row.client_secret === undefined)).toBe(true)
      const other = await platform.createOrganization("Third")
      expectEnvelope(await platform.request("GET", `/v1/oauth-clients/${created.body.id}`, { key: other.api_key, program: null }), 404, {
        param: "oauth_client_id"
      })
      const publicClient = await post({ ...valid, type: "public" })
      expect(publicClient.body.client_secret).toBeUndefined()
      expectEnvelope(await platform.request("POST", `/v1/oauth-clients/${publicClient.body.id}/rotate-secret`, { program: null }), 409, {
        code: "conflict"
      })
    })
  })
})
