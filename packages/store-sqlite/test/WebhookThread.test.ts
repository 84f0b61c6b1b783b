import { describe, expect, it } from "@effect/vitest"
import { WebhookStore } from "@issuing/core"
import { PORT_CONTRACTS } from "@issuing/core/testing"
import * as SqliteStore from "@issuing/store-sqlite"
import { Effect, Option } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, inject } from "vitest"

// The delivery worker's claims, renewals and recordings run on the writer thread of a file
// database (docs/webhooks.md#the-workers-writes-off-the-event-loop), and the same statements on the
// main connection where there is no thread. The store contract (contract.test.ts) runs the thread's
// way; here the webhook port's contract runs again with the thread turned off.

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "issuing-webhook-thread-"))
let files = 0
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const fileStore = (writerThread: boolean) => {
  files += 1
  const filename = path.join(dir, `webhooks-${files}.db`)
  fs.copyFileSync(inject("sqliteTemplateFile"), filename)
  return SqliteStore.layer({ filename, writerThread })
}

describe("the webhook worker's writes on SQLite", () => {
  it.effect("record a batch in a transaction of its own on the writer thread of a file, and in the caller's without one", () =>
    Effect.gen(function* () {
      const recordsAtOnce = (writerThread: boolean) =>
        Effect.scoped(
          Effect.provide(
            Effect.map(WebhookStore, (store) => Option.isSome(store.recordTriesAtOnce)),
            fileStore(writerThread)
          )
        )
      expect(yield* recordsAtOnce(true)).toBe(true)
      expect(yield* recordsAtOnce(false)).toBe(false)
    })
  )
})

PORT_CONTRACTS.webhooks!("webhooks on the main connection (no writer thread)", fileStore(false))
