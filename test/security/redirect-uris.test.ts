import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { onDatabase } from "../foundation/fixtures.js"
import { authorize, authorizeQuery, createClient, startOAuthPlatform } from "../oauth/support.js"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope, type TestPlatform } from "../support/platform.js"

// docs/oauth.md#clients: a redirect URI is registered only as an absolute URL equal to its own
// normalised form, so the string matched is the URL redirected to.
describe.each(STORE_KINDS)("redirect URI registration on %s", (kind) => {
  let platform: TestPlatform
  beforeAll(async () => {
    platform = await startOAuthPlatform(kind)
  })
  afterAll(async () => {
    await platform?.close()
  })

  const register = (uri: string) =>
    platform.request("POST", "/v1/oauth-clients", {
      program: null,
      body: { name: "App", type: "confidential", scopes: ["read"], redirect_uris: ["https://ok.example/cb", uri] }
    })
  const clients = () =>
    onDatabase(platform, async (query) => Number((await query("SELECT COUNT(*) AS n FROM issuing_oauth_clients"))[0]!.n))

  it("refuses, with 400 naming the entry, every URI the URL parser would rewrite; nothing is stored", async () => {
    const before = await clients()
    for (const uri of [
      "https://a.example.com/cb\r\nSet-Cookie: x=1",
      "https://a.example.com/cb\nx",
      "https://a.example.com/c\tb",
      "https://a.example.com/c b",
      " https://a.example.com/cb",
      "https://a.example.com/cb\u0000",
      "https://A.example.com/cb",
      "https://a.example.com",
      "https://a.example.com:443/cb",
      "https://a.example.com/a/../cb",
      'https://a.example.com/cb?x="y"',
      "https://a.example.com/caf\u00e9",
      "https:a.example.com/cb",
      "com.example.app:/c b"
    ]) {
      expectEnvelope(await register(uri), 400, { code: "invalid_request", param: "redirect_uris.1" })
    }
    expect(await clients()).toBe(before)
  })

  it("registers normalised URIs as sent and redirects to exactly them", async () => {
    for (const uri of ["https://a.example.com/cb?x=1", "http://127.0.0.1:9999/cb", "com.example.app:/cb", "https://a.example.com/"]) {
      const response = await register(uri)
      expect(response.status, `${uri}: ${response.text}`).toBe(200)
      expect(response.body.redirect_uris).toEqual(["https://ok.example/cb", uri])
    }
    const client = await createClient(platform, { redirect_uris: ["https://a.example.com/cb?x=1"] })
    const refused = await authorize(platform, authorizeQuery(client, { redirect_uri: "https://a.example.com/cb?x=1", scope: "admin" }))
    expect(refused.status).toBe(302)
    expect(refused.location!.startsWith("https://a.example.com/cb?x=1&error=")).toBe(true)
  })
})
