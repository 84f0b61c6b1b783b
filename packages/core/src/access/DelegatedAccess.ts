import type { SqlError } from "@effect/sql"
import { Context, type Effect } from "effect"
import type { AccessTokenResolver } from "./Authentication.js"

/**
 * What access needs of the access it delegated through OAuth grants (docs/oauth.md): the caller an
 * access token acts as, and the grants a revoked key consented to. A port access owns and oauth
 * provides (`OAuthDelegatedAccessLive`), so that access stays below oauth
 * (docs/architecture.md#layers).
 */
export interface DelegatedAccessService {
  readonly resolveAccessToken: AccessTokenResolver
  /**
   * Revokes every grant the key consented to and their tokens, in the caller's transaction
   * (docs/oauth.md#incident-response); `forgetGrants` drops this process's cached tokens of them.
   */
  readonly revokeGrantsOfKey: (
    apiKeyId: string,
    at: string,
    forgetGrants: (grantIds: ReadonlyArray<string>) => void
  ) => Effect.Effect<void, SqlError.SqlError>
}

/** The delegated-access port. */
export class DelegatedAccess extends Context.Tag("@issuing/core/DelegatedAccess")<DelegatedAccess, DelegatedAccessService>() {}
