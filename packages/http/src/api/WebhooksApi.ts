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
import { BusinessRules, CallsOut } from "./Annotations.js"
import { ListOf, PagingParams, patch, post } from "./Common.js"
import { ProgramScoped } from "./Security.js"
import { BusinessRuleFailure, NotFoundFailure } from "../errors.js"

// Path ids stay plain strings: a malformed one names no resource, so it is a 404 (docs/api.md).
const SubscriptionPath = Schema.Struct({ webhook_subscription_id: Schema.String })

/** Program-scoped: webhook subscriptions, secret rotation, replay and test events (docs/webhooks.md). */
export class WebhookSubscriptionsApi extends HttpApiGroup.make("webhookSubscriptions")
  .add(
    post("create", "/webhook-subscriptions")
      .setPayload(CreateWebhookSubscription)
      .addSuccess(WebhookSubscriptionWithSecret)
      .addError(BusinessRuleFailure)
      .annotate(BusinessRules, ["subscription_limit_reached"])
  )
  .add(
    HttpApiEndpoint.get("list", "/webhook-subscriptions")
      .setUrlParams(Schema.Struct({ ...PagingParams, ...SubscriptionFilter.fields }))
      .addSuccess(ListOf(WebhookSubscription))
  )
  .add(
    HttpApiEndpoint.get("get", "/webhook-subscriptions/:webhook_subscription_id")
      .setPath(SubscriptionPath)
      .addError(NotFoundFailure)
      .addSuccess(WebhookSubscription)
  )
  .add(
    patch("update", "/webhook-subscriptions/:webhook_subscription_id")
      .setPath(SubscriptionPath)
      .addError(NotFoundFailure)
      .setPayload(UpdateWebhookSubscription)
      .addSuccess(WebhookSubscription)
  )
  .add(
    HttpApiEndpoint.del("delete", "/webhook-subscriptions/:webhook_subscription_id")
      .setPath(SubscriptionPath)
      .addError(NotFoundFailure)
      .addSuccess(WebhookSubscription)
  )
  .add(
    post("rotateSecret", "/webhook-subscriptions/:webhook_subscription_id/rotate-secret")
      .setPath(SubscriptionPath)
      .addError(NotFoundFailure)
      .addSuccess(WebhookSubscriptionWithSecret)
  )
  .add(
    post("replay", "/webhook-subscriptions/:webhook_subscription_id/replay")
      .setPath(SubscriptionPath)
      .addError(NotFoundFailure)
      .setPayload(ReplayRequest)
      .addSuccess(WebhookReplay)
      .addError(BusinessRuleFailure)
      .annotate(BusinessRules, ["invalid_time_window", "replay_window_too_large"])
  )
  .add(
    post("sendTest", "/webhook-subscriptions/:webhook_subscription_id/test")
      .setPath(SubscriptionPath)
      .addError(NotFoundFailure)
      .addSuccess(WebhookAttempt)
      // A synchronous POST to the receiver, as resend's first try: never inside a held transaction.
      .annotate(CallsOut, true)
  )
  .middleware(ProgramScoped)
  .prefix("/v1") {}

/** Program-scoped: resend one event and list delivery attempts (docs/webhooks.md). */
export class WebhookDeliveriesApi extends HttpApiGroup.make("webhookDeliveries")
  .add(
    post("resend", "/events/:event_id/resend")
      .setPath(Schema.Struct({ event_id: Schema.String }))
      .addError(NotFoundFailure)
      .setPayload(ResendRequest)
      .addSuccess(ListOf(WebhookAttempt))
      .addError(BusinessRuleFailure)
      .annotate(BusinessRules, ["event_type_not_subscribed", "event_tag_not_subscribed"])
      // The first attempt is a synchronous POST to the receiver: never inside a held transaction.
      .annotate(CallsOut, true)
  )
  .add(
    HttpApiEndpoint.get("attempts", "/webhook-attempts")
      .setUrlParams(Schema.Struct({ ...PagingParams, ...AttemptFilter.fields }))
      .addSuccess(ListOf(WebhookAttempt))
  )
  .middleware(ProgramScoped)
  .prefix("/v1") {}
