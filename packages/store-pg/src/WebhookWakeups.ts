import { PgClient } from "@effect/sql-pg"
import { WEBHOOK_NOTIFY_CHANNEL, WebhookWakeups } from "@issuing/core"
import { Effect, Layer } from "effect"

/**
 * Webhook wake-ups over LISTEN: a commit that queued deliveries runs `pg_notify` inside its
 * transaction, PostgreSQL delivers it on commit, and every worker listening wakes at once (no
 * polling lag). The listening connection is opened only when a worker first waits.
 */
export const PgWebhookWakeupsLive = Layer.effect(
  WebhookWakeups,
  Effect.map(PgClient.PgClient, (pg) => ({ notifications: pg.listen(WEBHOOK_NOTIFY_CHANNEL) }))
)
