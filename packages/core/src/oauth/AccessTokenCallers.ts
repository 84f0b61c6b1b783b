import { Effect, Option } from "effect"
import type { AccessTokenResolver } from "../access/Authentication.js"
import type { Caller } from "../access/Records.js"
import type { OAuthStoreService } from "./OAuthStore.js"
import type { ActiveAccessToken } from "./Records.js"

/**
 * The caller an access token acts as on /v1 (docs/oauth.md#access-tokens-on-v1): never an admin;
 * `write` is what a developer key may do (card display included), `read` what a viewer key may,
 * `pan_reveal` the reveal right. Its programs are the grant's; its rate limit and audit identity
 * the grant's id.
 */
export const callerOfAccessToken = (token: ActiveAccessToken): Caller => {
  const write = token.scopes.includes("write")
  return {
    apiKeyId: token.grant_id,
    organizationId: token.organization_id,
    role: write ? "developer" : "viewer",
    programIds: token.program_ids,
    panReveal: token.scopes.includes("pan_reveal"),
    cardDisplay: write,
    // Inbound funding is a key right an admin grants, never part of a scope (docs/decisions.md).
    inboundFunding: false,
    // So is the network right (docs/network.md#authentication).
    network: false,
    oauth: {
      grantId: token.grant_id,
      oauthClientId: token.oauth_client_id,
      scopes: token.scopes,
      expiresAtMs: Date.parse(token.expires_at)
    }
  }
}

/** Resolves access tokens for Authentication through the OAuth store. */
export const accessTokenResolver =
  (store: OAuthStoreService): AccessTokenResolver =>
  (tokenHash) =>
    Effect.map(store.findActiveAccessToken(tokenHash), Option.map(callerOfAccessToken))
