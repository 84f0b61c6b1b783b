import { Schema } from "effect"
import { DisplayName } from "../access/Records.js"
import { isUuid } from "../platform/Ids.js"
import { oneOf } from "../platform/Literals.js"

/**
 * OAuth 2.1 records and request inputs (docs/oauth.md): clients, interactions, grants and the
 * stored forms of codes and tokens. Secrets, codes and tokens are never kept: only their SHA-256.
 */

/** Bounds of the OAuth surface (TigerStyle: a limit on everything). */
export const OAUTH_LIMITS = {
  maxRedirectUris: 10,
  maxRedirectUriLength: 2000,
  maxStateLength: 1024,
  maxProgramIds: 100,
  interactionTtlSeconds: 600,
  /** Pending, unexpired interactions one client may have; further authorization requests are refused. */
  maxOpenInteractionsPerClient: 100,
  codeTtlSeconds: 60
} as const

/** What a token may do: read (GET), write (read and what a developer key may write), pan_reveal. */
export const OAUTH_SCOPES = ["read", "write", "pan_reveal"] as const
export const OAuthScope = oneOf(...OAUTH_SCOPES)
export type OAuthScope = typeof OAuthScope.Type

/** True when the text names a scope. */
export const isOAuthScope = (text: string): text is OAuthScope => (OAUTH_SCOPES as ReadonlyArray<string>).includes(text)

/** Scopes in their canonical order without duplicates. */
export const canonicalScopes = (scopes: Iterable<OAuthScope>): ReadonlyArray<OAuthScope> => {
  const set = new Set(scopes)
  return OAUTH_SCOPES.filter((scope) => set.has(scope))
}

/** Confidential clients authenticate with a secret at the token endpoint; public ones (SPAs, native apps) cannot keep one. */
export const OAuthClientType = oneOf("confidential", "public")
export type OAuthClientType = typeof OAuthClientType.Type

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"])

/**
 * Why a redirect URI is refused, or undefined: an absolute URL without fragment or credentials,
 * https — or http on a loopback host, or a private-use scheme with a dot (RFC 8252 native apps) —
 * written exactly as its normalised form (WHATWG URL `href`). The string registered is the string
 * matched and redirected to: a URI the parser would rewrite (control characters and spaces
 * dropped or escaped, a host's case, a missing "/") could redirect somewhere other than what was
 * registered, so it is refused instead (docs/oauth.md#clients).
 */
export const redirectUriProblem = (text: string): string | undefined => {
  if (text.length > OAUTH_LIMITS.maxRedirectUriLength) return `must be at most ${OAUTH_LIMITS.maxRedirectUriLength} characters`
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return "must be an absolute URL"
  }
  if (url.hash !== "" || text.includes("#")) return "must not have a fragment"
  if (url.username !== "" || url.password !== "") return "must not carry credentials"
  if (url.href !== text) {
    return "must be written in its normalised form (no control characters or spaces, a lower-case host, a path of at least /)"
  }
  if (url.protocol === "https:") return undefined
  if (url.protocol === "http:") return LOOPBACK_HOSTS.has(url.hostname) ? undefined : "must use https (http only on a loopback host)"
  return /^[a-z][a-z0-9+.-]*\.[a-z0-9+.-]+:$/.test(url.protocol) ? undefined : "must use https, loopback http or a private-use scheme"
}

/** The scopes of a client or a grant: at least one, each known; kept in canonical order. */
const ScopeList = Schema.transform(
  Schema.Array(OAuthScope).pipe(Schema.minItems(1, { message: () => "must hold at least one scope" })),
  Schema.typeSchema(Schema.Array(OAuthScope)),
  { strict: true, decode: (scopes) => [...canonicalScopes(scopes)], encode: (scopes) => scopes }
)

/** POST /v1/oauth-clients. */
export const CreateOAuthClient = Schema.Struct({
  name: DisplayName,
  redirect_uris: Schema.Array(Schema.String.pipe(Schema.filter((uri) => redirectUriProblem(uri) ?? true)))
    .pipe(
      Schema.minItems(1, { message: () => "must hold at least one redirect URI" }),
      Schema.maxItems(OAUTH_LIMITS.maxRedirectUris, { message: () => `may hold at most ${OAUTH_LIMITS.maxRedirectUris} URIs` })
    )
    .annotations({
      description: `1 to ${OAUTH_LIMITS.maxRedirectUris} exact URIs the client may be redirected to (https, http on a loopback host, or a private-use scheme).`
    }),
  type: OAuthClientType,
  scopes: Schema.propertySignature(ScopeList).annotations({ description: "The scopes the client may ask for (at least one)." })
})
export type CreateOAuthClient = typeof CreateOAuthClient.Type

/** A connected application as the API shows it: never its secret. */
export const OAuthClient = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("oauth_client"),
  name: Schema.String,
  client_id: Schema.String.annotations({
    description: "The client's public OAuth client_id, as it sends it to /oauth/authorize and /oauth/token."
  }),
  redirect_uris: Schema.Array(Schema.String).annotations({ description: "The exact URIs the authorization server may redirect to." }),
  type: OAuthClientType,
  scopes: Schema.Array(OAuthScope),
  created_at: Schema.String
}).annotations({ identifier: "OAuthClient" })
export type OAuthClient = typeof OAuthClient.Type

/** A client as created or with a rotated secret: the only time `client_secret` is shown (confidential clients). */
export const OAuthClientWithSecret = Schema.Struct({
  ...OAuthClient.fields,
  client_secret: Schema.optional(
    Schema.String.annotations({ description: "A confidential client's secret, in this answer only; absent for a public client." })
  )
}).annotations({ identifier: "OAuthClientWithSecret" })
export type OAuthClientWithSecret = typeof OAuthClientWithSecret.Type

/** A client as stored: its organization beside what the API shows (the secret only as a hash, beside the row). */
export interface StoredOAuthClient extends OAuthClient {
  readonly organization_id: string
}

/** Where an interaction stands: waiting for the host app, or decided. */
export type InteractionStatus = "pending" | "granted" | "denied"

/** An authorization request waiting for the host app's login and consent (lives 10 minutes). */
export interface StoredInteraction {
  readonly id: string
  readonly organization_id: string
  /** The client's row id (not its public client_id). */
  readonly oauth_client_id: string
  readonly redirect_uri: string
  readonly scopes: ReadonlyArray<OAuthScope>
  readonly state: string | null
  readonly code_challenge: string
  readonly status: InteractionStatus
  readonly created_at: string
  readonly expires_at: string
}

/** GET /v1/oauth/interactions/{id}: what the host app shows on its consent screen. */
export const OAuthInteraction = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("oauth_interaction"),
  client: Schema.Struct({
    id: Schema.String,
    client_id: Schema.String.annotations({
      description: "The client's public OAuth client_id, as it sends it to /oauth/authorize and /oauth/token."
    }),
    name: Schema.String,
    type: OAuthClientType
  }).annotations({ description: "The client asking: its ids, name and type." }),
  redirect_uri: Schema.String.annotations({ description: "Where the browser goes back to once the user grants or denies." }),
  scopes: Schema.Array(OAuthScope),
  status: oneOf("pending", "granted", "denied"),
  created_at: Schema.String,
  expires_at: Schema.String
}).annotations({ identifier: "OAuthInteraction" })
export type OAuthInteraction = typeof OAuthInteraction.Type

/** POST /v1/oauth/interactions/{id}/grant: the programs and scopes the user consented to. */
export const GrantInteraction = Schema.Struct({
  program_ids: Schema.transform(
    Schema.Array(Schema.String).pipe(
      Schema.minItems(1, { message: () => "must name at least one program" }),
      Schema.maxItems(OAUTH_LIMITS.maxProgramIds, { message: () => `may name at most ${OAUTH_LIMITS.maxProgramIds} programs` }),
      Schema.filter((ids) => ids.every(isUuid) || "must hold program UUIDs")
    ),
    Schema.typeSchema(Schema.Array(Schema.String)),
    { strict: true, decode: (ids) => [...new Set(ids.map((id) => id.toLowerCase()))], encode: (ids) => ids }
  ).annotations({ description: `The programs the user grants the client, 1 to ${OAUTH_LIMITS.maxProgramIds}.` }),
  scopes: Schema.propertySignature(ScopeList).annotations({ description: "The scopes the user grants, among those asked for." })
})
export type GrantInteraction = typeof GrantInteraction.Type

/** Where the host app sends the browser next: the client's redirect_uri with a code or an error. */
export const OAuthRedirect = Schema.Struct({
  object: Schema.Literal("oauth_redirect"),
  redirect_to: Schema.String.annotations({
    description: "The URL to send the browser to: the client's redirect_uri with code and state, or error."
  })
}).annotations({ identifier: "OAuthRedirect" })
export type OAuthRedirect = typeof OAuthRedirect.Type

/** A grant: what one consent allowed one client on some programs; its tokens live and die with it. */
export const OAuthGrant = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("oauth_grant"),
  oauth_client_id: Schema.String.annotations({ description: "The client's id (its `id`, not its public client_id)." }),
  client_id: Schema.String.annotations({
    description: "The client's public OAuth client_id, as it sends it to /oauth/authorize and /oauth/token."
  }),
  program_ids: Schema.Array(Schema.String).annotations({ description: "The programs the grant allows the client to act in." }),
  scopes: Schema.Array(OAuthScope),
  api_key_id: Schema.NullOr(Schema.String).annotations({
    description:
      "The admin key that consented: revoking it revokes the grant (docs/oauth.md#incident-response). Null for grants made before keys were recorded."
  }),
  created_at: Schema.String,
  revoked_at: Schema.NullOr(Schema.String).annotations({ description: "When the grant was revoked (RFC 3339, UTC), or null." })
}).annotations({ identifier: "OAuthGrant" })
export type OAuthGrant = typeof OAuthGrant.Type

/** A grant as stored: its organization beside what events show. */
export interface StoredGrant extends OAuthGrant {
  readonly organization_id: string
}

/** An authorization code as stored (single use, 60 s): found by its hash only. */
export interface StoredCode {
  readonly code_hash: string
  readonly grant_id: string
  readonly oauth_client_id: string
  readonly redirect_uri: string
  readonly code_challenge: string
  readonly expires_at: string
  readonly used_at: string | null
}

/** Access or refresh. */
export type TokenKind = "access" | "refresh"

/** A token as stored: its hash, its grant, its own (possibly narrower) scopes and life. */
export interface StoredToken {
  readonly token_hash: string
  readonly grant_id: string
  readonly kind: TokenKind
  readonly scopes: ReadonlyArray<OAuthScope>
  readonly created_at: string
  readonly expires_at: string
  /** A refresh token exchanged for a new one (presenting it again is reuse). */
  readonly rotated_at: string | null
  readonly revoked_at: string | null
}

/** An active access token with what a request acting on it needs (grant and client alive). */
export interface ActiveAccessToken {
  readonly grant_id: string
  readonly organization_id: string
  readonly oauth_client_id: string
  readonly program_ids: ReadonlyArray<string>
  readonly scopes: ReadonlyArray<OAuthScope>
  readonly expires_at: string
}
