import * as oauth from "oauth4webapi"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  consent,
  createClient,
  discover,
  exchange,
  expectOAuthError,
  insecure,
  pkce,
  REDIRECT_URI,
  startOAuthPlatform
} from "../oauth/support.js"
import { STORE_KINDS } from "../support/databases.js"
import type { TestPlatform } from "../support/platform.js"

// docs/oauth.md#the-token-endpoint: only a replay that proves the code's context (client,
// redirect_uri, code_verifier) revokes the grant; anyone else holding a spent code revokes nothing.
describe.each(STORE_KINDS)("authorization code replay on %s", (kind) => {
  let platform: TestPlatform
  beforeAll(async () => {
    platform = await startOAuthPlatform(kind)
  })
  afterAll(async () => {
    await platform?.close()
  })

  /** The legitimate flow through oauth4webapi; returns the client, the spent code, its verifier and the tokens. */
  const legitimate = async () => {
    const created = await createClient(platform)
    const as = await discover(platform)
    const client: oauth.Client = { client_id: created.client_id }
    const { challenge, verifier } = await pkce()
    const state = oauth.generateRandomState()
    const callback = await consent(platform, created, { challenge, state })
    const code = callback.searchParams.get("code")!
    const params = oauth.validateAuthResponse(as, client, callback, state)
    const auth = oauth.ClientSecretBasic(created.client_secret!)
    const response = await oauth.authorizationCodeGrantRequest(as, client, auth, params, REDIRECT_URI, verifier, insecure)
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, response)
    return { created, code, verifier, tokens }
  }
  const works = async (token: string) => (await platform.request("GET", "/v1/wallets", { key: token })).status

  it("does not revoke the grant for a spent code sent with a wrong redirect_uri, verifier or client", async () => {
    const { code, created, tokens, verifier } = await legitimate()
    const other = await createClient(platform)
    for (const [fields, by] of [
      [{ code, code_verifier: "A".repeat(43), redirect_uri: "https://attacker.example/cb" }, created],
      [{ code, code_verifier: "A".repeat(43) }, created],
      [{ code, code_verifier: verifier, redirect_uri: "https://attacker.example/cb" }, created],
      [{ code, code_verifier: verifier }, other]
    ] as const) {
      expectOAuthError(await exchange(platform, by, fields), 400, "invalid_grant")
      expect(await works(tokens.access_token)).toBe(200)
    }
  })

  it("still revokes the grant for a replay that proves the code's context", async () => {
    const { code, created, tokens, verifier } = await legitimate()
    const replay = await exchange(platform, created, { code, code_verifier: verifier })
    expectOAuthError(replay, 400, "invalid_grant")
    expect(replay.body.error_description).toMatch(/already used/)
    expect(await works(tokens.access_token)).toBe(401)
  })
})
