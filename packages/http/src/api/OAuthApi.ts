import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import {
  CreateOAuthClient,
  GrantInteraction,
  OAuthClient,
  OAuthGrant,
  OAuthClientWithSecret,
  OAuthInteraction,
  OAuthRedirect
} from "@issuing/core"
import { Schema } from "effect"
import { OAuthProtocol } from "./Annotations.js"
import { ListOf, PagingParams, post } from "./Common.js"
import { OrganizationScoped } from "./Security.js"
import { NotFoundFailure } from "../errors.js"

/** A client id in the path: any text, looked up by core's findOwned (a malformed id is a 404). */
const ClientPath = Schema.Struct({ oauth_client_id: Schema.String })
const InteractionPath = Schema.Struct({ interaction_id: Schema.String })
const GrantPath = Schema.Struct({ grant_id: Schema.String })

/** Organization-scoped, admin keys only: the connected applications of the organization (docs/oauth.md#clients). */
export class OAuthClientsApi extends HttpApiGroup.make("oauthClients")
  .add(post("create", "/oauth-clients").setPayload(CreateOAuthClient).addSuccess(OAuthClientWithSecret))
  .add(HttpApiEndpoint.get("list", "/oauth-clients").setUrlParams(Schema.Struct(PagingParams)).addSuccess(ListOf(OAuthClient)))
  .add(HttpApiEndpoint.get("get", "/oauth-clients/:oauth_client_id").setPath(ClientPath).addError(NotFoundFailure).addSuccess(OAuthClient))
  .add(
    HttpApiEndpoint.del("delete", "/oauth-clients/:oauth_client_id")
      .setPath(ClientPath)
      .addError(NotFoundFailure)
      .addSuccess(OAuthClient)
      .annotate(OpenApi.Description, "Deletes the client and revokes every grant and token of it, on every node at once.")
  )
  .add(
    post("rotateSecret", "/oauth-clients/:oauth_client_id/rotate-secret")
      .setPath(ClientPath)
      .addError(NotFoundFailure)
      .addSuccess(OAuthClientWithSecret)
  )
  .middleware(OrganizationScoped)
  .prefix("/v1") {}

/** Organization-scoped, admin keys only: the host app's side of the consent (docs/oauth.md#the-consent-screen). */
export class OAuthInteractionsApi extends HttpApiGroup.make("oauthInteractions")
  .add(
    HttpApiEndpoint.get("get", "/oauth/interactions/:interaction_id")
      .setPath(InteractionPath)
      .addError(NotFoundFailure)
      .addSuccess(OAuthInteraction)
  )
  .add(
    post("grant", "/oauth/interactions/:interaction_id/grant")
      .setPath(InteractionPath)
      .addError(NotFoundFailure)
      .setPayload(GrantInteraction)
      .addSuccess(OAuthRedirect)
  )
  .add(
    post("deny", "/oauth/interactions/:interaction_id/deny").setPath(InteractionPath).addError(NotFoundFailure).addSuccess(OAuthRedirect)
  )
  .middleware(OrganizationScoped)
  .prefix("/v1") {}

/** Organization-scoped, admin keys only: what connected applications hold, for incident response (docs/oauth.md#incident-response). */
export class OAuthGrantsApi extends HttpApiGroup.make("oauthGrants")
  .add(HttpApiEndpoint.get("list", "/oauth/grants").setUrlParams(Schema.Struct(PagingParams)).addSuccess(ListOf(OAuthGrant)))
  .add(
    HttpApiEndpoint.del("revoke", "/oauth/grants/:grant_id")
      .setPath(GrantPath)
      .addSuccess(OAuthGrant)
      .addError(NotFoundFailure)
      .annotate(OpenApi.Description, "Revokes the grant and every token of it, on every node at once.")
  )
  .middleware(OrganizationScoped)
  .prefix("/v1") {}

/**
 * Public: the OAuth 2.1 protocol endpoints (docs/oauth.md). Their parameters are read by the
 * handlers (form bodies, repeated parameters refused) and every refusal is answered in OAuth's
 * format; their OpenAPI description is written by hand (docs/OAuthOpenApi.ts).
 */
export class OAuthProtocolApi extends HttpApiGroup.make("oauthProtocol", { topLevel: true })
  .add(HttpApiEndpoint.get("authorize", "/oauth/authorize"))
  .add(HttpApiEndpoint.post("token", "/oauth/token"))
  .add(HttpApiEndpoint.post("revoke", "/oauth/revoke"))
  .add(HttpApiEndpoint.post("introspect", "/oauth/introspect"))
  .add(HttpApiEndpoint.get("metadata", "/.well-known/oauth-authorization-server"))
  .annotate(OAuthProtocol, true)
  .annotate(OpenApi.Exclude, true) {}
