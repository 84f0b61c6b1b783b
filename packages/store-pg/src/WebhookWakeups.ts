import { SqlError } from "@effect/sql/SqlError"
import { WEBHOOK_NOTIFY_CHANNEL, WebhookWakeups } from "@issuing/core"
import { Effect, Layer, Stream } from "effect"
import pg from "pg"

/** The `application_name` of the listening connection (operators see it in pg_stat_activity). */
const LISTEN_APPLICATION_NAME = "issuing-listen"

/**
 * Webhook wake-ups over LISTEN: a commit that queued deliveries runs `pg_notify` inside its
 * transaction, PostgreSQL delivers it on commit, and every worker listening wakes at once (no
 * polling lag). The listening connection is opened only when a worker first waits.
 *
 * Its own `pg` client rather than `PgClient.listen`: that one keeps its listening connection
 * after the server drops it (a restart, a failover, an idle-session timeout) and ignores the
 * error, so notifications stop for good and workers fall back to the poll. Here a lost
 * connection fails the stream; the store's listener opens a new one a second later, and every
 * (re)connect emits once, so deliveries queued while nobody listened are claimed at once.
 */
export const webhookWakeupsLayer = (url: string) =>
  Layer.succeed(WebhookWakeups, {
    notifications: Stream.asyncPush<void, SqlError>((emit) =>
      Effect.acquireRelease(
        Effect.tryPromise({
          try: async () => {
            const client = new pg.Client({ connectionString: url, application_name: LISTEN_APPLICATION_NAME })
            const lost = (cause: unknown) => emit.fail(new SqlError({ cause, message: "The LISTEN connection was lost" }))
            client.on("error", lost)
            client.on("end", () => lost(new Error("connection ended")))
            client.on("notification", (message) => {
              if (message.channel === WEBHOOK_NOTIFY_CHANNEL) emit.single(undefined)
            })
            try {
              await client.connect()
              await client.query(`LISTEN ${client.escapeIdentifier(WEBHOOK_NOTIFY_CHANNEL)}`)
            } catch (cause) {
              client.removeAllListeners("end")
              await client.end().catch(() => undefined)
              throw cause
            }
            emit.single(undefined)
            return client
          },
          catch: (cause) => new SqlError({ cause, message: "Failed to LISTEN for webhook wake-ups" })
        }),
        (client) =>
          Effect.promise(() => {
            client.removeAllListeners("end")
            client.removeAllListeners("notification")
            return client.end().catch(() => undefined)
          }).pipe(Effect.timeoutOption("1 second"))
      )
    )
  })
