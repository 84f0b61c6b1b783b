import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { NetworkCardMessages, requireNetworkRight } from "@issuing/core"
import { Effect, Layer } from "effect"
import { IssuingApi } from "../Api.js"
import { NetworkRight } from "../api/NetworkApi.js"
import { CurrentCaller, currentResolvedCaller } from "../middleware/Scopes.js"
import { apiFailure, mapToApiFailure } from "../errors.js"

/**
 * The `network` right of a /v1/network/* group's caller (docs/network.md#authentication), checked
 * before the body is decoded, on the caller the request pipeline resolved for the route's scope.
 */
export const NetworkRightLive = Layer.succeed(
  NetworkRight,
  Effect.flatMap(currentResolvedCaller, (caller) =>
    caller !== null
      ? mapToApiFailure(requireNetworkRight(caller))
      : Effect.fail(apiFailure("permission_denied", "This operation needs an API key with the network right.", null))
  )
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
