import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { RateLimiter, WEBHOOK_ATTEMPT_ORDER_FIELDS, WEBHOOK_SUBSCRIPTION_ORDER_FIELDS, Webhooks } from "@issuing/core"
import { Effect } from "effect"
import { IssuingApi } from "../Api.js"
import { CurrentProgram } from "../middleware/Scopes.js"
import { PORTAL_HEADERS, portalDocument } from "../embed/PortalDocument.js"
import { mapToApiFailure } from "../errors.js"
import { paging } from "./Paging.js"

export const WebhookPortalSessionsHandlersLive = HttpApiBuilder.group(IssuingApi, "webhookPortalSessions", (handlers) =>
  Effect.gen(function* () {
    const webhooks = yield* Webhooks
    return handlers.handle("create", ({ payload }) =>
      Effect.flatMap(CurrentProgram, (caller) => mapToApiFailure(webhooks.createPortalSession(caller, payload)))
    )
  })
)

/** The bearer token of a portal call, or undefined (then 401, as for an unknown token). */
const bearerToken = Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
  const match = /^Bearer ([^\s]+)$/.exec(request.headers.authorization ?? "")
  return match === null ? undefined : match[1]
})

// Each portal call opens its session (401 when unknown, expired or its key revoked) and spends a
// token of the session's own rate limit, never the creating key's: the customer holding the URL
// must not be able to spend the program's budget (docs/webhooks.md#the-page-and-its-calls). The
// page itself is served only for a valid session.
export const WebhookPortalHandlersLive = HttpApiBuilder.group(IssuingApi, "webhookPortal", (handlers) =>
  Effect.gen(function* () {
    const webhooks = yield* Webhooks
    const limiter = yield* RateLimiter
    const portal = Effect.gen(function* () {
      const operations = yield* mapToApiFailure(webhooks.openPortal(yield* bearerToken))
      yield* mapToApiFailure(limiter.consume(operations.session.id))
      return operations
    })
    return handlers
      .handle("document", ({ urlParams }) =>
        Effect.gen(function* () {
          const operations = yield* mapToApiFailure(webhooks.openPortal(urlParams.session_token))
          return HttpServerResponse.text(portalDocument(operations.session), {
            contentType: "text/html; charset=utf-8",
            headers: PORTAL_HEADERS
          })
        })
      )
      .handle("listSubscriptions", ({ urlParams }) =>
        Effect.gen(function* () {
          const operations = yield* portal
          const page = yield* paging(urlParams, WEBHOOK_SUBSCRIPTION_ORDER_FIELDS)
          return yield* mapToApiFailure(operations.list(urlParams, page))
        })
      )
      .handle("createSubscription", ({ payload }) => Effect.flatMap(portal, (operations) => mapToApiFailure(operations.create(payload))))
      .handle("updateSubscription", ({ path, payload }) =>
        Effect.flatMap(portal, (operations) => mapToApiFailure(operations.update(path.webhook_subscription_id, payload)))
      )
      .handle("deleteSubscription", ({ path }) =>
        Effect.flatMap(portal, (operations) => mapToApiFailure(operations.remove(path.webhook_subscription_id)))
      )
      .handle("rotateSecret", ({ path }) =>
        Effect.flatMap(portal, (operations) => mapToApiFailure(operations.rotateSecret(path.webhook_subscription_id)))
      )
      .handle("replay", ({ path, payload }) =>
        Effect.flatMap(portal, (operations) => mapToApiFailure(operations.replay(path.webhook_subscription_id, payload)))
      )
      .handle("sendTest", ({ path }) =>
        Effect.flatMap(portal, (operations) => mapToApiFailure(operations.sendTest(path.webhook_subscription_id)))
      )
      .handle("attempts", ({ urlParams }) =>
        Effect.gen(function* () {
          const operations = yield* portal
          const page = yield* paging(urlParams, WEBHOOK_ATTEMPT_ORDER_FIELDS)
          return yield* mapToApiFailure(operations.attempts(urlParams, page))
        })
      )
      .handle("resend", ({ path, payload }) =>
        Effect.flatMap(portal, (operations) => mapToApiFailure(operations.resend(path.event_id, payload)))
      )
  })
)
