import { WebhookWriterThread } from "@issuing/core"
import { Context, Effect, Layer } from "effect"
import { SqliteWriter } from "./SqliteClient.js"

/**
 * The delivery worker's writes on the writer thread (docs/webhooks.md#the-workers-writes-off-the-event-loop):
 * its claims, lease renewals and recordings are each one job, committed — and fsynced — there while
 * the event loop goes on sending. A job holds the process's write gate until its answer, as the
 * batch lane's do, and asks for it as urgently as a write transaction of the main connection (a lane
 * holding it lets it go soon), so a claim never waits behind a stream of batches. Not provided where
 * the store has no thread (`:memory:`, `writerThread: false`): the same statements then run on the
 * main connection.
 */
export const SqliteWebhookWriterThreadLive = Layer.effectContext(
  Effect.map(SqliteWriter, (writer) =>
    writer.available
      ? Context.make(
          WebhookWriterThread,
          WebhookWriterThread.of({
            transaction: (statements) =>
              writer.withGate(Effect.flatten(writer.send({ statements })), { urgent: true }).pipe(
                Effect.map((result) =>
                  // No guard: a job without one always runs.
                  result._tag === "Committed" ? statements.map((_, i) => result.rows?.[i] ?? []) : statements.map(() => [])
                )
              )
          })
        )
      : Context.empty()
  )
)
