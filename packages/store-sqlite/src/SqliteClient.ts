import * as Reactivity from "@effect/experimental/Reactivity"
import { SyncSql, type SyncConnection, type SyncStatement } from "./SyncSql.js"
import * as Client from "@effect/sql/SqlClient"
import type { Connection } from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import * as Statement from "@effect/sql/Statement"
import Sqlite from "better-sqlite3"
import { makeWriteGate } from "./WriteGate.js"
import { makeWriterThread, type WriterJob, type WriterResult } from "./WriterThread.js"
import { Context, Duration, Effect, Layer, Schedule, Scope, Stream } from "effect"
import { sqlErrorCode } from "@issuing/core"

/**
 * A SqlClient over better-sqlite3 for the platform's needs, which @effect/sql-sqlite-node 0.53
 * does not meet: writes begin with `BEGIN IMMEDIATE` (so two processes on one file never deadlock
 * upgrading a read lock, and a write transaction's reads see the state it will commit over),
 * a busy timeout so other processes' writers are waited for, foreign keys on, and durable commits
 * (`synchronous = FULL` in WAL mode). Booleans bind as 1/0 so repository SQL is shared with
 * PostgreSQL. One connection serves the process, a semaphore serializing its transactions; batches
 * of transfers are written by a second one on a worker thread (WriterThread.ts,
 * docs/architecture.md#the-sqlite-writer-thread), every write transaction holding the write gate.
 */
export interface SqliteOptions {
  /** A file path, or `:memory:`. */
  readonly filename: string
  /** How long to wait for another process's write lock, in milliseconds. */
  readonly busyTimeoutMs?: number | undefined
  /** `FULL` (default) survives power loss; `NORMAL` survives process crashes only. */
  readonly synchronous?: "FULL" | "NORMAL" | undefined
  /**
   * Batches of new transfers written by a second connection in a worker thread (default true for
   * a file; never for `:memory:`), so the main thread serves requests while SQLite writes
   * (docs/architecture.md#the-sqlite-writer-thread).
   */
  readonly writerThread?: boolean | undefined
}

/** The minimal surface of the underlying better-sqlite3 database exposed to other packages. */
export interface SqliteHandle {
  readonly exec: (source: string) => unknown
  readonly pragma: (source: string) => unknown
  readonly prepare: (source: string) => {
    readonly run: (...params: ReadonlyArray<unknown>) => unknown
    readonly all: (...params: ReadonlyArray<unknown>) => Array<unknown>
    readonly get: (...params: ReadonlyArray<unknown>) => unknown
  }
  readonly transaction: <F extends (...args: Array<any>) => unknown>(fn: F) => F & { immediate: F }
}

/** The underlying database, for the rare caller that must reach it (backups, benchmarks). */
export const SqliteDatabase = Context.GenericTag<SqliteHandle>("@issuing/store-sqlite/SqliteDatabase")

/**
 * The writer thread of a file database (WriterThread.ts), and the process's write gate: the one
 * permit every write transaction of this process holds, on the main connection or the thread's,
 * so the two never wait for each other's SQLite lock.
 */
export interface SqliteWriterService {
  /** False for `:memory:` or when turned off (`writerThread: false`): writes stay on the main connection. */
  readonly available: boolean
  /**
   * Runs `effect` holding the write gate: no write transaction of this process on the main
   * connection runs meanwhile. Fails with SQLITE_BUSY_TIMEOUT when the gate is not had within the
   * busy timeout. `urgent`: while it waits, a holder that checks `othersWaiting` (the batch lane)
   * lets the gate go soon, as for a write transaction of the main connection.
   */
  readonly withGate: <A, E>(effect: Effect.Effect<A, E>, options?: { readonly urgent?: boolean }) => Effect.Effect<A, E | SqlError>
  /** True while a write transaction of the main connection waits for the gate: a holder should let it go soon. */
  readonly othersWaiting: () => boolean
  /**
   * Sends a job to the thread (the caller holds the gate until its answer); the thread runs jobs
   * in the order sent. Yields the wait for its answer (a lock wait past the busy timeout fails
   * with SQLITE_BUSY_TIMEOUT).
   */
  readonly send: (job: WriterJobPlan) => Effect.Effect<Effect.Effect<WriterResult, SqlError>>
  /**
   * True when the process's last write was a job of the thread: the main connection has changed no
   * row since the last job was sent. A short write that may commit on either connection commits
   * where the others do, so that it drops neither connection's page cache needlessly (SQLite drops
   * a connection's cache whenever another one has written; docs/decisions.md#sqlite-the-writer-threads-page-reads).
   */
  readonly lastWriteOnThread: () => boolean
}

/** A writer job without its lock wait, which the client sets from what is left of the busy timeout. */
export type WriterJobPlan = Omit<WriterJob, "busyTimeoutMs">

export const SqliteWriter = Context.GenericTag<SqliteWriterService>("@issuing/store-sqlite/SqliteWriter")

/** How long to wait for another process's write lock when the options do not say. */
const DEFAULT_BUSY_TIMEOUT_MS = 5000

/** Entries of the prepared-statement cache: hot SQL is prepared once, and the cache stays bounded. */
const MAX_CACHED_STATEMENTS = 500

const bindable = (value: unknown): unknown =>
  typeof value === "boolean" ? (value ? 1 : 0) : value instanceof Date ? value.toISOString() : value

const toSqlError = (cause: unknown, message: string) => new SqlError({ cause, message })

/** SQLITE_BUSY and its extended codes: another connection holds the lock. */
const isBusy = (error: SqlError): boolean => sqlErrorCode(error)?.startsWith("SQLITE_BUSY") === true

/** The write lock was not free within the busy timeout: SQLite's own code for it, not retried by the Transactor. */
const lockWaitTimedOut = (error: SqlError, busyTimeoutMs: number): SqlError =>
  new SqlError({
    cause: Object.assign(new Error(`The write lock was not free within the busy timeout (${busyTimeoutMs} ms)`), {
      code: "SQLITE_BUSY_TIMEOUT",
      cause: error.cause
    }),
    message: "Timed out waiting for the database's write lock"
  })

/**
 * The client's begin statement: a marker, not SQL. The transaction acquirer runs `BEGIN IMMEDIATE`
 * itself, under its lock wait (`makeTransactionAcquirer`), so when the client then "begins" the
 * transaction on the connection it acquired, the connection answers this without running anything.
 */
const BEGUN_BY_ACQUIRER = "-- BEGIN IMMEDIATE, run by the transaction acquirer"

/** Restores the interruptibility of the caller of an `uninterruptibleMask`. */
type Restore = <X, E, R>(effect: Effect.Effect<X, E, R>) => Effect.Effect<X, E, R>

/** Opens the file with the platform's settings; the database closes with the scope. */
const openDatabase = (options: SqliteOptions) =>
  Effect.gen(function* () {
    const db = new Sqlite(options.filename)
    yield* Effect.addFinalizer(() => Effect.sync(() => db.close()))
    if (options.filename !== ":memory:") db.pragma("journal_mode = WAL")
    db.pragma(`synchronous = ${options.synchronous ?? "FULL"}`)
    // Another connection's write lock is waited for asynchronously (`awaitingLock` below), never with
    // SQLite's own busy handler: that sleeps inside the synchronous driver, stalling the process's
    // event loop for up to the whole timeout, and when the lock holder is another connection of the
    // SAME process (two instances in one host app) it can never finish meanwhile.
    db.pragma("busy_timeout = 0")
    db.pragma("foreign_keys = ON")
    // Savepoint sub-journals (one per group-commit unit) and temp b-trees stay in memory instead of
    // temporary files: they are never durable anyway (measured: 20–40 µs less per batched transfer).
    db.pragma("temp_store = MEMORY")
    // A checkpoint every 4,000 WAL pages (16 MB) instead of SQLite's 1,000: the pages every commit
    // rewrites (the last leaf of each index, the balance rows) are copied into the database once
    // per checkpoint, so fewer checkpoints copy less (measured: batches of 100 at 6,270 → 7,134
    // transfers/s, docs/ledger.md#batches). WAL mode only; any connection may run the checkpoint.
    db.pragma("wal_autocheckpoint = 4000")
    return db
  })

/** The database's prepared statements, cached: better-sqlite3 statements are cheap to keep. */
const makeStatementCache = (db: Sqlite.Database) => {
  const statements = new Map<string, Sqlite.Statement>()
  return (sql: string): Sqlite.Statement => {
    let statement = statements.get(sql)
    if (statement === undefined) {
      statement = db.prepare(sql)
      if (statements.size >= MAX_CACHED_STATEMENTS) statements.delete(statements.keys().next().value!)
      statements.set(sql, statement)
    }
    return statement
  }
}

/**
 * Retries a statement that found the write lock taken, up to the busy timeout, without blocking.
 * Only outside a transaction (BEGIN IMMEDIATE itself, or a write in autocommit): inside one the
 * lock is already ours, and a statement there never ran half-way. When the timeout is spent the
 * failure is SQLITE_BUSY_TIMEOUT, which the Transactor does not retry: its retries of
 * SQLITE_BUSY would each wait the whole timeout again, holding a request up to eight timeouts
 * (40 s) behind another process's lock instead of answering 500 after one (found by the fault
 * suite, test/faults/database.test.ts).
 */
const makeAwaitingLock = (db: Sqlite.Database, busyTimeoutMs: number) => {
  const lockWait = Schedule.exponential("1 millis", 2).pipe(
    Schedule.union(Schedule.spaced("25 millis")),
    Schedule.jittered,
    Schedule.upTo(Duration.millis(busyTimeoutMs))
  )
  const waitsForLock = (error: SqlError) => isBusy(error) && !db.inTransaction
  // The retry (its schedule's driver, built by every `Effect.retry` call) is set up only once a
  // statement found the lock taken (it tries once more at once, then on the schedule): every
  // statement paid for it before, the rare busy one needs it.
  return <A>(effect: Effect.Effect<A, SqlError>): Effect.Effect<A, SqlError> =>
    Effect.catchIf(effect, waitsForLock, () =>
      Effect.retry(effect, { schedule: lockWait, while: waitsForLock }).pipe(
        Effect.mapError((error) => (waitsForLock(error) ? lockWaitTimedOut(error, busyTimeoutMs) : error))
      )
    )
}

/** The SqlClient's connection over the database: booleans and dates bound, statements prepared once, busy writes waited for. */
const makeConnection = (db: Sqlite.Database, prepare: (sql: string) => Sqlite.Statement, busyTimeoutMs: number): Connection => {
  const awaitingLock = makeAwaitingLock(db, busyTimeoutMs)
  const run = (sql: string, params: ReadonlyArray<unknown>, raw: boolean): Effect.Effect<ReadonlyArray<any>, SqlError> =>
    awaitingLock(
      Effect.suspend(() => {
        try {
          const statement = prepare(sql)
          const bound = params.map(bindable)
          if (statement.reader) return Effect.succeed(statement.all(...bound) as ReadonlyArray<any>)
          const result = statement.run(...bound)
          return Effect.succeed(raw ? (result as unknown as ReadonlyArray<any>) : [])
        } catch (cause) {
          return Effect.fail(toSqlError(cause, "Failed to execute statement"))
        }
      })
    )
  return {
    execute: (sql, params, transformRows) => (transformRows ? Effect.map(run(sql, params, false), transformRows) : run(sql, params, false)),
    executeRaw: (sql, params) => run(sql, params, true),
    executeValues: (sql, params) =>
      Effect.try({
        try: () => {
          const statement = db.prepare(sql)
          const bound = params.map(bindable)
          if (statement.reader) return statement.raw(true).all(...bound) as ReadonlyArray<ReadonlyArray<unknown>>
          statement.run(...bound)
          return []
        },
        catch: (cause) => toSqlError(cause, "Failed to execute statement")
      }),
    // BEGIN IMMEDIATE, SAVEPOINT, COMMIT… come through here on every transaction: prepared once.
    executeUnprepared: (sql, params, transformRows) =>
      awaitingLock(
        Effect.try({
          try: () => {
            // A BEGIN that never took the lock leaves nothing to roll back: keep its SQLITE_BUSY (which
            // the Transactor retries) instead of masking it with "no transaction is active".
            if (sql === "ROLLBACK" && !db.inTransaction) return []
            if (sql === BEGUN_BY_ACQUIRER) return []
            const statement = prepare(sql)
            const bound = (params ?? []).map(bindable)
            if (!statement.reader) statement.run(...bound)
            const rows = statement.reader ? (statement.all(...bound) as ReadonlyArray<any>) : []
            return transformRows ? transformRows(rows) : rows
          },
          catch: (cause) => toSqlError(cause, "Failed to execute statement")
        })
      ),
    executeStream: () => Stream.dieMessage("executeStream is not supported by the SQLite store")
  }
}

/** What the parts of the client share: the database, its one connection's permit, and the process's write gate. */
interface Shared {
  readonly db: Sqlite.Database
  readonly prepare: (sql: string) => Sqlite.Statement
  readonly busyTimeoutMs: number
  /** One permit: the main connection, one statement or transaction at a time. */
  readonly semaphore: Effect.Semaphore
  /**
   * Taken before the connection's permit (never the other way), held for a write transaction's
   * whole life: see SqliteWriterService.
   */
  readonly gate: ReturnType<typeof makeWriteGate<SqlError>>
}

/**
 * Takes the one connection and runs `once` (a step that takes the write lock: BEGIN IMMEDIATE,
 * or a whole synchronous transaction) under its permit. While another connection holds the
 * lock, the permit is let go between tries: holding it through the wait kept every other
 * statement of this process — reads included — queued behind it, each then waiting its own
 * whole timeout in turn (requests hung for tens of seconds behind another process's lock;
 * found by the fault suite, test/faults/database.test.ts). Succeeds holding the permit when
 * `keepPermit`; fails with SQLITE_BUSY_TIMEOUT once the busy timeout is spent.
 */
const underWriteLock = <A>({ busyTimeoutMs, semaphore }: Shared, once: () => A, keepPermit: boolean, restore: Restore, deadline: number) =>
  Effect.gen(function* () {
    for (let waitMs = 1; ; waitMs = Math.min(waitMs * 2, 25)) {
      yield* restore(semaphore.take(1))
      let failure: SqlError
      try {
        const result = once()
        if (!keepPermit) yield* semaphore.release(1)
        return result
      } catch (cause) {
        failure = toSqlError(cause, "Failed to execute statement")
      }
      yield* semaphore.release(1)
      if (!isBusy(failure)) return yield* Effect.fail(failure)
      const leftMs = deadline - Date.now()
      if (leftMs <= 0) return yield* Effect.fail(lockWaitTimedOut(failure, busyTimeoutMs))
      yield* restore(Effect.sleep(Math.min(leftMs, waitMs * (0.5 + Math.random()))))
    }
  })

/** `effect` holding the write gate (taken by `deadline`), released when it ends; `writer`: a write transaction of the main connection. */
const gated = <A, E>(
  { gate }: Shared,
  deadline: number,
  restore: Restore,
  effect: Effect.Effect<A, E>,
  writer = true
): Effect.Effect<A, E | SqlError> => Effect.zipRight(restore(gate.take(deadline, writer)), Effect.ensuring(effect, gate.release))

/**
 * The SqlClient's transaction acquirer: the write gate, then the connection's permit with
 * `BEGIN IMMEDIATE` run under the lock wait (`underWriteLock`); the client's own begin statement,
 * which follows, is BEGUN_BY_ACQUIRER. Both are held until the transaction's scope closes.
 */
const makeTransactionAcquirer = (shared: Shared, connection: Connection) =>
  Effect.uninterruptibleMask((restore) =>
    Effect.gen(function* () {
      const { db, gate, prepare, semaphore } = shared
      const deadline = Date.now() + shared.busyTimeoutMs
      yield* restore(gate.take(deadline, true))
      yield* Effect.onError(
        underWriteLock(shared, () => prepare("BEGIN IMMEDIATE").run(), true, restore, deadline),
        () => gate.release
      )
      const scope = yield* Effect.scope
      yield* Scope.addFinalizer(
        scope,
        Effect.zipRight(
          // Never hand the connection on inside a transaction nobody will finish (an acquisition
          // interrupted before its statements, a COMMIT that failed).
          Effect.sync(() => {
            if (db.inTransaction) db.exec("ROLLBACK")
          }),
          Effect.zipRight(semaphore.release(1), gate.release)
        )
      )
      return connection
    })
  )

/**
 * SyncSql: one synchronous call on this same connection. better-sqlite3 runs a nested
 * transaction function as SAVEPOINT … RELEASE (ROLLBACK TO on a throw), and an outermost one
 * as BEGIN IMMEDIATE … COMMIT, natively: no Effect overhead per statement.
 */
const makeSyncSql = (shared: Shared) => {
  const { db, prepare, semaphore } = shared
  const syncConnection: SyncConnection = { prepare: (sql) => prepare(sql) as unknown as SyncStatement }
  const atomically = db.transaction((f: (connection: SyncConnection) => unknown) => f(syncConnection))
  const attempt = <A>(body: () => A) => Effect.try({ try: body, catch: (cause) => toSqlError(cause, "Failed to execute statement") })
  return SyncSql.of({
    read: (f) => semaphore.withPermits(1)(attempt(() => f(syncConnection))),
    run: <A>(f: (connection: SyncConnection) => A) =>
      Effect.flatMap(Effect.serviceOption(Client.TransactionConnection), (outer) =>
        outer._tag === "Some"
          ? // The caller's transaction holds the one connection: run inside it, in a savepoint.
            // (If SQLite already rolled that transaction back on an earlier error, refuse rather
            // than let better-sqlite3 commit this call on its own.)
            attempt(() => {
              if (!db.inTransaction) throw new Error("The enclosing transaction is no longer active")
              return atomically(f) as A
            })
          : // Otherwise wait for the connection like any statement, and be a transaction of its own.
            Effect.uninterruptibleMask((restore) => {
              const deadline = Date.now() + shared.busyTimeoutMs
              return gated(
                shared,
                deadline,
                restore,
                underWriteLock(shared, () => atomically.immediate(f) as A, false, restore, deadline)
              )
            })
      )
  })
}

/** The writer thread of a file database (none for `:memory:` or when turned off), stopped with the scope. */
const makeWriter = (shared: Shared, options: SqliteOptions) =>
  Effect.gen(function* () {
    const { busyTimeoutMs, gate } = shared
    const useThread = options.filename !== ":memory:" && options.writerThread !== false
    const thread = useThread ? makeWriterThread({ filename: options.filename, synchronous: options.synchronous ?? "FULL" }) : undefined
    if (thread !== undefined) yield* Effect.addFinalizer(() => thread.close)
    // The rows the main connection has changed since it opened, as of the last job sent.
    const changedOnMain = shared.db.prepare("SELECT total_changes()").pluck()
    let changedOnMainAtSend = -1
    return SqliteWriter.of({
      available: thread !== undefined,
      withGate: (effect, gateOptions) =>
        Effect.uninterruptibleMask((restore) =>
          gated(shared, Date.now() + busyTimeoutMs, restore, restore(effect), gateOptions?.urgent === true)
        ),
      othersWaiting: gate.writersWaiting,
      send: (job) =>
        thread === undefined
          ? Effect.die(new Error("The SQLite writer thread is off (SqliteWriterService.available)"))
          : Effect.map(thread.send({ ...job, busyTimeoutMs }), (answer) => {
              changedOnMainAtSend = changedOnMain.get() as number
              return Effect.mapError(answer, (error) => (isBusy(error) ? lockWaitTimedOut(error, busyTimeoutMs) : error))
            }),
      lastWriteOnThread: () => thread !== undefined && changedOnMain.get() === changedOnMainAtSend
    })
  })

const make = (options: SqliteOptions) =>
  Effect.gen(function* () {
    const busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS
    const db = yield* openDatabase(options)
    const prepare = makeStatementCache(db)
    const connection = makeConnection(db, prepare, busyTimeoutMs)
    const semaphore = yield* Effect.makeSemaphore(1)
    const gate = makeWriteGate(() => lockWaitTimedOut(toSqlError({ code: "SQLITE_BUSY" }, "The write gate was busy"), busyTimeoutMs))
    const shared: Shared = { db, prepare, busyTimeoutMs, semaphore, gate }
    const client = yield* Client.make({
      acquirer: semaphore.withPermits(1)(Effect.succeed(connection)),
      compiler: Statement.makeCompilerSqlite(),
      transactionAcquirer: makeTransactionAcquirer(shared, connection),
      beginTransaction: BEGUN_BY_ACQUIRER,
      spanAttributes: [["db.system.name", "sqlite"]]
    })
    // The writer thread's finalizer runs before the database's (the scope closes in reverse order).
    return { client, db, sync: makeSyncSql(shared), writer: yield* makeWriter(shared, options) }
  })

/** SqlClient, SyncSql over the same connection, the writer thread (and the raw database) for a SQLite file. */
export const layer = (options: SqliteOptions): Layer.Layer<Client.SqlClient | SqliteHandle | SyncSql | SqliteWriterService> =>
  Layer.scopedContext(
    Effect.map(make(options), ({ client, db, sync, writer }) =>
      Context.make(Client.SqlClient, client).pipe(
        Context.add(SqliteDatabase, db as unknown as SqliteHandle),
        Context.add(SyncSql, sync),
        Context.add(SqliteWriter, writer)
      )
    )
  ).pipe(Layer.provide(Reactivity.layer))
