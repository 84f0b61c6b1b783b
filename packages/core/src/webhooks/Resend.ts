import type { SqlError } from "@effect/sql"
import { Effect } from "effect"
import { type IssuingEvent, TEST_EVENT_TYPE, tagMayReceive } from "../events/Records.js"
import { BusinessRuleViolation, Conflict } from "../platform/Errors.js"
import { commitAtPoint } from "../idempotency/IdempotentCommit.js"
import { findOwned, missing } from "../platform/FindOwned.js"
import type { Page } from "../platform/Paging.js"
import { nowMs } from "../platform/Time.js"
import { type DeliveryRef, eventPayload, oversizedPayload, planOutcome, signingKeys, type TryResult } from "./DeliveryRules.js"
import type { ResendRequest, StoredSubscription, WebhookAttempt } from "./Records.js"
import { recordOutcomes } from "./RecordOutcomes.js"
import { loadSubscription, type WebhookDeps } from "./Subscriptions.js"

/** Tries sent at once by one resend. */
const RESEND_CONCURRENCY = 16

/**
 * Sends the event now to one subscription or to every enabled matching one, records each try as
 * an attempt, queues retries of failed ones, and returns the attempts (docs/webhooks.md, Resend).
 * The sends run with nothing written and no transaction open; the recording is one write
 * afterwards. With `tag` (a portal session's), an event that does not carry it is not found: the
 * customer may not learn that it exists (docs/webhooks.md#customers-and-tags).
 */
export const resend = (deps: WebhookDeps, programId: string, eventId: string, input: ResendRequest, tag?: string) =>
  Effect.gen(function* () {
    const event = yield* findOwned(eventId, { resource: "event", param: "event_id" }, (id) => deps.events.find(programId, id))
    if (tag !== undefined && !event.tags.includes(tag)) {
      return yield* missing({ resource: "event", param: "event_id" })
    }
    const targets =
      input.subscription_id === undefined
        ? yield* matchingTargets(deps, programId, event)
        : [yield* namedTarget(deps, programId, event, input.subscription_id, tag)]
    return yield* deliverNow(
      deps,
      event,
      targets,
      (attempts) => ({ data: attempts, total_count: attempts.length, has_more: false }) satisfies Page<WebhookAttempt>
    )
  })

/**
 * One signed try of the event to each target now, with nothing written and no transaction open;
 * then, in one write at the request's commit point, `alongside` (what the operation writes besides:
 * the test event itself) and every try as an attempt (retries of failed ones queued). Answers
 * `answer` of the attempts: under an Idempotency-Key it is stored with that write
 * (docs/api.md#idempotency). Resend and the test event both deliver this way.
 */
export const deliverNow = <A>(
  deps: WebhookDeps,
  event: IssuingEvent,
  targets: ReadonlyArray<StoredSubscription>,
  answer: (attempts: ReadonlyArray<WebhookAttempt>) => A,
  alongside: Effect.Effect<void, SqlError.SqlError> = Effect.void
) =>
  Effect.gen(function* () {
    const results = yield* sendAll(deps, event, targets)
    const now = yield* nowMs
    const plan = planOutcome(results, {
      retryScheduleMs: deps.config.webhookRetryScheduleMs,
      disableAfterMs: deps.config.webhookDisableAfterMs,
      nowMs: now
    })
    const attempts = plan.attempts.map(({ program_id: _, ...attempt }): WebhookAttempt => attempt)
    const record = recordOutcomes(deps.store, plan, {
      retry: (retries) =>
        Effect.forEach(
          retries,
          ({ attemptCount, delivery, nextAttemptAt }) =>
            deps.store.enqueue({ ...delivery, attempt_count: attemptCount, next_attempt_at: nextAttemptAt }),
          { discard: true }
        ),
      // A direct try was never queued: nothing to take off.
      finish: () => Effect.void
    })
    return yield* commitAtPoint(deps.transactor.withTransaction(Effect.as(Effect.zipRight(alongside, record), answer(attempts))))
  })

/** The subscription named in the body: enabled, and subscribed to the event's type (a test event goes to any). */
const namedTarget = (deps: WebhookDeps, programId: string, event: IssuingEvent, subscriptionId: string, tag?: string) =>
  Effect.gen(function* () {
    const target = yield* loadSubscription(
      deps,
      programId,
      subscriptionId,
      { resource: "webhook subscription", param: "subscription_id" },
      false,
      tag
    )
    if (target.disabled) {
      return yield* new Conflict({ message: "The webhook subscription is disabled.", param: "subscription_id" })
    }
    // A test event is sent to one subscription, which never holds its type: it may be sent again to any.
    if (event.type !== TEST_EVENT_TYPE && !target.event_types.includes(event.type)) {
      return yield* new BusinessRuleViolation({
        code: "event_type_not_subscribed",
        message: `The subscription does not subscribe to ${event.type} events.`,
        param: "subscription_id"
      })
    }
    if (!tagMayReceive(target.tag, event.tags)) {
      return yield* new BusinessRuleViolation({
        code: "event_tag_not_subscribed",
        message: "The subscription has a tag the event does not carry.",
        param: "subscription_id"
      })
    }
    return target
  })

/**
 * Without a named subscription: every enabled one of the program subscribed to the event's type
 * that may receive it (untagged, or of a tag the event carries).
 */
const matchingTargets = (deps: WebhookDeps, programId: string, event: IssuingEvent) =>
  Effect.gen(function* () {
    const matching = (yield* deps.store.subscriptionsForType(programId, event.type)).filter((subscription) =>
      tagMayReceive(subscription.tag, event.tags)
    )
    if (matching.length === 0) {
      return yield* new BusinessRuleViolation({
        code: "event_type_not_subscribed",
        message: `No webhook subscription of the program subscribes to ${event.type} events.`,
        param: null
      })
    }
    const enabled = matching.filter((subscription) => !subscription.disabled)
    if (enabled.length === 0) {
      return yield* new Conflict({ message: `Every subscription to ${event.type} events is disabled.`, param: null })
    }
    return enabled
  })

/** One signed try per target; an event over the payload limit is not sent but failed for good. */
const sendAll = (deps: WebhookDeps, event: IssuingEvent, targets: ReadonlyArray<StoredSubscription>) =>
  Effect.gen(function* () {
    const body = eventPayload({ ...event, data: JSON.stringify(event.data.object) })
    const now = yield* nowMs
    const sizeBytes = Buffer.byteLength(body)
    const limitBytes = deps.config.webhookMaxPayloadBytes
    const oversized = sizeBytes > limitBytes
    return yield* Effect.forEach(
      targets,
      (subscription) =>
        Effect.map(
          oversized
            ? Effect.succeed(oversizedPayload(sizeBytes, limitBytes, now))
            : deps.sender.send({ url: subscription.url, messageId: event.id, body, keys: signingKeys(deps.vault, subscription, now) }),
          (outcome): TryResult<DeliveryRef> => ({
            delivery: { program_id: event.program_id, event_id: event.id, subscription_id: subscription.id, attempt_count: 0 },
            outcome,
            permanent: oversized
          })
        ),
      { concurrency: RESEND_CONCURRENCY }
    )
  })
