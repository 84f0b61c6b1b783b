import { SqlError } from "@effect/sql/SqlError"
import { WEBHOOK_NOTIFY_CHANNEL, WebhookWakeups } from "@issuing/core"
import { Effect, Layer, Stream } from "effect"
import pg from "pg"

/** The `application_name` of the webhook listening connection (operators see it in pg_stat_activity). */
const LISTEN_APPLICATION_NAME = "issuing-listen"

/** What a listening connection reports: each (re)connect, then each notification's payload. */
export type ListenEvent = { readonly _tag: "Connected" } | { readonly _tag: "Notified"; readonly payload: string }

const CONNECTED: ListenEvent = { _tag: "Connected" }

/**
 * Notifications on one channel over a dedicated `pg` connection, opened when the stream is run.
 * Emits Connected once LISTEN is in place (so a consumer can catch up on what it missed), then
 * every payload in commit order; fails when the connection is lost. Consumers reconnect by
 * running it again.
 *
 * Its own `pg` client rather than `PgClient.listen`: that one keeps its listening connection
 * after the server drops it (a restart, a failover, an idle-session timeout) and ignores the
 * error, so notifications stop for good. Here a lost connection fails the stream.
 */
export const listenStream = (url: string, channel: string, applicationName: string): Stream.Stream<ListenEvent, SqlError> =>
  Stream.asyncPush<ListenEvent, SqlError>((emit) =>
    Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          const client = new pg.Client({ connectionString: url, application_name: applicationName })
          const lost = (cause: unknown) => emit.fail(new SqlError({ cause, message: "The LISTEN connection was lost" }))
          client.on("error", lost)
          client.on("end", () => lost(new Error("connection ended")))
          client.on("notification", (message) => {
            if (message.channel === channel) emit.single({ _tag: "Notified", payload: message.payload ?? "" })
          })
          try {
            await client.connect()
            await client.query(`LISTEN ${client.escapeIdentifier(channel)}`)
          } catch (cause) {
            client.removeAllListeners("end")
            await client.end().catch(() => undefined)
            throw cause
          }
          emit.single(CONNECTED)
          return client
        },
        catch: (cause) => new SqlError({ cause, message: `Failed to LISTEN on ${channel}` })
      }),
      (client) =>
        Effect.promise(() => {
          client.removeAllListeners("end")
          client.removeAllListeners("notification")
          return client.end().catch(() => undefined)
        }).pipe(Effect.timeoutOption("1 second"))
    )
  )

/**
 * Webhook wake-ups over LISTEN: a commit that queued deliveries runs `pg_notify` inside its
 * transaction, PostgreSQL delivers it on commit, and every worker listening wakes at once (no
 * polling lag). The listening connection is opened only when a worker first waits. A lost
 * connection fails the stream; the store's listener opens a new one a second later, and every
 * (re)connect emits once, so deliveries queued while nobody listened are claimed at once.
 */
export const webhookWakeupsLayer = (url: string) =>
  Layer.succeed(WebhookWakeups, {
    notifications: Stream.as(listenStream(url, WEBHOOK_NOTIFY_CHANNEL, LISTEN_APPLICATION_NAME), undefined)
  })
