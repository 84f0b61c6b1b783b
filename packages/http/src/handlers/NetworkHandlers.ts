import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { NetworkCardMessages, requireNetworkRight } from "@issuing/core"
import { Effect, Layer, Option } from "effect"
import { IssuingApi } from "../Api.js"
import { NetworkRight } from "../api/NetworkApi.js"
import { CurrentCaller, CurrentProgram } from "../api/Security.js"
import { apiFailure, mapToApiFailure } from "../errors.js"

/**
 * The `network` right of a /v1/network/* group's caller (docs/network.md#authentication), checked
 * before the body is decoded: the group's scope middleware, outside it, has provided the caller.
 */
export const NetworkRightLive = Layer.succeed(
  NetworkRight,
  Effect.flatMap(Effect.all([Effect.serviceOption(CurrentCaller), Effect.serviceOption(CurrentProgram)]), ([caller, program]) => {
    const found = Option.orElse(caller, () => program)
    return Option.isSome(found)
      ? mapToApiFailure(requireNetworkRight(found.value))
      : Effect.fail(apiFailure("permission_denied", "This operation needs an API key with the network right.", null))
  })
)

export const NetworkCardMessagesHandlersLive = HttpApiBuilder.group(IssuingApi, "networkCardMessages", (handlers) =>
  Effect.gen(function* () {
    const messages = yield* NetworkCardMessages
    // The answer's text as first made (a retransmission gets the same bytes), with Idempotent-Replayed on a repeat.
    return handlers.handle("create", ({ payload }) =>
      Effect.gen(function* () {
        const caller = yield* CurrentCaller
        const answer = yield* mapToApiFailure(messages.receive(caller, payload))
        return HttpServerResponse.text(answer.body, {
          status: answer.status,
          contentType: "application/json",
          headers: answer.replayed ? { "idempotent-replayed": "true" } : {}
        })
      })
    )
  })
)
