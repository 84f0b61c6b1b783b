import type { SqlError } from "@effect/sql"
import { Effect, Option } from "effect"
import { newId } from "../platform/Ids.js"
import { nowMs } from "../platform/Time.js"
import { isoAfter, type OAuthDeps } from "./OAuthDeps.js"
import type { OAuthErrorCode } from "./OAuthErrors.js"
import { isCodeChallenge, isPlausibleClientId } from "./Pkce.js"
import { isOAuthScope, OAUTH_LIMITS, type OAuthScope, type StoredOAuthClient, canonicalScopes } from "./Records.js"

/**
 * What GET /oauth/authorize answers: an error page (the client or its redirect_uri cannot be
 * trusted, so the browser is never sent anywhere), or a redirect — to the host app's consent page,
 * or back to the client with an error.
 */
export type AuthorizeOutcome =
  | { readonly _tag: "ErrorPage"; readonly status: number; readonly message: string }
  | { readonly _tag: "Redirect"; readonly location: string }

/** The parameters of an authorization request that may each appear once (RFC 6749 §3.1). */
const SINGLE_PARAMS = ["response_type", "client_id", "redirect_uri", "scope", "state", "code_challenge", "code_challenge_method"] as const

/** The client's redirect_uri with `params` added to its query (RFC 9207: `iss` on every answer). */
export const redirectWith = (redirectUri: string, params: Record<string, string | null>): string => {
  const url = new URL(redirectUri)
  for (const [name, value] of Object.entries(params)) if (value !== null) url.searchParams.append(name, value)
  return url.toString()
}

/** The scopes of a `scope` parameter, or the reason it is refused; absent means every scope of the client. */
export const parseScopeParam = (
  text: string | null,
  allowed: ReadonlyArray<OAuthScope>
): { readonly scopes: ReadonlyArray<OAuthScope> } | { readonly problem: string } => {
  if (text === null) return { scopes: allowed }
  const names = text.split(" ").filter((name) => name.length > 0)
  if (names.length === 0) return { problem: "scope is empty." }
  const unknown = names.filter((name) => !isOAuthScope(name) || !allowed.includes(name))
  if (unknown.length > 0) return { problem: `scope may only name scopes registered for this client: ${allowed.join(" ")}.` }
  return { scopes: canonicalScopes(names as Array<OAuthScope>) }
}

/** The first problem of a request whose client and redirect_uri are trusted, as an OAuth error. */
const requestProblem = (
  params: URLSearchParams,
  client: StoredOAuthClient
): { readonly error: OAuthErrorCode; readonly description: string } | { readonly scopes: ReadonlyArray<OAuthScope> } => {
  const repeated = SINGLE_PARAMS.find((name) => params.getAll(name).length > 1)
  if (repeated !== undefined) return { error: "invalid_request", description: `${repeated} must not be repeated.` }
  const responseType = params.get("response_type")
  if (responseType === null) return { error: "invalid_request", description: "response_type is required." }
  if (responseType !== "code") return { error: "unsupported_response_type", description: "Only response_type=code is supported." }
  const method = params.get("code_challenge_method")
  if (method === null) return { error: "invalid_request", description: "code_challenge_method is required and must be S256." }
  if (method !== "S256") return { error: "invalid_request", description: "code_challenge_method must be S256 (plain is not accepted)." }
  const challenge = params.get("code_challenge")
  if (challenge === null) return { error: "invalid_request", description: "code_challenge is required (PKCE)." }
  if (!isCodeChallenge(challenge)) {
    return { error: "invalid_request", description: "code_challenge must be exactly 43 characters of base64url (an S256 hash)." }
  }
  const state = params.get("state")
  if (state !== null && state.length > OAUTH_LIMITS.maxStateLength) {
    return { error: "invalid_request", description: `state must be at most ${OAUTH_LIMITS.maxStateLength} characters.` }
  }
  const scope = parseScopeParam(params.get("scope"), client.scopes)
  if ("problem" in scope) return { error: "invalid_scope", description: scope.problem }
  return scope
}

/**
 * GET /oauth/authorize (RFC 6749 §4.1, RFC 7636, RFC 9207): checks the request exactly and, when
 * valid, records an interaction (10 minutes) and sends the browser to the host app's consent page.
 */
export const authorize = (deps: OAuthDeps, params: URLSearchParams): Effect.Effect<AuthorizeOutcome, SqlError.SqlError> =>
  Effect.gen(function* () {
    const page = (message: string, status = 400): AuthorizeOutcome => ({ _tag: "ErrorPage", status, message })
    if (deps.config.oauthInteractionUrl === null) {
      return page("OAuth authorization is not enabled on this server (ISSUING_OAUTH_INTERACTION_URL is not set).", 503)
    }
    const clientIds = params.getAll("client_id")
    if (clientIds.length !== 1 || !isPlausibleClientId(clientIds[0]!)) return page("The request must name one client_id.")
    const found = yield* deps.store.findClientByClientId(clientIds[0]!)
    if (Option.isNone(found)) return page("Unknown client_id.")
    const client = found.value.client
    const redirectUris = params.getAll("redirect_uri")
    // Exact string comparison with a registered URI (no normalisation): anything else could send a
    // code to an attacker, so it is told on a page of ours, never by a redirect.
    if (redirectUris.length !== 1 || !client.redirect_uris.includes(redirectUris[0]!)) {
      return page("The redirect_uri is missing or is not registered for this client.")
    }
    const redirectUri = redirectUris[0]!
    const issuer = deps.config.baseUrl
    const checked = requestProblem(params, client)
    const state = params.getAll("state").length === 1 ? params.get("state") : null
    const echoedState = state !== null && state.length <= OAUTH_LIMITS.maxStateLength ? state : null
    if ("error" in checked) {
      const location = redirectWith(redirectUri, {
        error: checked.error,
        error_description: checked.description,
        state: echoedState,
        iss: issuer
      })
      return { _tag: "Redirect", location } as const
    }
    const now = yield* nowMs
    // A bound on the rows anonymous requests can make one client hold (docs/oauth.md#the-authorization-request).
    const open = yield* deps.store.countOpenInteractions(client.id, new Date(now).toISOString(), OAUTH_LIMITS.maxOpenInteractionsPerClient)
    if (open >= OAUTH_LIMITS.maxOpenInteractionsPerClient) {
      const location = redirectWith(redirectUri, {
        error: "temporarily_unavailable",
        error_description: "Too many authorization requests of this client are waiting for consent; retry later.",
        state: echoedState,
        iss: issuer
      })
      return { _tag: "Redirect", location } as const
    }
    const id = newId()
    yield* deps.store.insertInteraction({
      id,
      organization_id: client.organization_id,
      oauth_client_id: client.id,
      redirect_uri: redirectUri,
      scopes: checked.scopes,
      state,
      code_challenge: params.get("code_challenge")!,
      status: "pending",
      created_at: new Date(now).toISOString(),
      expires_at: isoAfter(now, OAUTH_LIMITS.interactionTtlSeconds)
    })
    const consent = new URL(deps.config.oauthInteractionUrl)
    consent.searchParams.set("interaction", id)
    return { _tag: "Redirect", location: consent.toString() } as const
  })
