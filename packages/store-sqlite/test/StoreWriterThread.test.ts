import { expect, layer } from "@effect/vitest"
import { AccessStore, newId, StoreWriterThread, WebhookStore } from "@issuing/core"
import { PORT_CONTRACTS } from "@issuing/core/testing"
import * as SqliteStore from "@issuing/store-sqlite"
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, inject } from "vitest"

// The delivery worker's claims, renewals and recordings, and the rate limiter's leases, run on the
// writer thread of a file database (docs/webhooks.md#the-workers-writes-off-the-event-loop,
// docs/decisions.md#sqlite-the-writer-threads-page-reads), and the same statements on the main
// connection where there is no thread. The store contract (contract.test.ts) runs the thread's way;
// here the webhook and access ports' contracts run again with the thread turned off.

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "issuing-webhook-thread-"))
let files = 0
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const fileStore = (writerThread: boolean) => {
  files += 1
  const filename = path.join(dir, `webhooks-${files}.db`)
  fs.copyFileSync(inject("sqliteTemplateFile"), filename)
  return SqliteStore.layer({ filename, writerThread })
}

// Each store in a layer of its own, as the contracts below are (stores built inside a test's
// effect met the services of one built before them when this file shared its fork's module graph).
for (const writerThread of [true, false]) {
  const where = writerThread ? "with the writer thread of a file" : "without a writer thread"
  layer(fileStore(writerThread), { excludeTestServices: true })(`the webhook worker's writes on SQLite ${where}`, (it) => {
    it.effect(`record a batch ${writerThread ? "in a transaction of its own on the thread" : "in the caller's transaction"}`, () =>
      Effect.map(WebhookStore, (store) => expect(Option.isSome(store.recordTriesAtOnce)).toBe(writerThread))
    )
  })

  layer(fileStore(writerThread), { excludeTestServices: true })(`the rate limiter's leases on SQLite ${where}`, (it) => {
    it.effect(
      writerThread
        ? "commit on the writer thread while the process writes there, else on the main connection"
        : "commit on the main connection",
      () =>
        Effect.gen(function* () {
          // The rows the main connection has changed by each swap (SQLite's total_changes()): after a
          // job of the thread, then after a write of the main connection.
          const access = yield* AccessStore
          const sql = yield* SqlClient.SqlClient
          const thread = yield* Effect.serviceOption(StoreWriterThread)
          const changedOnMain = Effect.map(sql`SELECT total_changes() AS n`, (rows) => Number(rows[0]!.n))
          const key = newId()
          const initial = { tokens: 200, refilledAtMs: 1_736_000_000_000, fullAtMs: 1_736_000_000_000 }
          const leased = { tokens: 180.5, refilledAtMs: 1_736_000_000_100, fullAtMs: 1_736_000_000_000 }
          const next = { tokens: 160.25, refilledAtMs: 1_736_000_000_200, fullAtMs: 1_736_000_000_000 }
          yield* access.lockRateBucket(key, initial)
          // The thread's job last (as a batch's or a webhook claim's would be).
          if (Option.isSome(thread))
            yield* thread.value.transaction([["UPDATE issuing_rate_buckets SET tokens = tokens WHERE api_key_id = ?", [key]]])
          const before = yield* changedOnMain
          expect(yield* access.swapRateBucket(key, initial, leased)).toBe(true)
          const afterThreadJob = (yield* changedOnMain) - before
          // Landed, and read back by the main connection (a write of its own: the upsert's no-op update).
          expect(yield* access.lockRateBucket(key, initial)).toEqual(leased)
          const beforeSecond = yield* changedOnMain
          expect(yield* access.swapRateBucket(key, leased, next)).toBe(true)
          const afterMainWrite = (yield* changedOnMain) - beforeSecond
          // A stale swap writes nothing.
          expect(yield* access.swapRateBucket(key, leased, { ...next, tokens: 1 })).toBe(false)
          expect(yield* access.lockRateBucket(key, initial)).toEqual(next)
          expect([afterThreadJob, afterMainWrite]).toEqual(writerThread ? [0, 1] : [1, 1])
        })
    )
  })
}

PORT_CONTRACTS.access!("access on the main connection (no writer thread)", fileStore(false))
PORT_CONTRACTS.webhooks!("webhooks on the main connection (no writer thread)", fileStore(false))
