import { Webhook, WebhookVerificationError as StandardVerificationError } from "standardwebhooks"
import type { WebhookEvent } from "./events.js"

/** Headers as any server hands them: a Fetch `Headers`, Node's `req.headers`, or a plain record. */
export type WebhookHeaders = Headers | Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

/** The delivery is not authentic: a signature, timestamp or header is missing, wrong or too old. */
export class WebhookVerificationError extends Error {
  override readonly name = "WebhookVerificationError"
}

const plainHeaders = (headers: WebhookHeaders): Record<string, string> => {
  const plain: Record<string, string> = {}
  if (typeof (headers as Headers).forEach === "function" && typeof (headers as Headers).get === "function") {
    ;(headers as Headers).forEach((value, name) => {
      plain[name.toLowerCase()] = value
    })
    return plain
  }
  for (const [name, value] of Object.entries(headers as Record<string, string | ReadonlyArray<string> | undefined>)) {
    if (value !== undefined) plain[name.toLowerCase()] = typeof value === "string" ? value : value.join(", ")
  }
  return plain
}

/**
 * Verifies a delivery per Standard Webhooks (`webhook-id`, `webhook-timestamp` within 5 minutes,
 * `webhook-signature`) against the raw body and the subscription's `whsec_…` secret, and returns the
 * parsed event, typed by its `type` (`WebhookEvent`). Pass the body exactly as received, before any
 * JSON parsing.
 */
export const verifyWebhook = (body: string | Uint8Array, headers: WebhookHeaders, secret: string): WebhookEvent => {
  const payload = typeof body === "string" ? body : new TextDecoder().decode(body)
  try {
    return new Webhook(secret).verify(payload, plainHeaders(headers)) as WebhookEvent
  } catch (error) {
    if (error instanceof StandardVerificationError) throw new WebhookVerificationError(error.message)
    throw new WebhookVerificationError(error instanceof Error ? error.message : "invalid webhook")
  }
}
