import { SqlError } from "@effect/sql/SqlError"
import { Deferred, Effect } from "effect"
import { createRequire } from "node:module"
import { Worker } from "node:worker_threads"

/**
 * The writer thread (docs/architecture.md#the-sqlite-writer-thread): a second connection to the
 * same file, in a worker thread, that runs a batch's prepared statements and their COMMIT there,
 * so the process's main thread goes on serving requests meanwhile instead of spending most of a
 * batch's time inside SQLite (the native inserts and the commit were about 40% of it). A job is
 * guarded: the worker runs it only if, under its write lock, `guard` reads back exactly what the
 * main thread decided over; otherwise it writes nothing and answers `stale`.
 */
export interface WriterJob {
  /** A read under the write lock whose rows must equal `expected` (their JSON) for the job to run; none: it always runs. */
  readonly guard?: { readonly sql: string; readonly params: ReadonlyArray<unknown>; readonly expected: string } | undefined
  /** The statements, in order, in one transaction (a read, or a write with RETURNING, answers its rows). */
  readonly statements: ReadonlyArray<readonly [sql: string, params: ReadonlyArray<unknown>]>
  /** How long to wait for the write lock of another process, in milliseconds. */
  readonly busyTimeoutMs: number
}

/**
 * Committed (each statement's changed rows, and when any statement returns rows — a read, RETURNING
 * — each one's rows, `null` for the others), or not run because the guard read something else.
 */
export type WriterResult =
  | {
      readonly _tag: "Committed"
      readonly changes: ReadonlyArray<number>
      readonly rows?: ReadonlyArray<ReadonlyArray<Record<string, unknown>> | null> | undefined
    }
  | { readonly _tag: "Stale" }

export interface WriterOptions {
  readonly filename: string
  readonly synchronous: "FULL" | "NORMAL"
}

interface Reply {
  readonly id: number
  readonly changes?: ReadonlyArray<number>
  readonly rows?: ReadonlyArray<ReadonlyArray<Record<string, unknown>> | null>
  readonly stale?: true
  readonly error?: { readonly code: string | undefined; readonly message: string }
}

/**
 * The worker's code (CommonJS, evaluated by `new Worker(…, { eval: true })` so that it runs the same
 * from the compiled package and from sources). It must not reference anything outside itself, not
 * even `require`: it is handed the worker's `require` as `load`, because a bundler (esbuild, for an
 * ES module bundle) rewrites a free `require` into a helper of the bundle's own, which the worker
 * does not have — the thread then died at its first line and every job failed.
 */
const workerMain = (data: { driver: string; filename: string; synchronous: string }, load: (id: string) => any) => {
  const { parentPort } = load("node:worker_threads")
  const Database = load(data.driver)
  const db = new Database(data.filename)
  // The main connection's settings (SqliteClient.ts): durable commits, foreign keys, in-memory
  // temporary b-trees, a checkpoint every 4,000 WAL pages (run here, by the committing connection).
  db.pragma("journal_mode = WAL")
  db.pragma(`synchronous = ${data.synchronous}`)
  db.pragma("foreign_keys = ON")
  db.pragma("temp_store = MEMORY")
  db.pragma("wal_autocheckpoint = 4000")
  const statements = new Map()
  const prepare = (sql: string) => {
    let statement = statements.get(sql)
    if (statement === undefined) {
      statement = db.prepare(sql)
      if (statements.size >= 200) statements.delete(statements.keys().next().value)
      statements.set(sql, statement)
    }
    return statement
  }
  parentPort.on(
    "message",
    (job: {
      id: number
      guard?: { sql: string; params: Array<unknown>; expected: string }
      statements: Array<[string, Array<unknown>]>
      busyTimeoutMs: number
    }) => {
      try {
        // Blocking here is fine: this thread serves nothing else.
        db.pragma(`busy_timeout = ${Math.max(0, Math.floor(job.busyTimeoutMs))}`)
        prepare("BEGIN IMMEDIATE").run()
        if (job.guard !== undefined && JSON.stringify(prepare(job.guard.sql).all(...job.guard.params)) !== job.guard.expected) {
          prepare("ROLLBACK").run()
          parentPort.postMessage({ id: job.id, stale: true })
          return
        }
        let rows: Array<Array<unknown> | null> | undefined
        const changes = job.statements.map(([sql, params], i) => {
          const statement = prepare(sql)
          if (!statement.reader) return statement.run(...params).changes
          rows ??= job.statements.map(() => null)
          const read = statement.all(...params)
          rows[i] = read
          return read.length
        })
        prepare("COMMIT").run()
        parentPort.postMessage({ id: job.id, changes, rows })
      } catch (cause) {
        const error = cause as { code?: string; message?: string }
        if (db.inTransaction) db.exec("ROLLBACK")
        parentPort.postMessage({ id: job.id, error: { code: error.code, message: String(error.message) } })
      }
    }
  )
}

const stopped = (message: string) =>
  new SqlError({ cause: Object.assign(new Error(message), { code: "SQLITE_WRITER_STOPPED" }), message: "The SQLite writer thread stopped" })

/**
 * Starts writer threads on demand and runs jobs on them, one at a time in order. If the thread
 * dies (it should not), its pending jobs fail with a SqlError and the next job starts a new one.
 */
export const makeWriterThread = (options: WriterOptions) => {
  const driver = createRequire(import.meta.url).resolve("better-sqlite3")
  let worker: Worker | undefined
  let nextId = 0
  const pending = new Map<number, Deferred.Deferred<WriterResult, SqlError>>()
  const failAll = (error: SqlError) => {
    for (const done of pending.values()) Deferred.unsafeDone(done, Effect.fail(error))
    pending.clear()
  }
  const start = () => {
    const thread = new Worker(`(${workerMain})(require("node:worker_threads").workerData, require)`, {
      eval: true,
      // Not the parent's loader flags (a TypeScript loader, --input-type): the code is plain CommonJS.
      execArgv: [],
      workerData: { driver, filename: options.filename, synchronous: options.synchronous }
    })
    // Idle, it must not keep the process alive.
    thread.unref()
    thread.on("message", (reply: Reply) => {
      const done = pending.get(reply.id)
      if (done === undefined) return
      pending.delete(reply.id)
      if (pending.size === 0) thread.unref()
      if (reply.error !== undefined) {
        const cause = Object.assign(new Error(reply.error.message), { code: reply.error.code })
        Deferred.unsafeDone(done, Effect.fail(new SqlError({ cause, message: "Failed to execute statement" })))
      } else {
        Deferred.unsafeDone(
          done,
          Effect.succeed(reply.stale ? { _tag: "Stale" } : { _tag: "Committed", changes: reply.changes ?? [], rows: reply.rows })
        )
      }
    })
    const lost = (why: string) => {
      if (worker === thread) worker = undefined
      failAll(stopped(why))
    }
    thread.on("error", (error) => lost(`The SQLite writer thread failed: ${error.message}`))
    thread.on("exit", (code) => lost(`The SQLite writer thread exited (${code})`))
    return thread
  }
  return {
    /**
     * Sends one job to the thread (jobs run in the order sent); yields the wait for its answer:
     * committed, or refused by its guard. Once sent, a job runs to its end whatever its caller does.
     */
    send: (job: WriterJob): Effect.Effect<Effect.Effect<WriterResult, SqlError>> =>
      Effect.map(Deferred.make<WriterResult, SqlError>(), (done) => {
        worker ??= start()
        const id = nextId++
        pending.set(id, done)
        worker.ref()
        worker.postMessage({ id, ...job })
        return Deferred.await(done)
      }),
    /** Stops the thread (at the client's close); pending jobs fail. */
    close: Effect.promise(async () => {
      const thread = worker
      worker = undefined
      if (thread !== undefined) await thread.terminate()
    })
  }
}

export type WriterThread = ReturnType<typeof makeWriterThread>
