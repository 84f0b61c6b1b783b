import { HttpApiBuilder } from "@effect/platform"
import { Access, API_KEY_ORDER_FIELDS } from "@issuing/core"
import { Effect } from "effect"
import { IssuingApi } from "../Api.js"
import { CurrentCaller } from "../middleware/Scopes.js"
import { mapToApiFailure } from "../errors.js"
import { paging } from "./Paging.js"

export const ApiKeysHandlersLive = HttpApiBuilder.group(IssuingApi, "apiKeys", (handlers) =>
  Effect.gen(function* () {
    const access = yield* Access
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(CurrentCaller, (caller) => mapToApiFailure(access.createApiKey(caller, payload))))
      .handle("list", ({ urlParams }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentCaller
          const page = yield* paging(urlParams, API_KEY_ORDER_FIELDS)
          return yield* mapToApiFailure(access.listApiKeys(caller, page))
        })
      )
      .handle("revoke", ({ path }) =>
        Effect.flatMap(CurrentCaller, (caller) => mapToApiFailure(access.revokeApiKey(caller, path.api_key_id)))
      )
  })
)
