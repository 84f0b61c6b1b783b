import { newId } from "../platform/Ids.js"
import type { VaultService } from "../vault/Vault.js"
import { WEBHOOK_LIMITS, type WebhookAttempt } from "./Records.js"
import { secretKey } from "./Signing.js"
import type { DeliveryOutcome } from "./WebhookSender.js"

/** An attempt as stored: the record with the program it belongs to. */
export type StoredAttempt = WebhookAttempt & { readonly program_id: string }

/** The attempt recording one finished try (docs/webhooks.md, Delivery semantics), with the program it is stored under. */
export const attemptRecord = (
  delivery: { readonly program_id: string; readonly event_id: string; readonly subscription_id: string },
  outcome: DeliveryOutcome,
  nowText: string,
  id: string = newId()
): StoredAttempt => ({
  id,
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
 * The delivered body: the event record (docs/webhooks.md, What a delivery looks like), built from the stored columns without
 * re-parsing the object's JSON.
 */
export const eventPayload = (event: {
  readonly id: string
  readonly type: string
  readonly program_id: string
  readonly tags: ReadonlyArray<string>
  readonly created_at: string
  readonly data: string
}): string =>
  `{"id":${JSON.stringify(event.id)},"object":"event","type":${JSON.stringify(event.type)},"program_id":${JSON.stringify(
    event.program_id
  )},"tags":${JSON.stringify(event.tags)},"created_at":${JSON.stringify(event.created_at)},"data":{"object":${event.data}}}`

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
    subscription.previous_secret_sealed !== null &&
    subscription.previous_secret_expires_at !== null &&
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

/** A delivery as the outcome policy sees it: whose try it was, and how many tries came before. */
export interface DeliveryRef {
  readonly program_id: string
  readonly event_id: string
  readonly subscription_id: string
  /** Tries already made before this one. */
  readonly attempt_count: number
}

/** How one claimed (worker) or direct (resend) delivery ended. */
export interface TryResult<D extends DeliveryRef> {
  readonly delivery: D
  /** Undefined when no request was made: the subscription is disabled, or the try was released. */
  readonly outcome: DeliveryOutcome | undefined
  /** A failure that retrying cannot fix (payload over the limit). */
  readonly permanent: boolean
  /** Claimed but never started (it waited too long for a slot): due again now, no attempt. */
  readonly released?: boolean | undefined
}

/** What the outcome policy needs besides the results: the configuration, the clock and the sources of chance. */
export interface OutcomePolicy {
  readonly retryScheduleMs: ReadonlyArray<number>
  /** A subscription failing without a success this long is disabled. */
  readonly disableAfterMs: number
  readonly nowMs: number
  /** Jitter of retry delays (default Math.random). */
  readonly random?: (() => number) | undefined
  /** Ids of new attempts (default a fresh UUIDv7). */
  readonly newAttemptId?: (() => string) | undefined
}

/** A delivery to try again: the try count it will carry and when it is due. */
export interface PlannedRetry<D> {
  readonly delivery: D
  readonly attemptCount: number
  readonly nextAttemptAt: string
}

/** The bookkeeping of a batch of finished tries, to be written in one transaction. */
export interface OutcomePlan<D> {
  readonly nowIso: string
  /** One per try that made a request, in the order of the results. */
  readonly attempts: ReadonlyArray<StoredAttempt>
  /** Off the queue: delivered, given up, or dropped without a request. */
  readonly finished: ReadonlyArray<D>
  readonly retries: ReadonlyArray<PlannedRetry<D>>
  /** Subscriptions whose failing streak ends: a success, and no failure in the same batch. */
  readonly clearFailing: ReadonlyArray<string>
  /** Subscriptions with a failure: their streak starts unless one is running. */
  readonly markFailing: ReadonlyArray<string>
  /** Subscriptions that answered 410 Gone: disabled at once. */
  readonly disableNow: ReadonlyArray<string>
  /** Those of `markFailing` whose streak started at or before this instant are disabled. */
  readonly failingBefore: string
}

/**
 * THE delivery-outcome policy, shared by the worker and resend (docs/webhooks.md, Delivery
 * semantics): every try that made a request becomes an attempt; a success or a spent schedule takes
 * the delivery off the queue, any other failure is retried on the schedule (or after Retry-After),
 * except a permanent one or 410 Gone, which also disables the subscription. A success ends the
 * subscription's failing streak unless the same batch failed for it too (the batch is not ordered
 * by time, so a failure wins); a failure starts one, and a streak older than `disableAfterMs`
 * disables it. Pure: the clock, the jitter and attempt ids come from `policy`.
 */
export const planOutcome = <D extends DeliveryRef>(results: ReadonlyArray<TryResult<D>>, policy: OutcomePolicy): OutcomePlan<D> => {
  const nowIso = new Date(policy.nowMs).toISOString()
  const attempts: Array<StoredAttempt> = []
  const finished: Array<D> = []
  const retries: Array<PlannedRetry<D>> = []
  const succeeded = new Set<string>()
  const failed = new Set<string>()
  const gone = new Set<string>()
  for (const { delivery, outcome, permanent, released } of results) {
    if (released) {
      retries.push({ delivery, attemptCount: delivery.attempt_count, nextAttemptAt: nowIso })
      continue
    }
    if (outcome === undefined) {
      finished.push(delivery)
      continue
    }
    attempts.push(attemptRecord(delivery, outcome, nowIso, policy.newAttemptId?.()))
    if (outcome.status === "SUCCESS") {
      succeeded.add(delivery.subscription_id)
      finished.push(delivery)
      continue
    }
    failed.add(delivery.subscription_id)
    if (outcome.responseCode === 410) gone.add(delivery.subscription_id)
    const attemptCount = delivery.attempt_count + 1
    const delayMs =
      permanent || outcome.responseCode === 410
        ? undefined
        : retryDelayMs(policy.retryScheduleMs, attemptCount, outcome.retryAfterMs, policy.random)
    if (delayMs === undefined) finished.push(delivery)
    else retries.push({ delivery, attemptCount, nextAttemptAt: new Date(policy.nowMs + delayMs).toISOString() })
  }
  return {
    nowIso,
    attempts,
    finished,
    retries,
    clearFailing: [...succeeded].filter((id) => !failed.has(id)),
    markFailing: [...failed],
    disableNow: [...gone],
    failingBefore: new Date(policy.nowMs - policy.disableAfterMs).toISOString()
  }
}
