import type { SqlError } from "@effect/sql"
import { Effect, Option } from "effect"
import { hashSecret } from "../access/Secrets.js"
import { nowMs } from "../platform/Time.js"
import { parseScopeParam } from "./Authorize.js"
import { revokeGrants } from "./Grants.js"
import { isoAfter, type OAuthDeps } from "./OAuthDeps.js"
import { type OAuthProtocolError, oauthError } from "./OAuthErrors.js"
import { hashesEqual, isCodeVerifier, isPlausibleClientId, newOAuthSecret, verifierMatches } from "./Pkce.js"
import type { OAuthScope, StoredGrant, StoredOAuthClient, StoredToken } from "./Records.js"

/** How a client presented itself at an endpoint: the http layer reads Basic or the form, core checks it. */
export interface ClientCredentials {
  readonly clientId: string
  /** null when none was sent (public clients). */
  readonly clientSecret: string | null
}

/** The form parameters of a token request, each present at most once (the http layer refuses repeats). */
export type TokenParams = Readonly<Record<string, string | undefined>>

/** The body of a successful token response (RFC 6749 §5.1). */
export interface TokenResponse {
  readonly access_token: string
  readonly token_type: "Bearer"
  readonly expires_in: number
  readonly refresh_token: string
  readonly scope: string
}

/** Secrets, codes and tokens are looked up only when they could be ours: bounded printable text. */
const plausible = (text: string | undefined, prefix: string): text is string =>
  text !== undefined && /^[\x21-\x7e]{4,200}$/.test(text) && text.startsWith(prefix)

/**
 * Authenticates the client (RFC 6749 §2.3): a confidential client by its secret (client_secret_basic
 * or client_secret_post, compared as hashes in constant time), a public one by its client_id alone.
 * A deleted client is unknown. Every failure is invalid_client.
 */
export const authenticateClient = (
  deps: OAuthDeps,
  credentials: ClientCredentials
): Effect.Effect<StoredOAuthClient, OAuthProtocolError | SqlError.SqlError> =>
  Effect.gen(function* () {
    const refused = oauthError("invalid_client", "Client authentication failed.")
    if (!isPlausibleClientId(credentials.clientId)) return yield* refused
    const found = yield* deps.store.findClientByClientId(credentials.clientId)
    if (Option.isNone(found)) return yield* refused
    const { client, secretHash } = found.value
    if (client.type === "public") {
      if (credentials.clientSecret !== null)
        return yield* oauthError("invalid_client", "A public client does not authenticate with a secret.")
      return client
    }
    if (credentials.clientSecret === null || secretHash === null || !hashesEqual(hashSecret(credentials.clientSecret), secretHash)) {
      return yield* refused
    }
    return client
  })

/** A new access and refresh token pair of a grant: the stored rows (hashes) and the response (the only place they appear). */
const issueTokens = (
  deps: OAuthDeps,
  grantId: string,
  accessScopes: ReadonlyArray<OAuthScope>,
  refreshScopes: ReadonlyArray<OAuthScope>,
  now: number
) =>
  Effect.gen(function* () {
    const accessToken = newOAuthSecret("at")
    const refreshToken = newOAuthSecret("rt")
    const createdAt = new Date(now).toISOString()
    const token = (secret: string, kind: StoredToken["kind"], scopes: ReadonlyArray<OAuthScope>, ttlSeconds: number): StoredToken => ({
      token_hash: hashSecret(secret),
      grant_id: grantId,
      kind,
      scopes,
      created_at: createdAt,
      expires_at: isoAfter(now, ttlSeconds),
      rotated_at: null,
      revoked_at: null
    })
    yield* deps.store.insertTokens([
      token(accessToken, "access", accessScopes, deps.config.oauthAccessTokenTtlSeconds),
      token(refreshToken, "refresh", refreshScopes, deps.config.oauthRefreshTokenTtlSeconds)
    ])
    return {
      access_token: accessToken,
      token_type: "Bearer",
      expires_in: deps.config.oauthAccessTokenTtlSeconds,
      refresh_token: refreshToken,
      scope: accessScopes.join(" ")
    } satisfies TokenResponse
  })

/** The outcome of a transaction that may have to commit a revocation and still refuse. */
type Outcome = { readonly issued: TokenResponse } | { readonly refused: OAuthProtocolError }

const refuse = (description: string): Outcome => ({ refused: oauthError("invalid_grant", description) })

/** Runs the transaction, then fails with its refusal, after the commit (so a reuse revocation holds). */
const settle = (deps: OAuthDeps, work: Effect.Effect<Outcome, OAuthProtocolError | SqlError.SqlError>) =>
  Effect.flatMap(deps.transactor.withTransaction(work), (outcome) =>
    "issued" in outcome ? Effect.succeed(outcome.issued) : Effect.fail(outcome.refused)
  )

/** An active grant of this client, or none (revoked, or another client's). */
const liveGrant = (deps: OAuthDeps, grantId: string, client: StoredOAuthClient) =>
  Effect.map(deps.store.findGrant(grantId), (grant) =>
    Option.filter(grant, (found): found is StoredGrant => found.revoked_at === null && found.oauth_client_id === client.id)
  )

/**
 * grant_type=authorization_code (RFC 6749 §4.1.3, RFC 7636 §4.6). A code works once: presenting it
 * again — or losing a race for it — revokes the grant and so every token the first use issued.
 * Only a request that proves it holds the code's context counts as a replay: its client,
 * redirect_uri and code_verifier are checked first, so whoever merely saw a spent code (in a log,
 * a Referer) cannot revoke the legitimate grant with it.
 */
export const exchangeCode = (
  deps: OAuthDeps,
  client: StoredOAuthClient,
  params: TokenParams
): Effect.Effect<TokenResponse, OAuthProtocolError | SqlError.SqlError> =>
  Effect.gen(function* () {
    const { code, code_verifier: verifier, redirect_uri: redirectUri } = params
    if (code === undefined) return yield* oauthError("invalid_request", "code is required.")
    if (redirectUri === undefined) return yield* oauthError("invalid_request", "redirect_uri is required.")
    if (verifier === undefined) return yield* oauthError("invalid_request", "code_verifier is required (PKCE).")
    if (!isCodeVerifier(verifier)) {
      return yield* oauthError("invalid_request", "code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~.")
    }
    if (!plausible(code, "ac_")) return yield* oauthError("invalid_grant", "The code is invalid, expired or was already used.")
    const codeHash = hashSecret(code)
    return yield* settle(
      deps,
      Effect.gen(function* () {
        const now = yield* nowMs
        const found = yield* deps.store.findCode(codeHash)
        if (Option.isNone(found) || found.value.oauth_client_id !== client.id)
          return refuse("The code is invalid, expired or was already used.")
        const stored = found.value
        const reused = () =>
          Effect.as(
            revokeGrants(deps, { grantId: stored.grant_id }, new Date(now).toISOString()),
            refuse("The code was already used; the tokens issued for it are revoked.")
          )
        if (stored.redirect_uri !== redirectUri) return refuse("redirect_uri differs from the one of the authorization request.")
        if (!verifierMatches(verifier, stored.code_challenge)) return refuse("code_verifier does not match the code_challenge.")
        if (stored.used_at !== null) return yield* reused()
        if (Date.parse(stored.expires_at) <= now) return refuse("The code is invalid, expired or was already used.")
        if (!(yield* deps.store.consumeCode(codeHash, new Date(now).toISOString()))) return yield* reused()
        const grant = yield* liveGrant(deps, stored.grant_id, client)
        if (Option.isNone(grant)) return refuse("The grant of this code was revoked.")
        return { issued: yield* issueTokens(deps, grant.value.id, grant.value.scopes, grant.value.scopes, now) }
      })
    )
  })

/**
 * grant_type=refresh_token (RFC 6749 §6, OAuth 2.1 §4.3.1). Every refresh retires the token (one
 * compare-and-set) and returns a new pair; a retired token presented again — or the loser of two
 * racing refreshes — revokes the whole grant. `scope` may narrow the new access token only.
 */
export const refreshTokens = (
  deps: OAuthDeps,
  client: StoredOAuthClient,
  params: TokenParams
): Effect.Effect<TokenResponse, OAuthProtocolError | SqlError.SqlError> =>
  Effect.gen(function* () {
    const presented = params.refresh_token
    if (presented === undefined) return yield* oauthError("invalid_request", "refresh_token is required.")
    if (!plausible(presented, "rt_")) return yield* oauthError("invalid_grant", "The refresh token is invalid, expired or revoked.")
    const tokenHash = hashSecret(presented)
    return yield* settle(
      deps,
      Effect.gen(function* () {
        const now = yield* nowMs
        const found = yield* deps.store.findToken(tokenHash)
        if (Option.isNone(found) || found.value.kind !== "refresh") return refuse("The refresh token is invalid, expired or revoked.")
        const token = found.value
        const grant = yield* liveGrant(deps, token.grant_id, client)
        if (Option.isNone(grant) || token.revoked_at !== null) return refuse("The refresh token is invalid, expired or revoked.")
        const reused = () =>
          Effect.as(
            revokeGrants(deps, { grantId: token.grant_id }, new Date(now).toISOString()),
            refuse("The refresh token was already used; the grant is revoked.")
          )
        if (token.rotated_at !== null) return yield* reused()
        if (Date.parse(token.expires_at) <= now) return refuse("The refresh token is invalid, expired or revoked.")
        const scopes = parseScopeParam(params.scope ?? null, token.scopes)
        if ("problem" in scopes) return { refused: oauthError("invalid_scope", "scope may only narrow the scopes of the grant.") }
        if (!(yield* deps.store.rotateRefreshToken(tokenHash, new Date(now).toISOString()))) return yield* reused()
        return { issued: yield* issueTokens(deps, token.grant_id, scopes.scopes, token.scopes, now) }
      })
    )
  })
