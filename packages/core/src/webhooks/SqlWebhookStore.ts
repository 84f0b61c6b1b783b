import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import { attemptStatements } from "./SqlWebhookAttempts.js"
import { portalSessionStatements } from "./SqlWebhookPortalSessions.js"
import { queueStatements } from "./SqlWebhookQueue.js"
import { subscriptionStatements } from "./SqlWebhookSubscriptions.js"
import { StoreWriterThread } from "../sql/StoreWriterThread.js"
import { WebhookClaimClient, WebhookStore, type WebhookStoreService, WebhookWakeups } from "./WebhookStore.js"
import { makeWorkSignal } from "./WorkSignal.js"
import { afterCommit } from "../sql/Transactor.js"

// The ledger's synchronous SQLite posting runs the same fan-out text as the queue.
export { sqliteFanOutParams, sqliteFanOutSql } from "./SqlWebhookQueue.js"

/**
 * The webhook port over SqlClient, one SQL text for both dialects. The dialect choices (row locks,
 * `FOR UPDATE SKIP LOCKED` claims, NOTIFY, counting inserted rows, the fan-out function) sit next
 * to their SQL in the statement files. Workers wait on a work signal rung by this process's
 * enqueues and by other processes' notifications (PostgreSQL LISTEN, when WebhookWakeups is given);
 * their claims run on the client of their own when WebhookClaimClient is given, and their claims,
 * renewals and recordings on the writer thread when StoreWriterThread is.
 */
export const SqlWebhookStoreLive = Layer.scoped(
  WebhookStore,
  Effect.gen(function* () {
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const wakeups = yield* Effect.serviceOption(WebhookWakeups)
    const claimSql = Option.match(yield* Effect.serviceOption(WebhookClaimClient), {
      onNone: () => sql,
      onSome: (client) => client.withoutTransforms()
    })
    const thread = yield* Effect.serviceOption(StoreWriterThread)
    const signal = yield* makeWorkSignal(Option.map(wakeups, (service) => service.notifications))
    // SQLite: ring this process's workers at once (their claim waits for the one connection, so it
    // runs after the commit). PostgreSQL: after the commit, ring them and, unless one of them was
    // waiting (it claims now, and announces in turn if it claims a full batch), announce it to the
    // other processes — never a NOTIFY inside the transaction (docs/webhooks.md#wake-ups-on-postgresql).
    const wake = Option.match(wakeups, {
      onNone: () => signal.ring,
      onSome: ({ announce }) => afterCommit(Effect.flatMap(signal.ringWaiting, (taken) => (taken ? Effect.void : announce)))
    })
    const store: WebhookStoreService = {
      ...subscriptionStatements(sql),
      ...queueStatements(sql, wake, claimSql, thread),
      ...attemptStatements(sql),
      ...portalSessionStatements(sql),
      wake,
      waitForWork: signal.wait
    }
    return store
  })
)
