import { SqlClient, type SqlError } from "@effect/sql"
import { Context, Effect, FiberRef, Layer, Random, Schedule } from "effect"
import { sqlErrorCode } from "./SqlErrorCode.js"

/**
 * The unit of work: runs an effect inside one database transaction. Nested calls join the outer
 * transaction (as a savepoint), so a service's write and the stored idempotent response commit
 * together. Serialization failures, deadlocks and SQLite busy errors are retried with jitter, a
 * bounded number of times; they never surface as business errors.
 */
export interface TransactorService {
  readonly withTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | SqlError.SqlError, R>
}

/** The transaction port. */
export class Transactor extends Context.Tag("@issuing/core/Transactor")<Transactor, TransactorService>() {}

/** Attempts before a retryable transaction failure is reported. */
export const MAX_TRANSACTION_ATTEMPTS = 8

/** SQLSTATEs and SQLite codes that mean "run the whole transaction again". */
const RETRYABLE_CODES = new Set(["40001", "40P01", "SQLITE_BUSY", "SQLITE_BUSY_SNAPSHOT", "SQLITE_LOCKED"])

/** True when a failure is a transient concurrency failure worth retrying. */
export const isRetryableSqlError = (error: unknown): boolean => {
  const code = sqlErrorCode(error)
  return code !== undefined && RETRYABLE_CODES.has(code)
}

/** True when a failure is a unique-constraint violation (PostgreSQL 23505, SQLite SQLITE_CONSTRAINT_UNIQUE/PRIMARYKEY). */
export const isUniqueViolation = (error: unknown): boolean => {
  const code = sqlErrorCode(error)
  return code === "23505" || code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY"
}

/**
 * The one retry policy of the platform's writes: jittered exponential back-off from 2 ms (each wait
 * 0.8–1.2 × its step, drawn from Effect's `Random` as `Schedule.jittered` does),
 * MAX_TRANSACTION_ATTEMPTS tries in all. Its first wait is taken by `retryTransient` itself; this
 * schedule makes the waits after the second try.
 */
const FIRST_RETRY_MS = 2
const laterRetries = Schedule.exponential(`${2 * FIRST_RETRY_MS} millis`, 2).pipe(
  Schedule.jittered,
  Schedule.intersect(Schedule.recurs(MAX_TRANSACTION_ATTEMPTS - 2))
)

/**
 * Runs an outermost write again on transient concurrency failures (deadlock, serialization
 * failure, SQLITE_BUSY) under the Transactor's policy. Only for a write that is its own
 * transaction (an outermost one, or one atomic statement in autocommit): a retry inside a
 * caller's transaction would re-run half of it. The schedule is set up only once a try has failed:
 * `Effect.retry` builds its schedule's driver on every call, a cost every write paid for the rare
 * one that fails (docs/operations.md#volume, "The Node side, profiled").
 */
export const retryTransient = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.catchIf(effect, isRetryableSqlError, () =>
    Effect.zipRight(
      Effect.flatMap(Random.nextRange(0.8, 1.2), (factor) => Effect.sleep(FIRST_RETRY_MS * factor)),
      Effect.retry(effect, { schedule: laterRetries, while: isRetryableSqlError })
    )
  )

/** What the outermost Transactor transaction of this fiber runs once it has committed (see afterCommit). */
const afterCommitActions = FiberRef.unsafeMake<Array<Effect.Effect<void>> | undefined>(undefined)

/**
 * Runs `action` once what this fiber wrote is committed: at once outside a transaction of the
 * Transactor (an autocommit statement has committed when it returns), else after the outermost
 * one commits — and never if it rolls back. The same action asked for twice in one transaction
 * runs once. For signals to other readers, which must not see the transaction before its rows
 * (docs/webhooks.md#wake-ups-on-postgresql).
 */
export const afterCommit = (action: Effect.Effect<void>): Effect.Effect<void> =>
  Effect.flatMap(FiberRef.get(afterCommitActions), (pending) =>
    pending === undefined
      ? action
      : Effect.sync(() => {
          if (!pending.includes(action)) pending.push(action)
        })
  )

/** `effect` as one transaction, then the actions it asked to run after its commit. */
const committing = <A, E, R>(sql: SqlClient.SqlClient, effect: Effect.Effect<A, E, R>) =>
  Effect.suspend(() => {
    const pending: Array<Effect.Effect<void>> = []
    return Effect.locally(sql.withTransaction(effect), afterCommitActions, pending).pipe(
      Effect.tap(() => Effect.forEach(pending, (action) => action, { discard: true }))
    )
  })

/** The transactor over the shared SqlClient; a nested call never retries on its own (the outermost does). */
export const SqlTransactorLive: Layer.Layer<Transactor, never, SqlClient.SqlClient> = Layer.effect(
  Transactor,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return {
      withTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) =>
        Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (outer) =>
          outer._tag === "Some" ? sql.withTransaction(effect) : retryTransient(committing(sql, effect))
        )
    }
  })
)
