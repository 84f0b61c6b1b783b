import { newId } from "../platform/Ids.js"
import type { VaultService } from "../vault/Vault.js"
import { WEBHOOK_LIMITS, type WebhookAttempt } from "./Records.js"
import { secretKey } from "./Signing.js"
import type { DeliveryOutcome } from "./WebhookSender.js"

/** The attempt recording one finished try (interface §2), with the program it is stored under. */
export const attemptRecord = (
  delivery: { readonly program_id: string; readonly event_id: string; readonly subscription_id: string },
  outcome: DeliveryOutcome,
  nowText: string
): WebhookAttempt & { readonly program_id: string } => ({
  id: newId(),
  object: "webhook_attempt",
  program_id: delivery.program_id,
  event_id: delivery.event_id,
  webhook_subscription_id: delivery.subscription_id,
  status: outcome.status,
  response_code: outcome.responseCode,
  response_body: outcome.responseBody,
  attempted_at: new Date(outcome.attemptedAtMs).toISOString(),
  created_at: nowText,
  updated_at: nowText
})

/** The FAILED outcome of an event too large to send: recorded, never retried. */
export const oversizedPayload = (sizeBytes: number, limitBytes: number, nowMs: number): DeliveryOutcome => ({
  status: "FAILED",
  responseCode: 0,
  responseBody: `payload of ${sizeBytes} bytes exceeds the ${limitBytes}-byte limit`,
  retryAfterMs: undefined,
  attemptedAtMs: nowMs
})

/**
 * The delivered body: the event record (CONTRACT §5), built from the stored columns without
 * re-parsing the object's JSON.
 */
export const eventPayload = (event: {
  readonly id: string
  readonly type: string
  readonly program_id: string
  readonly created_at: string
  readonly data: string
}): string =>
  `{"id":${JSON.stringify(event.id)},"object":"event","type":${JSON.stringify(event.type)},"program_id":${
    JSON.stringify(event.program_id)
  },"created_at":${JSON.stringify(event.created_at)},"data":{"object":${event.data}}}`

/** The HMAC keys that sign a delivery now: the current secret, and the previous one until it expires. */
export const signingKeys = (
  vault: VaultService,
  subscription: {
    readonly secret_sealed: string
    readonly previous_secret_sealed: string | null
    readonly previous_secret_expires_at: string | null
  },
  nowMs: number
): ReadonlyArray<Buffer> => {
  const keys = [secretKey(vault.decrypt(subscription.secret_sealed))]
  if (
    subscription.previous_secret_sealed !== null && subscription.previous_secret_expires_at !== null &&
    Date.parse(subscription.previous_secret_expires_at) > nowMs
  ) {
    keys.push(secretKey(vault.decrypt(subscription.previous_secret_sealed)))
  }
  return keys
}

/**
 * When to try again after the `attemptNumber`-th try (1-based) failed, in ms from now, or
 * undefined when the schedule is spent. The schedule's delay gets ±20% jitter so a receiver
 * recovering from an outage is not hit by every retry at once; a Retry-After (429/503) replaces
 * it, bounded to [1 s, 1 h].
 */
export const retryDelayMs = (
  scheduleMs: ReadonlyArray<number>,
  attemptNumber: number,
  retryAfterMs: number | undefined,
  random: () => number = Math.random
): number | undefined => {
  const scheduled = scheduleMs[attemptNumber - 1]
  if (scheduled === undefined) return undefined
  if (retryAfterMs !== undefined) {
    return Math.min(WEBHOOK_LIMITS.maxRetryAfterMs, Math.max(WEBHOOK_LIMITS.minRetryAfterMs, retryAfterMs))
  }
  return Math.round(scheduled * (0.8 + 0.4 * random()))
}
