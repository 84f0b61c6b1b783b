import { HttpApiBuilder } from "@effect/platform"
import { WEBHOOK_ATTEMPT_ORDER_FIELDS, WEBHOOK_SUBSCRIPTION_ORDER_FIELDS, Webhooks } from "@issuing/core"
import { Effect } from "effect"
import { IssuingApi } from "../Api.js"
import { CurrentProgram } from "../middleware/Scopes.js"
import { mapToApiFailure } from "../errors.js"
import { paging } from "./Paging.js"

// Payloads and filters arrive decoded by the group's schemas (core webhooks/Records.ts).
export const WebhookSubscriptionsHandlersLive = HttpApiBuilder.group(IssuingApi, "webhookSubscriptions", (handlers) =>
  Effect.gen(function* () {
    const webhooks = yield* Webhooks
    return handlers
      .handle("create", ({ payload }) =>
        Effect.flatMap(CurrentProgram, (caller) => mapToApiFailure(webhooks.create(caller.program.id, payload)))
      )
      .handle("list", ({ urlParams }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentProgram
          const page = yield* paging(urlParams, WEBHOOK_SUBSCRIPTION_ORDER_FIELDS)
          return yield* mapToApiFailure(webhooks.list(caller.program.id, urlParams, page))
        })
      )
      .handle("get", ({ path }) =>
        Effect.flatMap(CurrentProgram, (caller) => mapToApiFailure(webhooks.get(caller.program.id, path.webhook_subscription_id)))
      )
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentProgram, (caller) =>
          mapToApiFailure(webhooks.update(caller.program.id, path.webhook_subscription_id, payload))
        )
      )
      .handle("delete", ({ path }) =>
        Effect.flatMap(CurrentProgram, (caller) => mapToApiFailure(webhooks.remove(caller.program.id, path.webhook_subscription_id)))
      )
      .handle("rotateSecret", ({ path }) =>
        Effect.flatMap(CurrentProgram, (caller) => mapToApiFailure(webhooks.rotateSecret(caller.program.id, path.webhook_subscription_id)))
      )
      .handle("replay", ({ path, payload }) =>
        Effect.flatMap(CurrentProgram, (caller) =>
          mapToApiFailure(webhooks.replay(caller.program.id, path.webhook_subscription_id, payload))
        )
      )
      .handle("sendTest", ({ path }) =>
        Effect.flatMap(CurrentProgram, (caller) => mapToApiFailure(webhooks.sendTest(caller.program.id, path.webhook_subscription_id)))
      )
  })
)

export const WebhookDeliveriesHandlersLive = HttpApiBuilder.group(IssuingApi, "webhookDeliveries", (handlers) =>
  Effect.gen(function* () {
    const webhooks = yield* Webhooks
    return handlers
      .handle("resend", ({ path, payload }) =>
        Effect.flatMap(CurrentProgram, (caller) => mapToApiFailure(webhooks.resend(caller.program.id, path.event_id, payload)))
      )
      .handle("attempts", ({ urlParams }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentProgram
          const page = yield* paging(urlParams, WEBHOOK_ATTEMPT_ORDER_FIELDS)
          return yield* mapToApiFailure(webhooks.listAttempts(caller.program.id, urlParams, page))
        })
      )
  })
)
