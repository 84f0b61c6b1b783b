import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { CallsOut } from "./Annotations.js"
import { ListOf, PagingParams, Timestamp, Uuid } from "./Common.js"
import { ProgramAuth } from "./Security.js"

const subscriptionFields = {
  id: Schema.String,
  object: Schema.Literal("webhook_subscription"),
  url: Schema.String,
  description: Schema.String,
  event_types: Schema.Array(Schema.String),
  disabled: Schema.Boolean,
  created_at: Timestamp,
  updated_at: Timestamp
}

/** A webhook subscription (interface §2); never carries its secret. */
export const WebhookSubscription = Schema.Struct(subscriptionFields).annotations({ identifier: "WebhookSubscription" })

/** The subscription as created or rotated: the only responses that show its signing secret. */
export const WebhookSubscriptionWithSecret = Schema.Struct({ ...subscriptionFields, secret: Schema.String }).annotations({
  identifier: "WebhookSubscriptionWithSecret"
})

/** One delivery try (interface §2). */
export const WebhookAttempt = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("webhook_attempt"),
  event_id: Schema.String,
  webhook_subscription_id: Schema.String,
  status: Schema.Literal("SUCCESS", "FAILED"),
  response_code: Schema.Number,
  response_body: Schema.String,
  attempted_at: Timestamp,
  created_at: Timestamp,
  updated_at: Timestamp
}).annotations({ identifier: "WebhookAttempt" })

/** The answer to a replay (interface §2). */
export const WebhookReplay = Schema.Struct({
  object: Schema.Literal("webhook_replay"),
  webhook_subscription_id: Schema.String,
  begin: Schema.String,
  end: Schema.String,
  events_queued: Schema.Number
}).annotations({ identifier: "WebhookReplay" })

export const CreateWebhookSubscription = Schema.Struct({
  url: Schema.String,
  description: Schema.optional(Schema.String),
  event_types: Schema.Array(Schema.String),
  disabled: Schema.optional(Schema.Boolean)
})

export const UpdateWebhookSubscription = Schema.Struct({
  url: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  event_types: Schema.optional(Schema.Array(Schema.String)),
  disabled: Schema.optional(Schema.Boolean)
})

export const ReplayRequest = Schema.Struct({ begin: Schema.String, end: Schema.String })

export const ResendRequest = Schema.Struct({ subscription_id: Schema.optional(Uuid) })

const SubscriptionPath = Schema.Struct({ webhook_subscription_id: Schema.String })

/** Program-scoped: webhook subscriptions, secret rotation and replay (interface §4.8–4.9, CONTRACT §5). */
export class WebhookSubscriptionsApi extends HttpApiGroup.make("webhookSubscriptions")
  .add(
    HttpApiEndpoint.post("create", "/webhook-subscriptions")
      .setPayload(CreateWebhookSubscription)
      .addSuccess(WebhookSubscriptionWithSecret)
  )
  .add(
    HttpApiEndpoint.get("list", "/webhook-subscriptions")
      .setUrlParams(Schema.Struct({ ...PagingParams, disabled: Schema.optional(Schema.String) }))
      .addSuccess(ListOf(WebhookSubscription))
  )
  .add(
    HttpApiEndpoint.get("get", "/webhook-subscriptions/:webhook_subscription_id")
      .setPath(SubscriptionPath)
      .addSuccess(WebhookSubscription)
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
  .prefix("/v1")
{}

/** Program-scoped: resend one event (interface §4.10) and list delivery attempts. */
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
      .setUrlParams(
        Schema.Struct({
          ...PagingParams,
          event_id: Schema.optional(Schema.String),
          webhook_subscription_id: Schema.optional(Schema.String),
          status: Schema.optional(Schema.String)
        })
      )
      .addSuccess(ListOf(WebhookAttempt))
  )
  .middleware(ProgramAuth)
  .prefix("/v1")
{}
