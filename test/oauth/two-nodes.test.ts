import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, STORE_KINDS, type TestDatabase } from "../support/databases.js"
import { type Cluster, NODE_ADMIN_SECRET, type Node, startCluster } from "../support/nodes.js"
import { INTERACTION_URL, interactionOf, pkce, REDIRECT_URI } from "./support.js"

/**
 * Two `issuing serve` processes on one database (each with its own caches and change feed): a
 * token warm in node B's cache is refused by B on the very next request after node A revokes
 * its grant, deletes its client or revokes the access token (docs/oauth.md#taking-effect-everywhere-at-once).
 */
describe.each(STORE_KINDS)("OAuth revocation across two nodes on %s", (kind) => {
  let database: TestDatabase
  let cluster: Cluster
  let a: Node
  let b: Node
  let org: { program_id: string; api_key: string }

  beforeAll(async () => {
    database = await createTestDatabase(kind, { migrated: true })
    cluster = await startCluster(database, { ISSUING_OAUTH_INTERACTION_URL: INTERACTION_URL })
    ;({ a, b } = cluster)
    org = { program_id: cluster.programId, api_key: NODE_ADMIN_SECRET }
  }, 120_000)
  afterAll(async () => {
    await cluster?.stop()
    await database?.drop()
  }, 60_000)

  const json = async (node: Node, method: string, path: string, options: { key?: string; body?: unknown; program?: boolean } = {}) => {
    const response = await fetch(`${node.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${options.key ?? org.api_key}`,
        ...(options.program === false ? {} : { "x-program-id": org.program_id }),
        ...(options.body === undefined ? {} : { "content-type": "application/json" })
      },
      body: options.body === undefined ? undefined : JSON.stringify(options.body)
    })
    return { status: response.status, body: (await response.json().catch(() => undefined)) as any }
  }
  const form = async (node: Node, path: string, fields: Record<string, string>) => {
    const response = await fetch(`${node.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields).toString()
    })
    return { status: response.status, body: (await response.json().catch(() => undefined)) as any }
  }

  /** A client and a token pair through node A, consented by `consentKey` (the organization's admin key by default). */
  const issue = async (consentKey = org.api_key) => {
    const client = (
      await json(a, "POST", "/v1/oauth-clients", {
        program: false,
        body: { name: "App", type: "confidential", scopes: ["read"], redirect_uris: [REDIRECT_URI] }
      })
    ).body
    const { challenge, verifier } = await pkce()
    const query = new URLSearchParams({
      response_type: "code",
      client_id: client.client_id,
      redirect_uri: REDIRECT_URI,
      scope: "read",
      state: "s",
      code_challenge: challenge,
      code_challenge_method: "S256"
    })
    const start = await fetch(`${a.url}/oauth/authorize?${query}`, { redirect: "manual" })
    const interaction = interactionOf(start.headers.get("location"))
    const granted = await json(a, "POST", `/v1/oauth/interactions/${interaction}/grant`, {
      key: consentKey,
      program: false,
      body: { program_ids: [org.program_id], scopes: ["read"] }
    })
    const code = new URL(granted.body.redirect_to).searchParams.get("code")!
    const auth = { client_id: client.client_id, client_secret: client.client_secret }
    const tokens = (
      await form(a, "/oauth/token", {
        grant_type: "authorization_code",
        code,
        redirect_uri: REDIRECT_URI,
        code_verifier: verifier,
        ...auth
      })
    ).body
    // Warm in node B's cache.
    expect((await json(b, "GET", "/v1/cards", { key: tokens.access_token })).status).toBe(200)
    expect((await json(b, "GET", "/v1/cards", { key: tokens.access_token })).status).toBe(200)
    return { client, tokens, auth }
  }

  it("revoking the grant (its refresh token) on A is refused on B at once", async () => {
    const { auth, tokens } = await issue()
    expect((await form(a, "/oauth/revoke", { token: tokens.refresh_token, ...auth })).status).toBe(200)
    expect((await json(b, "GET", "/v1/cards", { key: tokens.access_token })).status).toBe(401)
  })

  it("revoking the access token on A is refused on B at once", async () => {
    const { auth, tokens } = await issue()
    expect((await form(a, "/oauth/revoke", { token: tokens.access_token, ...auth })).status).toBe(200)
    expect((await json(b, "GET", "/v1/cards", { key: tokens.access_token })).status).toBe(401)
  })

  it("deleting the client on A is refused on B at once", async () => {
    const { client, tokens } = await issue()
    expect((await json(a, "DELETE", `/v1/oauth-clients/${client.id}`, { program: false })).status).toBe(200)
    expect((await json(b, "GET", "/v1/cards", { key: tokens.access_token })).status).toBe(401)
  })

  it("revoking the key that consented on A is refused on B at once, access and refresh alike", async () => {
    const consenting = await json(a, "POST", "/v1/api-keys", { program: false, body: { name: "consents", role: "admin" } })
    expect(consenting.status).toBe(200)
    const { auth, tokens } = await issue(consenting.body.secret)
    expect((await json(a, "DELETE", `/v1/api-keys/${consenting.body.id}`, { program: false })).status).toBe(200)
    expect((await json(b, "GET", "/v1/cards", { key: tokens.access_token })).status).toBe(401)
    const refreshed = await form(b, "/oauth/token", { grant_type: "refresh_token", refresh_token: tokens.refresh_token, ...auth })
    expect(refreshed.status).toBe(400)
    expect(refreshed.body.error).toBe("invalid_grant")
  })
})
