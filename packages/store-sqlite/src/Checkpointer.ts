import { Effect } from "effect"
import { createRequire } from "node:module"
import { Worker } from "node:worker_threads"

/**
 * The checkpointer thread (docs/architecture.md#the-sqlite-checkpointer): a connection of its own,
 * in a worker thread, that copies the WAL's committed pages into the database file every
 * `intervalMs` — a PASSIVE checkpoint, which never waits for and never blocks a writer or a reader.
 *
 * Without it the connection whose commit takes the WAL past `wal_autocheckpoint` pages runs the
 * checkpoint inside that commit: the writer thread under a batch, the main thread under single
 * writes. On a large database every commit dirties pages all over the indexes ordered by amount,
 * so each checkpoint copies (and fsyncs) more of them, and the writes slowed with the size of the
 * table. Here the copy runs beside the writers, on an otherwise idle core; the writers' own
 * `wal_autocheckpoint` stays as a backstop, at a size the checkpointer keeps the WAL below.
 */
/**
 * The writers' own `wal_autocheckpoint`: a commit that takes the WAL past 16,000 pages (64 MB)
 * checkpoints it itself, should the checkpointer fall behind (a long read holding old pages).
 */
export const BACKSTOP_CHECKPOINT_PAGES = 16_000

/** How often the checkpointer copies the WAL into the database. */
export const CHECKPOINT_INTERVAL_MS = 100

export interface CheckpointerOptions {
  readonly filename: string
  readonly synchronous: "FULL" | "NORMAL"
  readonly intervalMs: number
}

/**
 * The worker's code (CommonJS, evaluated by `new Worker(…, { eval: true })`, as the writer
 * thread's). A checkpoint that finds another one running (SQLITE_BUSY, another node's or a
 * writer's backstop) is skipped: the next tick runs it.
 */
const checkpointerMain = (data: { driver: string; filename: string; synchronous: string; intervalMs: number }) => {
  const { parentPort } = require("node:worker_threads")
  const Database = require(data.driver)
  const db = new Database(data.filename)
  // The checkpoint syncs the database file as the writers' connections would (FULL and NORMAL both do).
  db.pragma(`synchronous = ${data.synchronous}`)
  db.pragma("busy_timeout = 0")
  const checkpoint = db.prepare("PRAGMA wal_checkpoint(PASSIVE)")
  const timer = setInterval(() => {
    try {
      checkpoint.run()
    } catch {
      // Busy or the file went away: the next tick tries again.
    }
  }, data.intervalMs)
  parentPort.on("message", (message: string) => {
    if (message !== "stop") return
    clearInterval(timer)
    db.close()
    parentPort.close()
  })
}

/** Starts the checkpointer thread of a file database; the returned effect stops it. */
export const startCheckpointer = (options: CheckpointerOptions): Effect.Effect<void> => {
  const driver = createRequire(import.meta.url).resolve("better-sqlite3")
  const thread = new Worker(`(${checkpointerMain})(require("node:worker_threads").workerData)`, {
    eval: true,
    execArgv: [],
    workerData: { driver, filename: options.filename, synchronous: options.synchronous, intervalMs: options.intervalMs }
  })
  // It must not keep the process alive on its own.
  thread.unref()
  // A thread that fails (it should not) leaves the writers' backstop checkpoints in place.
  thread.on("error", () => {})
  let exited = false
  thread.once("exit", () => {
    exited = true
  })
  return Effect.promise(
    () =>
      new Promise<void>((resolve) => {
        if (exited) return resolve()
        thread.once("exit", () => resolve())
        thread.postMessage("stop")
        // A thread that does not stop within a second is terminated.
        setTimeout(() => void thread.terminate(), 1000).unref()
      })
  )
}
