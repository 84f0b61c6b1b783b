import type { SqlError } from "@effect/sql"
import { Effect, Option } from "effect"
import { EventStore } from "../events/EventStore.js"
import { EVENT_TYPES } from "../events/Records.js"
import { BusinessRuleViolation, Conflict, InvalidRequest, NotFound } from "../platform/Errors.js"
import { isUuid, newId } from "../platform/Ids.js"
import { IssuingConfig } from "../platform/IssuingConfig.js"
import { type Page, type PageRequest, toWindow } from "../platform/Paging.js"
import { nowMs } from "../platform/Time.js"
import { Transactor } from "../sql/Transactor.js"
import { Vault } from "../vault/Vault.js"
import { attemptRecord, eventPayload, oversizedPayload, retryDelayMs, signingKeys } from "./DeliveryRules.js"
import {
  ATTEMPT_STATUSES,
  type AttemptStatus,
  type StoredSubscription,
  type WebhookAttempt,
  type WebhookReplay,
  type WebhookSubscription,
  type WebhookSubscriptionWithSecret,
  WEBHOOK_LIMITS
} from "./Records.js"
import { newWebhookSecret } from "./Signing.js"
import { checkWebhookUrl } from "./UrlGuard.js"
import { type DeliveryOutcome, WebhookSender } from "./WebhookSender.js"
import { WebhookStore } from "./WebhookStore.js"

export interface CreateSubscriptionInput {
  readonly url: string
  readonly description?: string | undefined
  readonly event_types: ReadonlyArray<string>
  readonly disabled?: boolean | undefined
}

export interface UpdateSubscriptionInput {
  readonly url?: string | undefined
  readonly description?: string | undefined
  readonly event_types?: ReadonlyArray<string> | undefined
  readonly disabled?: boolean | undefined
}

export interface AttemptQuery {
  readonly event_id?: string | undefined
  readonly webhook_subscription_id?: string | undefined
  readonly status?: string | undefined
}

/** The public view of a stored subscription. */
export const publicSubscription = (subscription: StoredSubscription): WebhookSubscription => ({
  id: subscription.id,
  object: "webhook_subscription",
  url: subscription.url,
  description: subscription.description,
  event_types: subscription.event_types,
  disabled: subscription.disabled,
  created_at: subscription.created_at,
  updated_at: subscription.updated_at
})

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/

/**
 * Parses an RFC 3339 timestamp to epoch milliseconds. Sub-millisecond digits round toward the
 * inside of the window (`begin` up, `end` down), since event times are stored to the millisecond.
 */
export const parseWindowBound = (text: string, bound: "begin" | "end"): number | undefined => {
  const match = RFC3339.exec(text.trim())
  if (match === null) return undefined
  const [, year, month, day, hour, minute, second, fraction = "", zone] = match
  if (Number(month) < 1 || Number(month) > 12 || Number(day) < 1 || Number(day) > 31) return undefined
  if (Number(hour) > 23 || Number(minute) > 59 || Number(second) > 60) return undefined
  // A leap second (:60) is the instant the next minute starts; Date.parse refuses it.
  const leap = Number(second) === 60 ? 1000 : 0
  const parsed = Date.parse(`${year}-${month}-${day}T${hour}:${minute}:${leap ? "59" : second}${zone!.toUpperCase()}`)
  if (Number.isNaN(parsed)) return undefined
  const whole = parsed + leap
  const check = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)))
  if (check.getUTCDate() !== Number(day)) return undefined
  const digits = fraction.slice(1)
  const millis = Number(digits.slice(0, 3).padEnd(3, "0"))
  const remainder = /[1-9]/.test(digits.slice(3)) ? 1 : 0
  return whole + millis + (bound === "begin" ? remainder : 0)
}

/**
 * The span event times can take: none is older than the epoch or newer than year 9999. Replay
 * bounds beyond it are clamped to it (same events), since PostgreSQL rejects timestamps such as
 * year 0000 or a negative year that RFC 3339 offsets can produce.
 */
const EARLIEST_EVENT_MS = 0
const LATEST_EVENT_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999)

const replayOf = (subscriptionId: string, begin: string, end: string, queued: number): WebhookReplay => ({
  object: "webhook_replay",
  webhook_subscription_id: subscriptionId,
  begin,
  end,
  events_queued: queued
})

/** Webhook subscriptions, replay, resend and attempts (interface §4.8–4.10, CONTRACT §5). */
export class Webhooks extends Effect.Service<Webhooks>()("@issuing/core/Webhooks", {
  effect: Effect.gen(function*() {
    const store = yield* WebhookStore
    const events = yield* EventStore
    const transactor = yield* Transactor
    const vault = yield* Vault
    const config = yield* IssuingConfig
    const sender = yield* WebhookSender

    const missing = new NotFound({ message: "No such webhook subscription.", param: "webhook_subscription_id" })
    /** A subscription of the program; `forUpdate` locks it for a read-modify-write inside a transaction. */
    const load = (programId: string, id: string, notFound: NotFound = missing, forUpdate = false) =>
      Effect.gen(function*() {
        if (!isUuid(id)) return yield* notFound
        const found = yield* store.findSubscription(programId, id.toLowerCase(), forUpdate)
        return yield* Option.match(found, { onNone: () => Effect.fail(notFound), onSome: Effect.succeed })
      })

    const validateUrl = (text: string): Effect.Effect<string, InvalidRequest> =>
      Effect.gen(function*() {
        const bad = (message: string) => new InvalidRequest({ message, param: "url" })
        const trimmed = text.trim()
        if (trimmed.length === 0) return yield* bad("url must not be empty.")
        if (trimmed.length > WEBHOOK_LIMITS.maxUrlLength) {
          return yield* bad(`url must be at most ${WEBHOOK_LIMITS.maxUrlLength} characters.`)
        }
        let url: URL
        try {
          url = new URL(trimmed)
        } catch {
          return yield* bad("url must be an absolute http or https URL.")
        }
        if (url.protocol !== "https:" && url.protocol !== "http:") return yield* bad("url must use http or https.")
        if (url.username !== "" || url.password !== "") return yield* bad("url must not carry credentials.")
        if (url.hostname === "") return yield* bad("url must name a host.")
        if (url.hash !== "") return yield* bad("url must not have a fragment.")
        const refusal = yield* Effect.promise(() => checkWebhookUrl(url, config.webhookAllowPrivateUrls))
        if (refusal !== undefined) return yield* bad(`${refusal[0]!.toUpperCase()}${refusal.slice(1)}.`)
        // Stored as given (validated), so the API echoes exactly the URL the caller sent.
        return trimmed
      })

    const validateEventTypes = (types: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<string>, InvalidRequest> => {
      if (types.length === 0) {
        return Effect.fail(new InvalidRequest({ message: "event_types must hold at least one event type.", param: "event_types" }))
      }
      const unknown = types.filter((type) => !(EVENT_TYPES as ReadonlyArray<string>).includes(type))
      if (unknown.length > 0) {
        return Effect.fail(
          new InvalidRequest({
            message: `Unknown event type${unknown.length > 1 ? "s" : ""} ${unknown.map((t) => `'${t}'`).join(", ")}. Known: ${EVENT_TYPES.join(", ")}.`,
            param: "event_types"
          })
        )
      }
      return Effect.succeed([...new Set(types)])
    }

    const validateDescription = (text: string | undefined): Effect.Effect<string, InvalidRequest> =>
      text === undefined
        ? Effect.succeed("")
        : text.length > WEBHOOK_LIMITS.maxDescriptionLength
        ? Effect.fail(
          new InvalidRequest({
            message: `description must be at most ${WEBHOOK_LIMITS.maxDescriptionLength} characters.`,
            param: "description"
          })
        )
        : Effect.succeed(text)

    /** Records tries made outside the worker (resend): attempts, the retry queue, failure streaks, 410 Gone. */
    const recordDirect = (
      programId: string,
      eventId: string,
      results: ReadonlyArray<{
        readonly subscription: StoredSubscription
        readonly outcome: DeliveryOutcome
        /** A failure that retrying cannot fix (payload over the limit). */
        readonly permanent: boolean
      }>
    ) =>
      Effect.gen(function*() {
        const now = yield* nowMs
        const nowText = new Date(now).toISOString()
        const attempts = results.map(({ outcome, subscription }) =>
          attemptRecord({ program_id: programId, event_id: eventId, subscription_id: subscription.id }, outcome, nowText)
        )
        yield* store.insertAttempts(attempts)
        const failed = results.filter((result) => result.outcome.status === "FAILED")
        yield* store.clearFailing(results.filter((result) => result.outcome.status === "SUCCESS").map((r) => r.subscription.id))
        yield* store.markFailing(failed.map((result) => result.subscription.id), nowText)
        const gone = failed.filter((result) => result.outcome.responseCode === 410).map((r) => r.subscription.id)
        yield* store.disableSubscriptions(gone, nowText, undefined)
        for (const { outcome, permanent, subscription } of failed) {
          if (permanent || outcome.responseCode === 410) continue
          const delay = retryDelayMs(config.webhookRetryScheduleMs, 1, outcome.retryAfterMs)
          if (delay === undefined) continue
          yield* store.enqueue({
            program_id: programId,
            subscription_id: subscription.id,
            event_id: eventId,
            attempt_count: 1,
            next_attempt_at: new Date(now + delay).toISOString()
          })
        }
        yield* store.disableSubscriptions(
          failed.map((result) => result.subscription.id),
          nowText,
          new Date(now - config.webhookDisableAfterMs).toISOString()
        )
        return attempts.map(({ program_id: _, ...attempt }) => attempt as WebhookAttempt)
      })

    return {
      /** Creates a subscription; the response is the only place its secret is shown (with rotate-secret). */
      create: (programId: string, input: CreateSubscriptionInput) =>
        Effect.gen(function*() {
          const url = yield* validateUrl(input.url)
          const eventTypes = yield* validateEventTypes(input.event_types)
          const description = yield* validateDescription(input.description)
          return yield* transactor.withTransaction(Effect.gen(function*() {
            const count = yield* store.countSubscriptions(programId)
            if (count >= WEBHOOK_LIMITS.maxSubscriptionsPerProgram) {
              return yield* new BusinessRuleViolation({
                code: "subscription_limit_reached",
                message: `A program may have at most ${WEBHOOK_LIMITS.maxSubscriptionsPerProgram} webhook subscriptions.`,
                param: null
              })
            }
            const now = new Date(yield* nowMs).toISOString()
            const secret = newWebhookSecret()
            const subscription: StoredSubscription = {
              id: newId(),
              object: "webhook_subscription",
              program_id: programId,
              url,
              description,
              event_types: eventTypes,
              disabled: input.disabled ?? false,
              secret_sealed: vault.encrypt(secret),
              previous_secret_sealed: null,
              previous_secret_expires_at: null,
              created_at: now,
              updated_at: now
            }
            yield* store.insertSubscription(subscription)
            return { ...publicSubscription(subscription), secret } satisfies WebhookSubscriptionWithSecret
          }))
        }),

      /** The program's subscriptions, newest first by default, optionally only (dis)abled ones. */
      list: (programId: string, disabled: boolean | undefined, page: PageRequest) =>
        store.listSubscriptions(programId, disabled, toWindow(page)).pipe(
          Effect.map(({ rows, total }): Page<WebhookSubscription> => ({ data: rows.map(publicSubscription), total_count: total }))
        ),

      get: (programId: string, id: string) => Effect.map(load(programId, id), publicSubscription),

      /** Changes url, description, event_types or disabled; disabling drops queued deliveries. */
      update: (programId: string, id: string, input: UpdateSubscriptionInput) =>
        Effect.gen(function*() {
          const url = input.url === undefined ? undefined : yield* validateUrl(input.url)
          const eventTypes = input.event_types === undefined ? undefined : yield* validateEventTypes(input.event_types)
          const description = input.description === undefined ? undefined : yield* validateDescription(input.description)
          return yield* transactor.withTransaction(Effect.gen(function*() {
            const current = yield* load(programId, id, missing, true)
            const updated: StoredSubscription = {
              ...current,
              url: url ?? current.url,
              description: description ?? current.description,
              event_types: eventTypes ?? current.event_types,
              disabled: input.disabled ?? current.disabled,
              updated_at: new Date(yield* nowMs).toISOString()
            }
            yield* store.updateSubscription(updated)
            if (updated.disabled && !current.disabled) yield* store.dropQueued([updated.id])
            return publicSubscription(updated)
          }))
        }),

      /** Deletes a subscription and its queued deliveries; its attempts stay listed. */
      remove: (programId: string, id: string) =>
        transactor.withTransaction(Effect.gen(function*() {
          const current = yield* load(programId, id, missing, true)
          yield* store.deleteSubscription(programId, current.id)
          return publicSubscription(current)
        })),

      /** A new signing secret; the old one keeps signing beside it for 24 hours. */
      rotateSecret: (programId: string, id: string) =>
        transactor.withTransaction(Effect.gen(function*() {
          const current = yield* load(programId, id, missing, true)
          const now = yield* nowMs
          const secret = newWebhookSecret()
          const updated: StoredSubscription = {
            ...current,
            secret_sealed: vault.encrypt(secret),
            previous_secret_sealed: current.secret_sealed,
            previous_secret_expires_at: new Date(now + WEBHOOK_LIMITS.previousSecretTtlMs).toISOString(),
            updated_at: new Date(now).toISOString()
          }
          yield* store.updateSubscription(updated)
          return { ...publicSubscription(updated), secret } satisfies WebhookSubscriptionWithSecret
        })),

      /**
       * Queues every event of [begin, end] (both inclusive) whose type the subscription holds,
       * delivered ones included, with one INSERT … SELECT; returns how many were queued.
       */
      replay: (programId: string, id: string, begin: string, end: string) =>
        Effect.gen(function*() {
          const beginMs = parseWindowBound(begin, "begin")
          if (beginMs === undefined) {
            return yield* new InvalidRequest({ message: "begin must be an RFC 3339 timestamp, e.g. 2026-05-02T00:00:00Z.", param: "begin" })
          }
          const endMs = parseWindowBound(end, "end")
          if (endMs === undefined) {
            return yield* new InvalidRequest({ message: "end must be an RFC 3339 timestamp, e.g. 2026-05-02T23:59:59Z.", param: "end" })
          }
          const subscription = yield* load(programId, id)
          if (beginMs > endMs) {
            return yield* new BusinessRuleViolation({ code: "invalid_time_window", message: "begin must not be after end.", param: "begin" })
          }
          if (subscription.disabled) {
            return yield* new Conflict({ message: "The webhook subscription is disabled; enable it before replaying.", param: "webhook_subscription_id" })
          }
          if (endMs < EARLIEST_EVENT_MS || beginMs > LATEST_EVENT_MS) {
            return replayOf(subscription.id, begin, end, 0)
          }
          const beginIso = new Date(Math.max(beginMs, EARLIEST_EVENT_MS)).toISOString()
          const endIso = new Date(Math.min(endMs, LATEST_EVENT_MS)).toISOString()
          // The bound is on the history a replay re-sends: the span from the window's first event
          // to its last. A wide window over a short history (begin 2000-01-01) is fine; 40 days
          // of events is not, and is split by the caller into several replays.
          const span = yield* store.eventSpan(programId, beginIso, endIso)
          if (Option.isSome(span) && Date.parse(span.value.last) - Date.parse(span.value.first) > WEBHOOK_LIMITS.maxReplaySpanMs) {
            return yield* new BusinessRuleViolation({
              code: "replay_window_too_large",
              message: `The events in this window span more than 31 days (${span.value.first} to ${span.value.last}); split it into several replays.`,
              param: "end"
            })
          }
          const queued = Option.isNone(span) ? 0 : yield* transactor.withTransaction(Effect.gen(function*() {
            const now = new Date(yield* nowMs).toISOString()
            return yield* store.enqueueReplay(programId, subscription.id, beginIso, endIso, now)
          }))
          return replayOf(subscription.id, begin, end, queued)
        }),

      /**
       * Sends the event now to one subscription or to every enabled matching one, records each
       * try as an attempt, queues retries of failed ones, and returns the attempts.
       */
      resend: (programId: string, eventId: string, subscriptionId: string | undefined) =>
        Effect.gen(function*() {
          // A body field typed `string (uuid)` (interface §4.10): a malformed one fails validation
          // (400), unlike a malformed path id, which names no resource (404).
          if (subscriptionId !== undefined && !isUuid(subscriptionId)) {
            return yield* new InvalidRequest({ message: "subscription_id must be a UUID.", param: "subscription_id" })
          }
          const eventMissing = new NotFound({ message: "No such event.", param: "event_id" })
          if (!isUuid(eventId)) return yield* eventMissing
          const event = yield* Effect.flatMap(
            events.find(programId, eventId.toLowerCase()),
            Option.match({ onNone: () => Effect.fail(eventMissing), onSome: Effect.succeed })
          )
          let targets: ReadonlyArray<StoredSubscription>
          if (subscriptionId !== undefined) {
            const target = yield* load(programId, subscriptionId, new NotFound({ message: "No such webhook subscription.", param: "subscription_id" }))
            if (target.disabled) {
              return yield* new Conflict({ message: "The webhook subscription is disabled.", param: "subscription_id" })
            }
            if (!target.event_types.includes(event.type)) {
              return yield* new BusinessRuleViolation({
                code: "event_type_not_subscribed",
                message: `The subscription does not subscribe to ${event.type} events.`,
                param: "subscription_id"
              })
            }
            targets = [target]
          } else {
            const matching = yield* store.subscriptionsForType(programId, event.type)
            if (matching.length === 0) {
              return yield* new BusinessRuleViolation({
                code: "event_type_not_subscribed",
                message: `No webhook subscription of the program subscribes to ${event.type} events.`,
                param: null
              })
            }
            targets = matching.filter((subscription) => !subscription.disabled)
            if (targets.length === 0) {
              return yield* new Conflict({ message: `Every subscription to ${event.type} events is disabled.`, param: null })
            }
          }
          const body = eventPayload({ ...event, data: JSON.stringify(event.data.object) })
          const now = yield* nowMs
          const sizeBytes = Buffer.byteLength(body)
          const oversized = sizeBytes > config.webhookMaxPayloadBytes
          const results = yield* Effect.forEach(targets, (subscription) =>
            Effect.map(
              oversized
                ? Effect.succeed(oversizedPayload(sizeBytes, config.webhookMaxPayloadBytes, now))
                : sender.send({ url: subscription.url, messageId: event.id, body, keys: signingKeys(vault, subscription, now) }),
              (outcome) => ({ subscription, outcome, permanent: oversized })
            ), { concurrency: 16 })
          const attempts = yield* transactor.withTransaction(recordDirect(programId, event.id, results))
          return { data: attempts, total_count: attempts.length } satisfies Page<WebhookAttempt>
        }),

      /**
       * Re-seals under the current vault key every subscription secret sealed under another one
       * (after rotating ISSUING_VAULT_KEY to `new,old`), so the old key can be dropped without
       * breaking signing. Batches of 200, one transaction each, compare-and-set per subscription (a
       * rotation meanwhile wins and is looked at again). A previous secret past its grace period no
       * longer signs: it is dropped rather than re-sealed. Returns how many subscriptions were
       * re-sealed, counted from committed batches. Safe to rerun and to run while serving.
       */
      resealWithCurrentKey: Effect.gen(function*() {
        const current = `v1.${vault.currentKeyId}.`
        const reseal = (subscription: StoredSubscription, sealed: string) => {
          if (sealed.startsWith(current)) return sealed
          try {
            return vault.encrypt(vault.decrypt(sealed))
          } catch (error) {
            throw new Error(`webhook subscription ${subscription.id}: ${error instanceof Error ? error.message : String(error)}`)
          }
        }
        let total = 0
        let idleBatches = 0
        for (;;) {
          const batch = yield* store.subscriptionsSealedWithOtherKeys(vault.currentKeyId, WEBHOOK_LIMITS.resealBatchSize)
          if (batch.length === 0) return total
          const done = yield* transactor.withTransaction(Effect.flatMap(nowMs, (now) =>
            Effect.forEach(batch, (subscription) =>
              Effect.suspend(() => {
                const previousLive = subscription.previous_secret_sealed !== null &&
                  subscription.previous_secret_expires_at !== null &&
                  Date.parse(subscription.previous_secret_expires_at) > now
                return store.resealSubscription(subscription.id, subscription, {
                  secret_sealed: reseal(subscription, subscription.secret_sealed),
                  previous_secret_sealed: previousLive ? reseal(subscription, subscription.previous_secret_sealed!) : null,
                  previous_secret_expires_at: previousLive ? subscription.previous_secret_expires_at : null
                })
              }))))
          const resealed = done.filter(Boolean).length
          total += resealed
          // Only concurrent rotations make a whole batch miss; they cannot keep doing so for long.
          idleBatches = resealed === 0 ? idleBatches + 1 : 0
          if (idleBatches >= 5) {
            return yield* Effect.dieMessage("webhook subscriptions keep changing during the re-seal; run it again")
          }
        }
      }),

      /** Attempts of the program, newest first, filtered by event, subscription or status. */
      listAttempts: (programId: string, query: AttemptQuery, page: PageRequest) =>
        Effect.gen(function*() {
          for (const param of ["event_id", "webhook_subscription_id"] as const) {
            const value = query[param]
            if (value !== undefined && !isUuid(value)) {
              return yield* new InvalidRequest({ message: `${param} must be a UUID.`, param })
            }
          }
          if (query.status !== undefined && !(ATTEMPT_STATUSES as ReadonlyArray<string>).includes(query.status)) {
            return yield* new InvalidRequest({ message: "status must be SUCCESS or FAILED.", param: "status" })
          }
          const { rows, total } = yield* store.listAttempts(
            programId,
            {
              event_id: query.event_id?.toLowerCase(),
              webhook_subscription_id: query.webhook_subscription_id?.toLowerCase(),
              status: query.status as AttemptStatus | undefined
            },
            toWindow(page)
          )
          return { data: rows, total_count: total } satisfies Page<WebhookAttempt>
        })
    }
  })
}) {}

/** Failures the Webhooks service reports, for callers that want to name them. */
export type WebhooksError = InvalidRequest | NotFound | Conflict | BusinessRuleViolation | SqlError.SqlError
