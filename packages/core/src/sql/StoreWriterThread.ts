import type { SqlError } from "@effect/sql"
import { Context, type Effect } from "effect"

/** One statement for StoreWriterThread: its SQL text and its parameters, bound as they are. */
export type ThreadStatement = readonly [sql: string, params: ReadonlyArray<string | number | null>]

/**
 * Where the store has a connection on a thread of its own (SQLite's writer thread,
 * docs/architecture.md#the-sqlite-writer-thread): short writes that would otherwise commit — and
 * fsync — on the event loop's connection are committed there. The delivery worker's claims, renewals
 * and recordings (docs/webhooks.md#the-workers-writes-off-the-event-loop) and the rate limiter's
 * leases (docs/operations.md#rate-limits-across-nodes) use it. `transaction` runs the statements in
 * order in ONE transaction and answers each one's rows (a read's or RETURNING's; empty for the
 * others). The SQLite store provides it for a file database; without it the same statements run on
 * the store's client. `followWrites`: a write that may commit on either connection (the lease) runs
 * on the thread only while the process's other writes do, else on the store's client — SQLite drops
 * a connection's page cache whenever another connection has written
 * (docs/decisions.md#sqlite-the-writer-threads-page-reads).
 */
export class StoreWriterThread extends Context.Tag("@issuing/core/StoreWriterThread")<
  StoreWriterThread,
  {
    readonly transaction: (
      statements: ReadonlyArray<ThreadStatement>,
      options?: { readonly followWrites?: boolean }
    ) => Effect.Effect<ReadonlyArray<ReadonlyArray<Record<string, unknown>>>, SqlError.SqlError>
  }
>() {}
