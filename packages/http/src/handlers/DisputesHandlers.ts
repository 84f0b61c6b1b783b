import { HttpApiBuilder } from "@effect/platform"
import { DISPUTE_ORDER_FIELDS, Disputes } from "@issuing/core"
import { Effect } from "effect"
import { IssuingApi } from "../Api.js"
import { CurrentProgram } from "../middleware/Scopes.js"
import { mapToApiFailure } from "../errors.js"
import { paging } from "./Paging.js"

const programId = Effect.map(CurrentProgram, (caller) => caller.program.id)

export const DisputesHandlersLive = HttpApiBuilder.group(IssuingApi, "disputes", (handlers) =>
  Effect.gen(function* () {
    const disputes = yield* Disputes
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(programId, (program) => mapToApiFailure(disputes.create(program, payload))))
      .handle("list", ({ urlParams }) =>
        Effect.gen(function* () {
          const page = yield* paging(urlParams, DISPUTE_ORDER_FIELDS)
          const { status, transaction_id } = urlParams
          return yield* mapToApiFailure(disputes.list(yield* programId, { status, transaction_id }, page))
        })
      )
      .handle("get", ({ path }) => Effect.flatMap(programId, (program) => mapToApiFailure(disputes.get(program, path.dispute_id))))
  })
)

/** Sandbox only: the pipeline answers it as an unknown URL in production (SandboxOnly). The network's route runs the same use case. */
export const SimulateDisputesHandlersLive = HttpApiBuilder.group(IssuingApi, "simulateDisputes", (handlers) =>
  Effect.gen(function* () {
    const disputes = yield* Disputes
    return handlers.handle("resolve", ({ path, payload }) =>
      Effect.flatMap(programId, (program) => mapToApiFailure(disputes.resolve(program, path.dispute_id, payload)))
    )
  })
)

/** The network's decision: the group's NetworkRight middleware has checked the caller's `network` right. */
export const NetworkDisputesHandlersLive = HttpApiBuilder.group(IssuingApi, "networkDisputes", (handlers) =>
  Effect.gen(function* () {
    const disputes = yield* Disputes
    return handlers.handle("resolve", ({ path, payload }) =>
      Effect.flatMap(programId, (program) => mapToApiFailure(disputes.resolve(program, path.dispute_id, payload)))
    )
  })
)
