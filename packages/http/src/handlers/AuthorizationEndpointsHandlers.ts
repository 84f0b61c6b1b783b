import { HttpApiBuilder } from "@effect/platform"
import { AUTHORIZATION_ENDPOINT_ORDER_FIELDS, AuthorizationEndpoints } from "@issuing/core"
import { Effect } from "effect"
import { IssuingApi } from "../Api.js"
import { CurrentProgram } from "../middleware/Scopes.js"
import { mapToApiFailure } from "../errors.js"
import { paging } from "./Paging.js"

// Payloads arrive decoded by the group's schemas (core cards/AuthorizationEndpointRecords.ts).
export const AuthorizationEndpointsHandlersLive = HttpApiBuilder.group(IssuingApi, "authorizationEndpoints", (handlers) =>
  Effect.gen(function* () {
    const endpoints = yield* AuthorizationEndpoints
    return handlers
      .handle("create", ({ payload }) =>
        Effect.flatMap(CurrentProgram, (caller) => mapToApiFailure(endpoints.create(caller.program.id, payload)))
      )
      .handle("list", ({ urlParams }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentProgram
          const page = yield* paging(urlParams, AUTHORIZATION_ENDPOINT_ORDER_FIELDS)
          return yield* mapToApiFailure(endpoints.list(caller.program.id, page))
        })
      )
      .handle("get", ({ path }) =>
        Effect.flatMap(CurrentProgram, (caller) => mapToApiFailure(endpoints.get(caller.program.id, path.authorization_endpoint_id)))
      )
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentProgram, (caller) =>
          mapToApiFailure(endpoints.update(caller.program.id, path.authorization_endpoint_id, payload))
        )
      )
      .handle("delete", ({ path }) =>
        Effect.flatMap(CurrentProgram, (caller) => mapToApiFailure(endpoints.remove(caller.program.id, path.authorization_endpoint_id)))
      )
      .handle("rotateSecret", ({ path }) =>
        Effect.flatMap(CurrentProgram, (caller) =>
          mapToApiFailure(endpoints.rotateSecret(caller.program.id, path.authorization_endpoint_id))
        )
      )
  })
)
