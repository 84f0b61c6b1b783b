import { HttpApiBuilder } from "@effect/platform"
import { OAuth, OAUTH_CLIENT_ORDER_FIELDS, OAUTH_GRANT_ORDER_FIELDS } from "@issuing/core"
import { Effect } from "effect"
import { IssuingApi } from "../Api.js"
import { CurrentCaller } from "../middleware/Scopes.js"
import { mapToApiFailure } from "../errors.js"
import { paging } from "./Paging.js"

export const OAuthClientsHandlersLive = HttpApiBuilder.group(IssuingApi, "oauthClients", (handlers) =>
  Effect.gen(function* () {
    const oauth = yield* OAuth
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(CurrentCaller, (caller) => mapToApiFailure(oauth.createClient(caller, payload))))
      .handle("list", ({ urlParams }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentCaller
          const page = yield* paging(urlParams, OAUTH_CLIENT_ORDER_FIELDS)
          return yield* mapToApiFailure(oauth.listClients(caller, page))
        })
      )
      .handle("get", ({ path }) =>
        Effect.flatMap(CurrentCaller, (caller) => mapToApiFailure(oauth.getClient(caller, path.oauth_client_id)))
      )
      .handle("delete", ({ path }) =>
        Effect.flatMap(CurrentCaller, (caller) => mapToApiFailure(oauth.deleteClient(caller, path.oauth_client_id)))
      )
      .handle("rotateSecret", ({ path }) =>
        Effect.flatMap(CurrentCaller, (caller) => mapToApiFailure(oauth.rotateClientSecret(caller, path.oauth_client_id)))
      )
  })
)

export const OAuthInteractionsHandlersLive = HttpApiBuilder.group(IssuingApi, "oauthInteractions", (handlers) =>
  Effect.gen(function* () {
    const oauth = yield* OAuth
    return handlers
      .handle("get", ({ path }) =>
        Effect.flatMap(CurrentCaller, (caller) => mapToApiFailure(oauth.getInteraction(caller, path.interaction_id)))
      )
      .handle("grant", ({ path, payload }) =>
        Effect.flatMap(CurrentCaller, (caller) => mapToApiFailure(oauth.grantInteraction(caller, path.interaction_id, payload)))
      )
      .handle("deny", ({ path }) =>
        Effect.flatMap(CurrentCaller, (caller) => mapToApiFailure(oauth.denyInteraction(caller, path.interaction_id)))
      )
  })
)

/** Order fields of GET /v1/oauth/grants. */
export const OAuthGrantsHandlersLive = HttpApiBuilder.group(IssuingApi, "oauthGrants", (handlers) =>
  Effect.gen(function* () {
    const oauth = yield* OAuth
    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentCaller
          const page = yield* paging(urlParams, OAUTH_GRANT_ORDER_FIELDS)
          return yield* mapToApiFailure(oauth.listGrants(caller, page))
        })
      )
      .handle("revoke", ({ path }) => Effect.flatMap(CurrentCaller, (caller) => mapToApiFailure(oauth.revokeGrant(caller, path.grant_id))))
  })
)
