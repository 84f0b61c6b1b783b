import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import {
  AttemptFilter,
  CreateWebhookSubscription,
  ReplayRequest,
  ResendRequest,
  SubscriptionFilter,
  UpdateWebhookSubscription,
  WebhookAttempt,
  WebhookReplay,
  WebhookSubscription,
  WebhookSubscriptionWithSecret
} from "@issuing/core"
import { Schema } from "effect"
import { CallsOut } from "./Annotations.js"
import { ListOf, PagingParams } from "./Common.js"
import { ProgramAuth } from "./Security.js"

// Path ids stay plain strings: a malformed one names no resource, so it is a 404 (docs/api.md).
const SubscriptionPath = Schema.Struct({ webhook_subscription_id: Schema.String })

/** Program-scoped: webhook subscriptions, secret rotation and replay (docs/webhooks.md). */
export class WebhookSubscriptionsApi extends HttpApiGroup.make("webhookSubscriptions")
  .add(
    HttpApiEndpoint.post("create", "/webhook-subscriptions").setPayload(CreateWebhookSubscription).addSuccess(WebhookSubscriptionWithSecret)
  )
  .add(
    HttpApiEndpoint.get("list", "/webhook-subscriptions")
      .setUrlParams(Schema.Struct({ ...PagingParams, ...SubscriptionFilter.fields }))
      .addSuccess(ListOf(WebhookSubscription))
  )
  .add(
    HttpApiEndpoint.get("get", "/webhook-subscriptions/:webhook_subscription_id").setPath(SubscriptionPath).addSuccess(WebhookSubscription)
  )
  .add(
    HttpApiEndpoint.patch("update", "/webhook-subscriptions/:webhook_subscription_id")
      .setPath(SubscriptionPath)
      .setPayload(UpdateWebhookSubscription)
      .addSuccess(WebhookSubscription)
  )
  .add(
    HttpApiEndpoint.del("delete", "/webhook-subscriptions/:webhook_subscription_id")
      .setPath(SubscriptionPath)
      .addSuccess(WebhookSubscription)
  )
  .add(
    HttpApiEndpoint.post("rotateSecret", "/webhook-subscriptions/:webhook_subscription_id/rotate-secret")
      .setPath(SubscriptionPath)
      .addSuccess(WebhookSubscriptionWithSecret)
  )
  .add(
    HttpApiEndpoint.post("replay", "/webhook-subscriptions/:webhook_subscription_id/replay")
      .setPath(SubscriptionPath)
      .setPayload(ReplayRequest)
      .addSuccess(WebhookReplay)
  )
  .middleware(ProgramAuth)
  .prefix("/v1") {}

/** Program-scoped: resend one event and list delivery attempts (docs/webhooks.md). */
export class WebhookDeliveriesApi extends HttpApiGroup.make("webhookDeliveries")
  .add(
    HttpApiEndpoint.post("resend", "/events/:event_id/resend")
      .setPath(Schema.Struct({ event_id: Schema.String }))
      .setPayload(ResendRequest)
      .addSuccess(ListOf(WebhookAttempt))
      // The first attempt is a synchronous POST to the receiver: never inside a held transaction.
      .annotate(CallsOut, true)
  )
  .add(
    HttpApiEndpoint.get("attempts", "/webhook-attempts")
      .setUrlParams(Schema.Struct({ ...PagingParams, ...AttemptFilter.fields }))
      .addSuccess(ListOf(WebhookAttempt))
  )
  .middleware(ProgramAuth)
  .prefix("/v1") {}
