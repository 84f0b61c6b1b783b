import { Effect, Option } from "effect"
import { BusinessRuleViolation, Conflict } from "../platform/Errors.js"
import { nowIso } from "../platform/Time.js"
import { type ReplayRequest, WEBHOOK_LIMITS, type WebhookReplay } from "./Records.js"
import { loadSubscription, type WebhookDeps } from "./Subscriptions.js"

/**
 * The span event times can take: none is older than the epoch or newer than year 9999. Replay
 * bounds beyond it are clamped to it (same events), since PostgreSQL rejects timestamps such as
 * year 0000 or a negative year that RFC 3339 offsets can produce.
 */
const EARLIEST_EVENT_MS = 0
const LATEST_EVENT_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999)

const replayOf = (subscriptionId: string, input: ReplayRequest, queued: number): WebhookReplay => ({
  object: "webhook_replay",
  webhook_subscription_id: subscriptionId,
  begin: input.begin.text,
  end: input.end.text,
  events_queued: queued
})

/**
 * Queues every event of [begin, end] (both inclusive) whose type the subscription holds, delivered
 * ones included, with one INSERT … SELECT; returns how many were queued (docs/webhooks.md, Replay).
 * With `tag` (a portal session's), a subscription of another tag is not found. A tagged
 * subscription replays only the events that carry its tag (docs/webhooks.md#customers-and-tags).
 */
export const replay = (deps: WebhookDeps, programId: string, id: string, input: ReplayRequest, tag?: string) =>
  Effect.gen(function* () {
    const subscription = yield* loadSubscription(deps, programId, id, undefined, false, tag)
    const { begin, end } = input
    if (begin.ms > end.ms) {
      return yield* new BusinessRuleViolation({ code: "invalid_time_window", message: "begin must not be after end.", param: "begin" })
    }
    if (subscription.disabled) {
      return yield* new Conflict({
        message: "The webhook subscription is disabled; enable it before replaying.",
        param: "webhook_subscription_id"
      })
    }
    if (end.ms < EARLIEST_EVENT_MS || begin.ms > LATEST_EVENT_MS) return replayOf(subscription.id, input, 0)
    const beginIso = new Date(Math.max(begin.ms, EARLIEST_EVENT_MS)).toISOString()
    const endIso = new Date(Math.min(end.ms, LATEST_EVENT_MS)).toISOString()
    // The bound is on the history a replay re-sends: the span from the window's first event to its
    // last. A wide window over a short history (begin 2000-01-01) is fine; 40 days of events is
    // not, and is split by the caller into several replays.
    const span = yield* deps.store.eventSpan(programId, subscription.tag, beginIso, endIso)
    if (Option.isNone(span)) return replayOf(subscription.id, input, 0)
    if (Date.parse(span.value.last) - Date.parse(span.value.first) > WEBHOOK_LIMITS.maxReplaySpanMs) {
      return yield* new BusinessRuleViolation({
        code: "replay_window_too_large",
        message: `The events in this window span more than 31 days (${span.value.first} to ${span.value.last}); split it into several replays.`,
        param: "end"
      })
    }
    const queued = yield* deps.transactor.withTransaction(
      Effect.flatMap(nowIso, (now) => deps.store.enqueueReplay(programId, subscription.id, subscription.tag, beginIso, endIso, now))
    )
    return replayOf(subscription.id, input, queued)
  })
