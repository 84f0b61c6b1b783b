import { WEBHOOK_NOTIFY_CHANNEL, WebhookWakeups } from "@issuing/core"
import { Layer, Stream } from "effect"
import type { PgListener } from "./PgListener.js"

/**
 * Webhook wake-ups over LISTEN: a commit that queued deliveries runs `pg_notify` inside its
 * transaction, PostgreSQL delivers it on commit, and every worker listening wakes at once (no
 * polling lag). They share the node's listening connection with the change feed, opened only when
 * first needed. A lost connection fails the stream; the store's listener opens a new one a second
 * later, and every (re)connect emits once, so deliveries queued while nobody listened are claimed
 * at once.
 */
export const webhookWakeupsLayer = (listener: PgListener) =>
  Layer.succeed(WebhookWakeups, {
    notifications: Stream.as(listener.stream(WEBHOOK_NOTIFY_CHANNEL), undefined)
  })
