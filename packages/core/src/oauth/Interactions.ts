import type { SqlError } from "@effect/sql"
import { Effect } from "effect"
import { canSeeProgram } from "../access/Authentication.js"
import type { Caller } from "../access/Records.js"
import { hashSecret } from "../access/Secrets.js"
import { Conflict, InvalidRequest, type NotFound, PermissionDenied } from "../platform/Errors.js"
import { findOwned } from "../platform/FindOwned.js"
import { newId } from "../platform/Ids.js"
import { nowMs } from "../platform/Time.js"
import { redirectWith } from "./Authorize.js"
import { requireOrganizationAdmin } from "./Clients.js"
import { emitGrantEvent } from "./Grants.js"
import { isoAfter, type OAuthDeps } from "./OAuthDeps.js"
import { newOAuthSecret } from "./Pkce.js"
import type { GrantInteraction, OAuthInteraction, OAuthRedirect, StoredGrant, StoredInteraction, StoredOAuthClient } from "./Records.js"

const INTERACTION = { resource: "OAuth interaction", param: "interaction_id" } as const

/** An interaction of the caller's organization with its client (a deleted client's interactions are not found). */
const findInteraction = (deps: OAuthDeps, caller: Caller, id: string) =>
  Effect.gen(function* () {
    yield* requireOrganizationAdmin(caller)
    const interaction = yield* findOwned(id, INTERACTION, (found) => deps.store.findInteraction(caller.organizationId, found))
    const client = yield* findOwned(interaction.oauth_client_id, INTERACTION, (found) =>
      deps.store.findClient(caller.organizationId, found)
    )
    return { interaction, client }
  })

const view = (interaction: StoredInteraction, client: StoredOAuthClient): OAuthInteraction => ({
  id: interaction.id,
  object: "oauth_interaction",
  client: { id: client.id, client_id: client.client_id, name: client.name, type: client.type },
  redirect_uri: interaction.redirect_uri,
  scopes: interaction.scopes,
  status: interaction.status,
  created_at: interaction.created_at,
  expires_at: interaction.expires_at
})

/** A pending interaction still in its ten minutes, else 409. */
const requirePending = (interaction: StoredInteraction, nowMsValue: number): Effect.Effect<void, Conflict> => {
  if (interaction.status !== "pending") {
    return Effect.fail(new Conflict({ message: `The interaction was already ${interaction.status}.`, param: null }))
  }
  return Date.parse(interaction.expires_at) <= nowMsValue
    ? Effect.fail(
        new Conflict({ message: "The interaction expired; the application must start a new authorization request.", param: null })
      )
    : Effect.void
}

const decided = () => new Conflict({ message: "The interaction was decided by another request.", param: null })

/** GET /v1/oauth/interactions/{id}: what the consent screen shows. */
export const getInteraction = (
  deps: OAuthDeps,
  caller: Caller,
  id: string
): Effect.Effect<OAuthInteraction, PermissionDenied | NotFound | SqlError.SqlError> =>
  Effect.map(findInteraction(deps, caller, id), ({ client, interaction }) => view(interaction, client))

/** The programs and scopes consented to must be the organization's, within the admin key's reach and the request. */
const checkConsent = (deps: OAuthDeps, caller: Caller, interaction: StoredInteraction, input: GrantInteraction) =>
  Effect.gen(function* () {
    const wider = input.scopes.filter((scope) => !interaction.scopes.includes(scope))
    if (wider.length > 0) {
      return yield* new InvalidRequest({ message: "scopes may only narrow the scopes the application requested.", param: "scopes" })
    }
    if (input.scopes.includes("pan_reveal") && !caller.panReveal) {
      return yield* new PermissionDenied({
        message: "This API key cannot grant pan_reveal: it is not enabled for PAN reveal itself.",
        param: "scopes"
      })
    }
    // `write` lets a token create card embed sessions (docs/oauth.md#scopes): a key without card
    // display cannot hand that out.
    if (input.scopes.includes("write") && !caller.cardDisplay) {
      return yield* new PermissionDenied({
        message: "This API key cannot grant write: it is not enabled for card display itself (write includes card display).",
        param: "scopes"
      })
    }
    if (input.program_ids.some((programId) => !canSeeProgram(caller, programId))) {
      return yield* new PermissionDenied({ message: "program_ids names a program this API key cannot access.", param: "program_ids" })
    }
    if ((yield* deps.access.countPrograms(caller.organizationId, input.program_ids)) !== input.program_ids.length) {
      return yield* new InvalidRequest({
        message: "program_ids names a program that does not exist in this organization.",
        param: "program_ids"
      })
    }
  })

/**
 * POST /v1/oauth/interactions/{id}/grant: in one transaction the interaction is decided (once),
 * the grant and a 60-second code are stored and `oauth_grant.created` is emitted; the host app
 * sends the browser to `redirect_to` (redirect_uri?code=…&state=…&iss=…).
 */
export const grantInteraction = (
  deps: OAuthDeps,
  caller: Caller,
  id: string,
  input: GrantInteraction
): Effect.Effect<OAuthRedirect, PermissionDenied | NotFound | Conflict | InvalidRequest | SqlError.SqlError> =>
  deps.transactor.withTransaction(
    Effect.gen(function* () {
      const { client, interaction } = yield* findInteraction(deps, caller, id)
      const now = yield* nowMs
      yield* requirePending(interaction, now)
      yield* checkConsent(deps, caller, interaction, input)
      if (!(yield* deps.store.decideInteraction(interaction.id, "granted", new Date(now).toISOString()))) return yield* decided()
      const grant: StoredGrant = {
        id: newId(),
        object: "oauth_grant",
        organization_id: caller.organizationId,
        oauth_client_id: client.id,
        client_id: client.client_id,
        program_ids: input.program_ids,
        scopes: input.scopes,
        api_key_id: caller.apiKeyId,
        created_at: new Date(now).toISOString(),
        revoked_at: null
      }
      yield* deps.store.insertGrant(grant)
      const code = newOAuthSecret("ac")
      yield* deps.store.insertCode({
        code_hash: hashSecret(code),
        grant_id: grant.id,
        oauth_client_id: client.id,
        redirect_uri: interaction.redirect_uri,
        code_challenge: interaction.code_challenge,
        expires_at: isoAfter(now, deps.config.oauthCodeTtlSeconds),
        used_at: null
      })
      yield* emitGrantEvent(deps, "oauth_grant.created", grant)
      const redirectTo = redirectWith(interaction.redirect_uri, { code, state: interaction.state, iss: deps.config.baseUrl })
      return { object: "oauth_redirect", redirect_to: redirectTo } as const
    })
  )

/** POST /v1/oauth/interactions/{id}/deny: the browser goes back to the client with error=access_denied. */
export const denyInteraction = (
  deps: OAuthDeps,
  caller: Caller,
  id: string
): Effect.Effect<OAuthRedirect, PermissionDenied | NotFound | Conflict | SqlError.SqlError> =>
  Effect.gen(function* () {
    const { interaction } = yield* findInteraction(deps, caller, id)
    const now = yield* nowMs
    yield* requirePending(interaction, now)
    if (!(yield* deps.store.decideInteraction(interaction.id, "denied", new Date(now).toISOString()))) return yield* decided()
    const redirectTo = redirectWith(interaction.redirect_uri, {
      error: "access_denied",
      error_description: "The user or the organization denied the request.",
      state: interaction.state,
      iss: deps.config.baseUrl
    })
    return { object: "oauth_redirect", redirect_to: redirectTo } as const
  })
