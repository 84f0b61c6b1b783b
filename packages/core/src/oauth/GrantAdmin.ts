import type { SqlError } from "@effect/sql"
import { Effect, Option } from "effect"
import type { Caller } from "../access/Records.js"
import type { InvalidRequest, NotFound, PermissionDenied } from "../platform/Errors.js"
import { findOwned } from "../platform/FindOwned.js"
import { type Page, type PageRequest, pageOf, toWindow } from "../platform/Paging.js"
import { nowIso } from "../platform/Time.js"
import { requireOrganizationAdmin } from "./Clients.js"
import { grantView, revokeGrants } from "./Grants.js"
import type { OAuthDeps } from "./OAuthDeps.js"
import { OAUTH_GRANT_ORDER_FIELDS, type OAuthGrantOrderField } from "./OrderFields.js"
import type { OAuthGrant } from "./Records.js"

const GRANT = { resource: "OAuth grant", param: "grant_id" } as const

/** GET /v1/oauth/grants (admin key not limited by program_ids): the organization's unrevoked grants, newest first by default. */
export const listGrants = (
  deps: OAuthDeps,
  caller: Caller,
  page: PageRequest<OAuthGrantOrderField>
): Effect.Effect<Page<OAuthGrant>, PermissionDenied | InvalidRequest | SqlError.SqlError> =>
  Effect.gen(function* () {
    yield* requireOrganizationAdmin(caller)
    const window = toWindow(page, OAUTH_GRANT_ORDER_FIELDS)
    const { rows, total } = yield* deps.store.listGrants(caller.organizationId, window)
    return pageOf(window, rows.map(grantView), total)
  })

/**
 * DELETE /v1/oauth/grants/{grant_id} (admin key not limited by program_ids): revokes the grant and
 * every token of it on every node from the commit (docs/oauth.md#incident-response). Unknown,
 * revoked and other organizations' grants are not found.
 */
export const revokeGrant = (
  deps: OAuthDeps,
  caller: Caller,
  id: string
): Effect.Effect<OAuthGrant, PermissionDenied | NotFound | SqlError.SqlError> =>
  deps.transactor.withTransaction(
    Effect.gen(function* () {
      yield* requireOrganizationAdmin(caller)
      const at = yield* nowIso
      const revoked = yield* findOwned(id, GRANT, (found) =>
        Effect.flatMap(deps.store.findGrant(found), (grant) =>
          Option.isSome(grant) && grant.value.organization_id === caller.organizationId && grant.value.revoked_at === null
            ? Effect.map(revokeGrants(deps, { grantId: found }, at), (rows) => Option.fromNullable(rows[0]))
            : Effect.succeed(Option.none())
        )
      )
      return grantView(revoked)
    })
  )
