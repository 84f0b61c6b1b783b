import { HttpApiBuilder } from "@effect/platform"
import { Access, PROGRAM_ORDER_FIELDS } from "@issuing/core"
import { Effect } from "effect"
import { IssuingApi } from "../Api.js"
import { CurrentCaller } from "../middleware/Scopes.js"
import { mapToApiFailure } from "../errors.js"
import { paging } from "./Paging.js"

export const ProgramsHandlersLive = HttpApiBuilder.group(IssuingApi, "programs", (handlers) =>
  Effect.gen(function* () {
    const access = yield* Access
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(CurrentCaller, (caller) => mapToApiFailure(access.createProgram(caller, payload))))
      .handle("list", ({ urlParams }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentCaller
          const page = yield* paging(urlParams, PROGRAM_ORDER_FIELDS)
          return yield* mapToApiFailure(access.listPrograms(caller, page))
        })
      )
      .handle("get", ({ path }) => Effect.flatMap(CurrentCaller, (caller) => mapToApiFailure(access.getProgram(caller, path.program_id))))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentCaller, (caller) => mapToApiFailure(access.updateProgram(caller, path.program_id, payload)))
      )
  })
)
