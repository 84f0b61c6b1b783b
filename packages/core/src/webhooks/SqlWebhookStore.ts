import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import { attemptStatements } from "./SqlWebhookAttempts.js"
import { queueStatements } from "./SqlWebhookQueue.js"
import { subscriptionStatements } from "./SqlWebhookSubscriptions.js"
import { WebhookStore, type WebhookStoreService, WebhookWakeups } from "./WebhookStore.js"
import { makeWorkSignal } from "./WorkSignal.js"

// The ledger's synchronous SQLite posting runs the same fan-out text as the queue.
export { sqliteFanOutParams, sqliteFanOutSql } from "./SqlWebhookQueue.js"

/**
 * The webhook port over SqlClient, one SQL text for both dialects. The dialect choices (row locks,
 * `FOR UPDATE SKIP LOCKED` claims, NOTIFY, counting inserted rows, the fan-out function) sit next
 * to their SQL in the statement files. Workers wait on a work signal rung by this process's
 * enqueues (SQLite) and by database notifications (PostgreSQL LISTEN, when WebhookWakeups is given).
 */
export const SqlWebhookStoreLive = Layer.scoped(
  WebhookStore,
  Effect.gen(function* () {
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const wakeups = yield* Effect.serviceOption(WebhookWakeups)
    const signal = yield* makeWorkSignal(Option.map(wakeups, (service) => service.notifications))
    const store: WebhookStoreService = {
      ...subscriptionStatements(sql),
      ...queueStatements(sql, signal),
      ...attemptStatements(sql),
      wake: signal.ring,
      waitForWork: signal.wait
    }
    return store
  })
)
