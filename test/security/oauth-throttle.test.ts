import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { onDatabase } from "../foundation/fixtures.js"
import { authorize, authorizeQuery, createClient, postForm, REDIRECT_URI, startOAuthPlatform } from "../oauth/support.js"
import { STORE_KINDS } from "../support/databases.js"
import type { TestPlatform } from "../support/platform.js"

// docs/oauth.md#throttling: the anonymous /oauth endpoints are throttled per client and address,
// and a client holds at most 100 interactions waiting for consent.
describe.each(STORE_KINDS)("OAuth throttling on %s", (kind) => {
  const interactions = (platform: TestPlatform, clientRowId: string) =>
    onDatabase(platform, async (query) =>
      Number((await query(`SELECT COUNT(*) AS n FROM issuing_oauth_interactions WHERE oauth_client_id = '${clientRowId}'`))[0]!.n)
    )

  describe("per client and address", () => {
    let platform: TestPlatform
    beforeAll(async () => {
      platform = await startOAuthPlatform(kind, { oauthRateLimitPerSecond: 0.01, oauthRateLimitBurst: 5 })
    })
    afterAll(async () => {
      await platform?.close()
    })

    it("answers /oauth/authorize past the burst with 429 and Retry-After, writing nothing", async () => {
      const client = await createClient(platform)
      const state = "s".repeat(1024)
      const statuses: Array<number> = []
      for (let i = 0; i < 12; i++) {
        const response = await authorize(platform, authorizeQuery(client, { state }))
        statuses.push(response.status)
        if (response.status === 429) {
          expect(Number(response.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
          expect(response.location).toBeNull()
        }
      }
      expect(statuses).toEqual([...Array(5).fill(302), ...Array(7).fill(429)])
      expect(await interactions(platform, client.id)).toBe(5)
      // Another client from the same address has its own bucket.
      const other = await createClient(platform)
      expect((await authorize(platform, authorizeQuery(other))).status).toBe(302)
    })

    it("answers the token endpoint past the burst with 429 in OAuth's JSON format", async () => {
      const client = await createClient(platform)
      const form = { grant_type: "authorization_code", code: "ac_nothing", redirect_uri: REDIRECT_URI, code_verifier: "a".repeat(43) }
      const auth = { authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString("base64")}` }
      const statuses: Array<number> = []
      for (let i = 0; i < 7; i++) statuses.push((await postForm(platform, "/oauth/token", form, auth)).status)
      expect(statuses).toEqual([...Array(5).fill(400), 429, 429])
      const throttled = await postForm(platform, "/oauth/token", form, auth)
      expect(throttled.status).toBe(429)
      expect(throttled.body.error).toBe("invalid_request")
      expect(throttled.headers.get("cache-control")).toBe("no-store")
      expect(Number(throttled.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
    })
  })

  describe("open interactions", () => {
    let platform: TestPlatform
    beforeAll(async () => {
      platform = await startOAuthPlatform(kind)
    })
    afterAll(async () => {
      await platform?.close()
    })

    it("keeps at most 100 pending interactions per client: the next request is temporarily_unavailable", async () => {
      const client = await createClient(platform)
      for (let i = 0; i < 100; i++) expect((await authorize(platform, authorizeQuery(client))).status).toBe(302)
      const refused = await authorize(platform, authorizeQuery(client))
      expect(refused.status).toBe(302)
      const location = new URL(refused.location!)
      expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI)
      expect(location.searchParams.get("error")).toBe("temporarily_unavailable")
      expect(location.searchParams.get("state")).toBe("st-123")
      expect(await interactions(platform, client.id)).toBe(100)
      // Expired interactions no longer count.
      await onDatabase(platform, (query) =>
        query(`UPDATE issuing_oauth_interactions SET expires_at = '2000-01-01T00:00:00.000Z' WHERE oauth_client_id = '${client.id}'`)
      )
      expect(new URL((await authorize(platform, authorizeQuery(client))).location!).searchParams.get("interaction")).not.toBeNull()
    })
  })
})
