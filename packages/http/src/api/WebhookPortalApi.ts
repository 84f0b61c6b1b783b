import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import {
  CreatePortalSubscription,
  CreateWebhookPortalSession,
  EmbedDocumentQuery,
  PortalAttemptFilter,
  PortalResendRequest,
  ReplayRequest,
  SubscriptionFilter,
  UpdatePortalSubscription,
  WebhookAttempt,
  WebhookPortalSession,
  WebhookReplay,
  WebhookSubscription,
  WebhookSubscriptionWithSecret
} from "@issuing/core"
import { Schema } from "effect"
import { BusinessRules, CallsOut } from "./Annotations.js"
import { ListOf, PagingParams, patch, post } from "./Common.js"
import { ProgramScoped } from "./Security.js"
import { AuthenticationFailure, BusinessRuleFailure, NotFoundFailure, RateLimitFailure } from "../errors.js"

/** Program-scoped: a short-lived URL of the endpoint portal for one customer (docs/webhooks.md#the-endpoint-portal). */
export class WebhookPortalSessionsApi extends HttpApiGroup.make("webhookPortalSessions")
  .add(post("create", "/webhook-portal-sessions").setPayload(CreateWebhookPortalSession).addSuccess(WebhookPortalSession))
  .middleware(ProgramScoped)
  .prefix("/v1") {}

const SubscriptionPath = Schema.Struct({ webhook_subscription_id: Schema.String })

/**
 * Public: the endpoint portal — its page and the calls the page makes — authenticated by the portal
 * session's token alone (`?session_token=` for the page, `Authorization: Bearer <token>` for the
 * calls), never an API key. Every call sees only the subscriptions of the session's tag: another
 * one is a 404 (docs/webhooks.md#the-endpoint-portal).
 */
export class WebhookPortalApi extends HttpApiGroup.make("webhookPortal")
  .add(
    HttpApiEndpoint.get("document", "/webhook-portal")
      .setUrlParams(EmbedDocumentQuery)
      .annotate(OpenApi.Description, "HTML endpoint portal for an iframe; 401 when the token is unknown or expired.")
  )
  .add(
    HttpApiEndpoint.get("listSubscriptions", "/webhook-portal/subscriptions")
      .setUrlParams(Schema.Struct({ ...PagingParams, disabled: SubscriptionFilter.fields.disabled }))
      .addSuccess(ListOf(WebhookSubscription))
  )
  .add(
    post("createSubscription", "/webhook-portal/subscriptions")
      .setPayload(CreatePortalSubscription)
      .addSuccess(WebhookSubscriptionWithSecret)
      .annotate(BusinessRules, ["subscription_limit_reached"])
  )
  .add(
    patch("updateSubscription", "/webhook-portal/subscriptions/:webhook_subscription_id")
      .setPath(SubscriptionPath)
      .setPayload(UpdatePortalSubscription)
      .addSuccess(WebhookSubscription)
  )
  .add(
    HttpApiEndpoint.del("deleteSubscription", "/webhook-portal/subscriptions/:webhook_subscription_id")
      .setPath(SubscriptionPath)
      .addSuccess(WebhookSubscription)
  )
  .add(
    post("rotateSecret", "/webhook-portal/subscriptions/:webhook_subscription_id/rotate-secret")
      .setPath(SubscriptionPath)
      .addSuccess(WebhookSubscriptionWithSecret)
  )
  .add(
    post("replay", "/webhook-portal/subscriptions/:webhook_subscription_id/replay")
      .setPath(SubscriptionPath)
      .setPayload(ReplayRequest)
      .addSuccess(WebhookReplay)
      .annotate(BusinessRules, ["invalid_time_window", "replay_window_too_large"])
  )
  .add(
    post("sendTest", "/webhook-portal/subscriptions/:webhook_subscription_id/test")
      .setPath(SubscriptionPath)
      .addSuccess(WebhookAttempt)
      .annotate(CallsOut, true)
  )
  .add(
    HttpApiEndpoint.get("attempts", "/webhook-portal/attempts")
      .setUrlParams(Schema.Struct({ ...PagingParams, ...PortalAttemptFilter.fields }))
      .addSuccess(ListOf(WebhookAttempt))
  )
  .add(
    post("resend", "/webhook-portal/events/:event_id/resend")
      .setPath(Schema.Struct({ event_id: Schema.String }))
      .setPayload(PortalResendRequest)
      .addSuccess(ListOf(WebhookAttempt))
      .annotate(BusinessRules, ["event_type_not_subscribed", "event_tag_not_subscribed"])
      .annotate(CallsOut, true)
  )
  // The session token (401), the session's own rate limit (429), a subscription or event of
  // another tag or program (404), and the business rules of replay and resend (422).
  .addError(AuthenticationFailure)
  .addError(RateLimitFailure)
  .addError(NotFoundFailure)
  .addError(BusinessRuleFailure)
  // The other portal calls break no rule: their 422 is the group's.
  .annotate(BusinessRules, [])
  .prefix("/v1") {}
