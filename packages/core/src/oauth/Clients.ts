import type { SqlError } from "@effect/sql"
import { Effect } from "effect"
import type { Caller } from "../access/Records.js"
import { hashSecret } from "../access/Secrets.js"
import { Conflict, type InvalidRequest, type NotFound, PermissionDenied } from "../platform/Errors.js"
import { findOwned } from "../platform/FindOwned.js"
import { newId } from "../platform/Ids.js"
import { type Page, type PageRequest, pageOf, toWindow } from "../platform/Paging.js"
import { OAUTH_CLIENT_ORDER_FIELDS, type OAuthClientOrderField } from "./OrderFields.js"
import { nowIso } from "../platform/Time.js"
import { revokeGrants } from "./Grants.js"
import type { OAuthDeps } from "./OAuthDeps.js"
import { newClientId, newOAuthSecret } from "./Pkce.js"
import type { CreateOAuthClient, OAuthClient, OAuthClientWithSecret, StoredOAuthClient } from "./Records.js"

const OAUTH_CLIENT = { resource: "OAuth client", param: "oauth_client_id" } as const

/** Clients are the organization's: only an admin key not limited by program_ids manages them. */
export const requireOrganizationAdmin = (caller: Caller): Effect.Effect<void, PermissionDenied> =>
  caller.role === "admin" && caller.programIds === null && caller.oauth === undefined
    ? Effect.void
    : Effect.fail(new PermissionDenied({ message: "This operation requires an admin API key not limited by program_ids.", param: null }))

/** A client as the API shows it. */
export const clientView = ({ organization_id: _, ...client }: StoredOAuthClient): OAuthClient => client

/** POST /v1/oauth-clients: a confidential client's secret is shown in this response only. */
export const createClient = (
  deps: OAuthDeps,
  caller: Caller,
  input: CreateOAuthClient
): Effect.Effect<OAuthClientWithSecret, PermissionDenied | SqlError.SqlError> =>
  Effect.gen(function* () {
    yield* requireOrganizationAdmin(caller)
    const client: StoredOAuthClient = {
      id: newId(),
      object: "oauth_client",
      organization_id: caller.organizationId,
      name: input.name,
      client_id: newClientId(),
      redirect_uris: [...new Set(input.redirect_uris)],
      type: input.type,
      scopes: input.scopes,
      created_at: yield* nowIso
    }
    const secret = input.type === "confidential" ? newOAuthSecret("cs") : undefined
    yield* deps.store.insertClient(client, secret === undefined ? null : hashSecret(secret))
    return secret === undefined ? clientView(client) : { ...clientView(client), client_secret: secret }
  })

/** GET /v1/oauth-clients. */
export const listClients = (
  deps: OAuthDeps,
  caller: Caller,
  page: PageRequest<OAuthClientOrderField>
): Effect.Effect<Page<OAuthClient>, InvalidRequest | PermissionDenied | SqlError.SqlError> =>
  Effect.gen(function* () {
    yield* requireOrganizationAdmin(caller)
    const window = toWindow(page, OAUTH_CLIENT_ORDER_FIELDS)
    const { rows, total } = yield* deps.store.listClients(caller.organizationId, window)
    return pageOf(window, rows.map(clientView), total)
  })

/** GET /v1/oauth-clients/{id}. */
export const getClient = (
  deps: OAuthDeps,
  caller: Caller,
  id: string
): Effect.Effect<OAuthClient, PermissionDenied | NotFound | SqlError.SqlError> =>
  Effect.gen(function* () {
    yield* requireOrganizationAdmin(caller)
    return clientView(yield* findOwned(id, OAUTH_CLIENT, (found) => deps.store.findClient(caller.organizationId, found)))
  })

/**
 * DELETE /v1/oauth-clients/{id}: the client and every grant and token of it stop working on every
 * node from the commit (grants revoked with their events, the change published in the transaction).
 */
export const deleteClient = (
  deps: OAuthDeps,
  caller: Caller,
  id: string
): Effect.Effect<OAuthClient, PermissionDenied | NotFound | SqlError.SqlError> =>
  deps.transactor.withTransaction(
    Effect.gen(function* () {
      yield* requireOrganizationAdmin(caller)
      const at = yield* nowIso
      const deleted = yield* findOwned(id, OAUTH_CLIENT, (found) => deps.store.deleteClient(caller.organizationId, found, at))
      yield* revokeGrants(deps, { oauthClientId: deleted.id }, at)
      yield* deps.feed.publish("oauth", deleted.id)
      return clientView(deleted)
    })
  )

/** POST /v1/oauth-clients/{id}/rotate-secret: the old secret stops working at once; 409 for a public client. */
export const rotateClientSecret = (
  deps: OAuthDeps,
  caller: Caller,
  id: string
): Effect.Effect<OAuthClientWithSecret, PermissionDenied | NotFound | Conflict | SqlError.SqlError> =>
  Effect.gen(function* () {
    yield* requireOrganizationAdmin(caller)
    const client = yield* findOwned(id, OAUTH_CLIENT, (found) => deps.store.findClient(caller.organizationId, found))
    if (client.type !== "confidential") {
      return yield* new Conflict({ message: "A public client has no secret to rotate.", param: null })
    }
    const secret = newOAuthSecret("cs")
    const updated = yield* findOwned(client.id, OAUTH_CLIENT, (found) =>
      deps.store.setClientSecret(caller.organizationId, found, hashSecret(secret))
    )
    return { ...clientView(updated), client_secret: secret }
  })
