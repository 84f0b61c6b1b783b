import { Effect } from "effect"
import { Access } from "../access/Access.js"
import { AccessStore } from "../access/AccessStore.js"
import type { Caller } from "../access/Records.js"
import { ChangeFeed } from "../changes/ChangeFeed.js"
import { Events } from "../events/Events.js"
import { IssuingConfig } from "../platform/IssuingConfig.js"
import type { PageRequest } from "../platform/Paging.js"
import type { OAuthClientOrderField, OAuthGrantOrderField } from "./OrderFields.js"
import { Transactor } from "../sql/Transactor.js"
import { authorize } from "./Authorize.js"
import { createClient, deleteClient, getClient, listClients, rotateClientSecret } from "./Clients.js"
import { listGrants, revokeGrant } from "./GrantAdmin.js"
import { denyInteraction, getInteraction, grantInteraction } from "./Interactions.js"
import type { OAuthDeps } from "./OAuthDeps.js"
import { OAuthStore } from "./OAuthStore.js"
import { OAUTH_SCOPES, type CreateOAuthClient, type GrantInteraction } from "./Records.js"
import { authenticateClient, type ClientCredentials, exchangeCode, refreshTokens, type TokenParams } from "./TokenEndpoint.js"
import { introspectToken, revokeToken } from "./TokenManagement.js"
import { oauthError } from "./OAuthErrors.js"

/** The authorization server's metadata (RFC 8414), every endpoint under the issuer. */
export const authorizationServerMetadata = (issuer: string) => ({
  issuer,
  authorization_endpoint: `${issuer}/oauth/authorize`,
  token_endpoint: `${issuer}/oauth/token`,
  revocation_endpoint: `${issuer}/oauth/revoke`,
  introspection_endpoint: `${issuer}/oauth/introspect`,
  response_types_supported: ["code"],
  response_modes_supported: ["query"],
  grant_types_supported: ["authorization_code", "refresh_token"],
  code_challenge_methods_supported: ["S256"],
  token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post", "none"],
  revocation_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post", "none"],
  introspection_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post", "none"],
  scopes_supported: [...OAUTH_SCOPES],
  authorization_response_iss_parameter_supported: true,
  service_documentation: `${issuer}/docs`
})

/**
 * The OAuth 2.1 gateway (docs/oauth.md): clients, the authorization request, the host app's
 * consent, the token, revocation and introspection endpoints. Inputs arrive decoded; the /oauth
 * endpoints' failures are `OAuthProtocolError`s the http layer renders as RFC 6749 bodies.
 */
export class OAuth extends Effect.Service<OAuth>()("@issuing/core/OAuth", {
  effect: Effect.gen(function* () {
    const access = yield* Access
    const deps: OAuthDeps = {
      store: yield* OAuthStore,
      access: yield* AccessStore,
      transactor: yield* Transactor,
      config: yield* IssuingConfig,
      feed: yield* ChangeFeed,
      events: yield* Events,
      forgetGrants: access.forgetGrants
    }
    return {
      createClient: (caller: Caller, input: CreateOAuthClient) => createClient(deps, caller, input),
      listClients: (caller: Caller, page: PageRequest<OAuthClientOrderField>) => listClients(deps, caller, page),
      getClient: (caller: Caller, id: string) => getClient(deps, caller, id),
      deleteClient: (caller: Caller, id: string) => deleteClient(deps, caller, id),
      rotateClientSecret: (caller: Caller, id: string) => rotateClientSecret(deps, caller, id),
      getInteraction: (caller: Caller, id: string) => getInteraction(deps, caller, id),
      grantInteraction: (caller: Caller, id: string, input: GrantInteraction) => grantInteraction(deps, caller, id, input),
      denyInteraction: (caller: Caller, id: string) => denyInteraction(deps, caller, id),
      listGrants: (caller: Caller, page: PageRequest<OAuthGrantOrderField>) => listGrants(deps, caller, page),
      revokeGrant: (caller: Caller, id: string) => revokeGrant(deps, caller, id),
      /** GET /oauth/authorize: an error page or a redirect. */
      authorize: (params: URLSearchParams) => authorize(deps, params),
      /** POST /oauth/token: authenticates the client, then exchanges a code or a refresh token. */
      token: (credentials: ClientCredentials, params: TokenParams) =>
        Effect.gen(function* () {
          const client = yield* authenticateClient(deps, credentials)
          switch (params.grant_type) {
            case undefined:
              return yield* oauthError("invalid_request", "grant_type is required.")
            case "authorization_code":
              return yield* exchangeCode(deps, client, params)
            case "refresh_token":
              return yield* refreshTokens(deps, client, params)
            default:
              return yield* oauthError("unsupported_grant_type", "grant_type must be authorization_code or refresh_token.")
          }
        }),
      /** POST /oauth/revoke (RFC 7009). */
      revoke: (credentials: ClientCredentials, token: string) =>
        Effect.flatMap(authenticateClient(deps, credentials), (client) => revokeToken(deps, client, token)),
      /** POST /oauth/introspect (RFC 7662). */
      introspect: (credentials: ClientCredentials, token: string) =>
        Effect.flatMap(authenticateClient(deps, credentials), (client) => introspectToken(deps, client, token)),
      /** GET /.well-known/oauth-authorization-server (RFC 8414). */
      metadata: () => authorizationServerMetadata(deps.config.baseUrl)
    }
  })
}) {}
