import type { SqlError } from "@effect/sql"
import { Effect, Option } from "effect"
import { hashSecret } from "../access/Secrets.js"
import { nowMs } from "../platform/Time.js"
import { revokeGrants } from "./Grants.js"
import type { OAuthDeps } from "./OAuthDeps.js"
import type { StoredGrant, StoredOAuthClient, StoredToken } from "./Records.js"

/** What POST /oauth/introspect answers (RFC 7662 §2.2); inactive tokens say nothing else. */
export type Introspection =
  | { readonly active: false }
  | {
      readonly active: true
      readonly scope: string
      readonly client_id: string
      readonly token_type: "access_token" | "refresh_token"
      readonly exp: number
      readonly iat: number
      readonly iss: string
      /** The grant the token belongs to. */
      readonly sub: string
      readonly program_ids: ReadonlyArray<string>
    }

/** The token and its grant when the token is ours, belongs to this client, and looks like a token at all. */
const ownToken = (deps: OAuthDeps, client: StoredOAuthClient, presented: string) =>
  Effect.gen(function* () {
    const none = Option.none<{ readonly token: StoredToken; readonly grant: StoredGrant }>()
    if (presented.length > 200 || !/^(at|rt)_[\x21-\x7e]+$/.test(presented)) return none
    const token = yield* deps.store.findToken(hashSecret(presented))
    if (Option.isNone(token)) return none
    const grant = yield* deps.store.findGrant(token.value.grant_id)
    if (Option.isNone(grant) || grant.value.oauth_client_id !== client.id) return none
    return Option.some({ token: token.value, grant: grant.value })
  })

/**
 * POST /oauth/revoke (RFC 7009): revoking a refresh token revokes its grant (and so every access
 * token of it); revoking an access token ends that token. Unknown tokens and other clients' tokens
 * are answered the same way (200), so the endpoint tells nothing about them. Either way the change
 * is published in the transaction: no node keeps serving the token from a cache.
 */
export const revokeToken = (deps: OAuthDeps, client: StoredOAuthClient, presented: string): Effect.Effect<void, SqlError.SqlError> =>
  deps.transactor.withTransaction(
    Effect.gen(function* () {
      const found = yield* ownToken(deps, client, presented)
      if (Option.isNone(found)) return
      const at = new Date(yield* nowMs).toISOString()
      const { grant, token } = found.value
      if (token.kind === "refresh") {
        yield* revokeGrants(deps, { grantId: grant.id }, at)
        return
      }
      if (yield* deps.store.revokeToken(token.token_hash, at)) {
        yield* deps.feed.publish("oauth", grant.id)
        deps.forgetGrants([grant.id])
      }
    })
  )

/** POST /oauth/introspect (RFC 7662): active only for this client's own live tokens. */
export const introspectToken = (
  deps: OAuthDeps,
  client: StoredOAuthClient,
  presented: string
): Effect.Effect<Introspection, SqlError.SqlError> =>
  Effect.gen(function* () {
    const found = yield* ownToken(deps, client, presented)
    const now = yield* nowMs
    if (Option.isNone(found)) return { active: false } as const
    const { grant, token } = found.value
    const live = grant.revoked_at === null && token.revoked_at === null && token.rotated_at === null && Date.parse(token.expires_at) > now
    if (!live) return { active: false } as const
    return {
      active: true,
      scope: token.scopes.join(" "),
      client_id: client.client_id,
      token_type: token.kind === "access" ? "access_token" : "refresh_token",
      exp: Math.floor(Date.parse(token.expires_at) / 1000),
      iat: Math.floor(Date.parse(token.created_at) / 1000),
      iss: deps.config.baseUrl,
      sub: grant.id,
      program_ids: grant.program_ids
    } as const
  })
