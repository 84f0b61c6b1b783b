import * as SqlClient from "@effect/sql/SqlClient"
import { sqlErrorCode, StoreWriterThread, type ThreadStatement } from "@issuing/core"
import { Context, Effect, Layer } from "effect"
import { SqliteWriter } from "./SqliteClient.js"

/**
 * Short writes on the writer thread: the delivery worker's claims, lease renewals and recordings
 * (docs/webhooks.md#the-workers-writes-off-the-event-loop) and the rate limiter's leases
 * (docs/operations.md#rate-limits-across-nodes) are each one job, committed — and fsynced — there
 * while the event loop goes on serving. A commit of the main connection would also empty the
 * thread's page cache (SQLite's cache of a connection is dropped whenever another one has written
 * the file): the thread read back most of its pages after every lease
 * (docs/decisions.md#sqlite-the-writer-threads-page-reads). A job holds the process's write gate
 * until its answer, as the batch lane's do, and asks for it as urgently as a write transaction of
 * the main connection (a lane holding it lets it go soon), so it never waits behind a stream of
 * batches. Not provided where the store has no thread (`:memory:`, `writerThread: false`): the same
 * statements then run on the main connection. A thread that stopped (it should not) fails its jobs
 * with SQLITE_WRITER_STOPPED: that job runs on the main connection instead, in one transaction, and
 * the next one starts a thread.
 */
export const SqliteStoreWriterThreadLive = Layer.effectContext(
  Effect.gen(function* () {
    const writer = yield* SqliteWriter
    if (!writer.available) return Context.empty()
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const onMainConnection = (statements: ReadonlyArray<ThreadStatement>) =>
      sql.withTransaction(Effect.forEach(statements, ([text, params]) => sql.unsafe<Record<string, unknown>>(text, params)))
    return Context.make(
      StoreWriterThread,
      StoreWriterThread.of({
        transaction: (statements, options) =>
          options?.followWrites === true && !writer.lastWriteOnThread()
            ? onMainConnection(statements)
            : writer.withGate(Effect.flatten(writer.send({ statements })), { urgent: true }).pipe(
                // No guard: a job without one always runs.
                Effect.map((result) =>
                  result._tag === "Committed" ? statements.map((_, i) => result.rows?.[i] ?? []) : statements.map(() => [])
                ),
                Effect.catchIf(
                  (error) => sqlErrorCode(error) === "SQLITE_WRITER_STOPPED",
                  () => onMainConnection(statements)
                )
              )
      })
    )
  })
)
