import { HttpApiBuilder } from "@effect/platform"
import { CARDHOLDER_ORDER_FIELDS, Cardholders } from "@issuing/core"
import { Effect } from "effect"
import { IssuingApi } from "../Api.js"
import { CurrentProgram } from "../middleware/Scopes.js"
import { mapToApiFailure } from "../errors.js"
import { paging } from "./Paging.js"

// Payloads arrive decoded by the group's schemas (core cardholders/Records.ts).
export const CardholdersHandlersLive = HttpApiBuilder.group(IssuingApi, "cardholders", (handlers) =>
  Effect.gen(function* () {
    const cardholders = yield* Cardholders
    return handlers
      .handle("create", ({ payload }) =>
        Effect.flatMap(CurrentProgram, (caller) => mapToApiFailure(cardholders.create(caller.program.id, payload)))
      )
      .handle("list", ({ urlParams }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentProgram
          const page = yield* paging(urlParams, CARDHOLDER_ORDER_FIELDS)
          const { email, status } = urlParams
          return yield* mapToApiFailure(cardholders.list(caller.program.id, { email, status }, page))
        })
      )
      .handle("get", ({ path }) =>
        Effect.flatMap(CurrentProgram, (caller) => mapToApiFailure(cardholders.get(caller.program.id, path.cardholder_id)))
      )
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentProgram, (caller) => mapToApiFailure(cardholders.update(caller.program.id, path.cardholder_id, payload)))
      )
      .handle("verify", ({ path, payload }) =>
        Effect.flatMap(CurrentProgram, (caller) =>
          mapToApiFailure(cardholders.recordVerification(caller.program.id, path.cardholder_id, payload))
        )
      )
  })
)
