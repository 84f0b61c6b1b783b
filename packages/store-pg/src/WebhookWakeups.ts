import { SqlClient } from "@effect/sql"
import { WEBHOOK_NOTIFY_CHANNEL, WebhookWakeups } from "@issuing/core"
import { Effect, Layer, Queue, Stream } from "effect"
import { randomUUID } from "node:crypto"
import type { PgListener } from "./PgListener.js"

/**
 * Webhook wake-ups over LISTEN / NOTIFY (docs/webhooks.md#wake-ups-on-postgresql). After a commit
 * that queued deliveries, the process wakes its own workers and `announce`s it: a NOTIFY in a
 * statement of its own, committed without waiting for a WAL flush (`synchronous_commit` off for
 * that statement alone: a notification is a hint, and the queued rows are already durable). Never
 * a NOTIFY inside the writing transaction: PostgreSQL serializes the commits of notifying
 * transactions, WAL flush included, behind one lock for the whole cluster. Announcements
 * coalesce: one NOTIFY at a time, and one more after it for all that were asked meanwhile.
 *
 * Every worker listening wakes at once (no polling lag). They share the node's listening
 * connection with the change feed, opened only when first needed. A lost connection fails the
 * stream; the store's listener opens a new one a second later, and every (re)connect emits once,
 * so deliveries queued while nobody listened are claimed at once.
 *
 * A NOTIFY reaches its own sender's LISTEN too: each store names its announcements (`due <uuid>`)
 * and leaves its own out of `notifications`, since its workers were rung directly at the commit.
 * Heard back, each was one more claim round that found nothing — a statement on the pool and the
 * worker's CPU on the path of the next delivery, at every emitting commit. Any other payload
 * (another node's, or `due` from a node of an older version) rings.
 */
export const webhookWakeupsLayer = (listener: PgListener) =>
  Layer.scoped(
    WebhookWakeups,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const asked = yield* Queue.dropping<void>(1)
      const origin = `due ${randomUUID()}`
      const notify = sql`SELECT set_config('synchronous_commit', 'off', true), pg_notify(${WEBHOOK_NOTIFY_CHANNEL}, ${origin})`
      // A failed NOTIFY loses only a hint: the other nodes' fallback poll finds the deliveries.
      yield* Queue.take(asked).pipe(Effect.zipRight(Effect.ignoreLogged(notify)), Effect.forever, Effect.forkScoped)
      return {
        notifications: Stream.filter(
          listener.stream(WEBHOOK_NOTIFY_CHANNEL),
          (event) => event._tag !== "Notified" || event.payload !== origin
        ),
        announce: Effect.asVoid(Queue.offer(asked, undefined))
      }
    })
  )
