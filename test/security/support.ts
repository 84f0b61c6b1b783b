import * as oauth from "oauth4webapi"
import { expect } from "vitest"
import type { TestPlatform } from "../support/platform.js"
import { consent, type CreatedClient, discover, insecure, pkce, REDIRECT_URI } from "../oauth/support.js"

/** A token response as oauth4webapi hands it over. */
export type Tokens = oauth.TokenEndpointResponse

/**
 * The code flow driven by oauth4webapi for a confidential client: consent (by `adminKey`, the
 * organization's first admin key unless given) to `scopes` on `programIds`, then the code exchange.
 */
export const tokensFor = async (
  platform: TestPlatform,
  created: CreatedClient,
  options: { scopes?: Array<string>; programIds?: Array<string>; adminKey?: string } = {}
): Promise<Tokens> => {
  const as = await discover(platform)
  const client: oauth.Client = { client_id: created.client_id }
  const { challenge, verifier } = await pkce()
  const state = oauth.generateRandomState()
  const callback = await consent(platform, created, { challenge, state, ...options })
  const params = oauth.validateAuthResponse(as, client, callback, state)
  const auth = oauth.ClientSecretBasic(created.client_secret!)
  const response = await oauth.authorizationCodeGrantRequest(as, client, auth, params, REDIRECT_URI, verifier, insecure)
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, response)
  expect(tokens.access_token).toMatch(/^at_/)
  return tokens
}

/** A refresh through oauth4webapi; the response, or the error it raised. */
export const refresh = async (platform: TestPlatform, created: CreatedClient, refreshToken: string) => {
  const as = await discover(platform)
  const client: oauth.Client = { client_id: created.client_id }
  const response = await oauth.refreshTokenGrantRequest(as, client, oauth.ClientSecretBasic(created.client_secret!), refreshToken, insecure)
  return oauth.processRefreshTokenResponse(as, client, response).then(
    (tokens) => ({ ok: true as const, tokens }),
    (error: unknown) => ({ ok: false as const, error })
  )
}
