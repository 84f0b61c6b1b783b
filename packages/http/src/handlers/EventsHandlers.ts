import { HttpApiBuilder } from "@effect/platform"
import { EVENT_ORDER_FIELDS, Events } from "@issuing/core"
import { Effect } from "effect"
import { IssuingApi } from "../Api.js"
import { CurrentProgram } from "../middleware/Scopes.js"
import { mapToApiFailure } from "../errors.js"
import { timePaging } from "./Paging.js"

export const EventsHandlersLive = HttpApiBuilder.group(IssuingApi, "events", (handlers) =>
  Effect.gen(function* () {
    const events = yield* Events
    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentProgram
          const { created, page } = yield* timePaging(urlParams, EVENT_ORDER_FIELDS)
          return yield* mapToApiFailure(events.list(caller.program.id, { type: urlParams.type, created }, page))
        })
      )
      .handle("get", ({ path }) =>
        Effect.flatMap(CurrentProgram, (caller) => mapToApiFailure(events.get(caller.program.id, path.event_id)))
      )
  })
)
