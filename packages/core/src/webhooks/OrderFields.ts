import { type OrderField, orderFields } from "../platform/Paging.js"

/** Order fields of GET /v1/webhook-subscriptions (docs/webhooks.md). */
export const WEBHOOK_SUBSCRIPTION_ORDER_FIELDS = orderFields(
  { created_at: "created_at", updated_at: "updated_at" },
  { newest: "created_at" }
)
export type WebhookSubscriptionOrderField = OrderField<typeof WEBHOOK_SUBSCRIPTION_ORDER_FIELDS>

/** Order fields of GET /v1/webhook-attempts (docs/webhooks.md). */
export const WEBHOOK_ATTEMPT_ORDER_FIELDS = orderFields(
  { created_at: "created_at", attempted_at: "attempted_at" },
  { newest: "created_at" }
)
export type WebhookAttemptOrderField = OrderField<typeof WEBHOOK_ATTEMPT_ORDER_FIELDS>
