import type { SqlError } from "@effect/sql"
import { Effect } from "effect"
import type { OutcomePlan, PlannedRetry } from "./DeliveryRules.js"
import type { WebhookStoreService } from "./WebhookStore.js"

/** How the queue takes a plan's retries and finished deliveries: claimed ones (worker) or new ones (resend). */
export interface OutcomeQueue<D> {
  /** Puts the plan's retries on the queue (all of them: one statement where the queue can). */
  readonly retry: (retries: ReadonlyArray<PlannedRetry<D>>) => Effect.Effect<void, SqlError.SqlError>
  readonly finish: (deliveries: ReadonlyArray<D>) => Effect.Effect<void, SqlError.SqlError>
}

/**
 * Writes an outcome plan (run it inside a transaction): attempts, the queue, failing streaks, and
 * the subscriptions it disables (410 Gone, or failing too long); returns the ids disabled.
 */
export const recordOutcomes = <D>(
  store: WebhookStoreService,
  plan: OutcomePlan<D>,
  queue: OutcomeQueue<D>
): Effect.Effect<ReadonlyArray<string>, SqlError.SqlError> =>
  Effect.gen(function* () {
    yield* store.insertAttempts(plan.attempts)
    yield* queue.retry(plan.retries)
    yield* queue.finish(plan.finished)
    yield* store.clearFailing(plan.clearFailing)
    yield* store.markFailing(plan.markFailing, plan.nowIso)
    return yield* disableFromPlan(store, plan)
  })

/** True when writing `plan` may disable a subscription (a failure: 410 Gone, or a streak grown too old). */
export const mayDisable = (plan: OutcomePlan<unknown>): boolean => plan.disableNow.length > 0 || plan.markFailing.length > 0

/** Disables what `plan` says (run it in the plan's transaction, after its streaks are written); returns the ids disabled. */
export const disableFromPlan = (
  store: WebhookStoreService,
  plan: OutcomePlan<unknown>
): Effect.Effect<ReadonlyArray<string>, SqlError.SqlError> =>
  Effect.gen(function* () {
    const disabled = [
      ...(yield* store.disableSubscriptions(plan.disableNow, plan.nowIso, undefined)),
      ...(yield* store.disableSubscriptions(plan.markFailing, plan.nowIso, plan.failingBefore))
    ]
    for (const id of disabled) yield* Effect.logWarning("Webhook subscription disabled", { webhook_subscription_id: id })
    return disabled
  })
