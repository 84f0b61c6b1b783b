import type { SqlError } from "@effect/sql"
import { Effect } from "effect"
import type { OAuthDeps } from "./OAuthDeps.js"
import type { GrantTarget } from "./OAuthStore.js"
import type { OAuthGrant, StoredGrant } from "./Records.js"

/** A grant as events show it (its organization stays out of webhook payloads). */
export const grantView = ({ organization_id: _, ...grant }: StoredGrant): OAuthGrant => grant

/** Emits one event per program of the grant (events and webhooks are per program); inside the change's transaction. */
export const emitGrantEvent = (
  deps: Pick<OAuthDeps, "events">,
  type: "oauth_grant.created" | "oauth_grant.revoked",
  grant: StoredGrant
): Effect.Effect<void, SqlError.SqlError> =>
  Effect.forEach(grant.program_ids, (programId) => deps.events.emit(programId, type, grantView(grant)), { discard: true })

/** What revoking grants needs (access revokes a key's grants with it, through OAuthDelegatedAccess.ts). */
export type GrantRevocationDeps = Pick<OAuthDeps, "store" | "events" | "feed" | "forgetGrants">

/**
 * Revokes grants and every token of them, emits `oauth_grant.revoked` for each and publishes the
 * change, all in the caller's transaction: from the commit no node serves a cached access token
 * of them (docs/operations.md#running-several-nodes). Returns the grants this call revoked.
 */
export const revokeGrants = (
  deps: GrantRevocationDeps,
  target: GrantTarget,
  at: string
): Effect.Effect<ReadonlyArray<StoredGrant>, SqlError.SqlError> =>
  Effect.gen(function* () {
    const revoked = yield* deps.store.revokeGrants(target, at)
    for (const grant of revoked) yield* emitGrantEvent(deps, "oauth_grant.revoked", grant)
    if (revoked.length > 0) {
      yield* deps.feed.publish("oauth", revoked[0]!.id)
      deps.forgetGrants(revoked.map((grant) => grant.id))
    }
    return revoked
  })
