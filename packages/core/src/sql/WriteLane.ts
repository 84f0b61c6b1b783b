import { SqlClient, type SqlError } from "@effect/sql"
import { Context, Effect, Layer, Option } from "effect"
import { makeGroupCommit } from "./GroupCommit.js"
import { retryTransient, Transactor, type TransactorService } from "./Transactor.js"

/**
 * How a store commits a write that runs on its own (not inside a caller's transaction): the store
 * picks what makes its commits fast. SQLite has one writer and every commit is an fsync nobody
 * shares, so it batches concurrent writes into one commit (group commit). PostgreSQL already
 * shares WAL flushes between concurrent commits, and one batch lane would serialize its round
 * trips over the pool, so there each write is its own transaction (docs/architecture.md).
 */
export interface WriteLaneService {
  /**
   * Commits `effect` durably; resolves after the commit. `atomic`: the effect is one store call
   * that is all-or-nothing by itself (a one-call posting), so it needs no transaction or
   * savepoint of its own around it. Transient concurrency failures are retried.
   */
  readonly submit: <A, E>(effect: Effect.Effect<A, E>, options?: { readonly atomic?: boolean }) => Effect.Effect<A, E | SqlError.SqlError>
}

/** The store's write lane (provided by each store package). */
export class WriteLane extends Context.Tag("@issuing/core/WriteLane")<WriteLane, WriteLaneService>() {}

/**
 * Runs a write: joins the caller's transaction if there is one (an idempotent request's), else
 * commits it through the store's lane — never a lane unit inside a transaction, whose lock the
 * lane's own transaction would wait for.
 */
export const commitWrite = <A, E>(
  lane: WriteLaneService,
  transactor: TransactorService,
  effect: Effect.Effect<A, E>,
  options?: { readonly atomic?: boolean }
): Effect.Effect<A, E | SqlError.SqlError> =>
  Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (outer) =>
    Option.isSome(outer) ? transactor.withTransaction(effect) : lane.submit(effect, options)
  )

/** Each write its own transaction (an atomic one in autocommit), retried under the Transactor's policy. */
export const TransactionPerWriteLane: Layer.Layer<WriteLane, never, Transactor> = Layer.effect(
  WriteLane,
  Effect.map(Transactor, (transactor) => ({
    submit: (effect, options) => (options?.atomic === true ? retryTransient(effect) : transactor.withTransaction(effect))
  }))
)

/** Concurrent writes batched into one commit each (sql/GroupCommit.ts). */
export const GroupCommitLane: Layer.Layer<WriteLane, never, Transactor> = Layer.scoped(
  WriteLane,
  Effect.flatMap(Transactor, (transactor) => makeGroupCommit(transactor))
)
