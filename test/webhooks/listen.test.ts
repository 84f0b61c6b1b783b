import { Events, runDeliveryWorker } from "@issuing/core"
import { Effect, Fiber } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import pg from "pg"
import { type ServedPlatform, servePlatform, startPlatform, type TestPlatform } from "../support/platform.js"
import { type Receiver, startReceiver } from "./receiver.js"

// A worker in another instance than the API's learns of new deliveries only from PostgreSQL
// (LISTEN/NOTIFY): its fallback poll is set to ten minutes, so every delivery below that arrives
// was woken by a notification.
describe("LISTEN wake-ups on postgres", () => {
  let platform: TestPlatform
  let receiver: Receiver
  let workerPlatform: ServedPlatform
  let worker: Fiber.RuntimeFiber<never, unknown>

  beforeAll(async () => {
    platform = await startPlatform("postgres")
    receiver = await startReceiver()
    workerPlatform = await servePlatform(platform.database)
    worker = workerPlatform.instance.runtime.runFork(runDeliveryWorker({ pollIntervalMs: 600_000 }))
  })
  afterAll(async () => {
    if (worker) await workerPlatform.instance.runtime.runPromise(Fiber.interrupt(worker))
    await workerPlatform?.close()
    await receiver?.close()
    await platform?.close()
  })

  const emit = () =>
    platform.instance.runtime.runPromise(
      Effect.flatMap(Events, (events) => events.emit(platform.org.program_id, "wallet.created", { id: crypto.randomUUID() }))
    )

  it("keeps waking the worker after the server drops its listening connection", async () => {
    const created = await platform.request("POST", "/v1/webhook-subscriptions", {
      body: { url: receiver.url, event_types: ["wallet.created"] }
    })
    expect(created.status, created.text).toBe(200)

    const first = await emit()
    await receiver.waitFor((all) => all.some((r) => r.id === first.id))

    // Drop the listening connection from the server side, as a restart or failover would.
    const admin = new pg.Client({ connectionString: platform.database.url })
    await admin.connect()
    try {
      const terminated = await admin.query(
        "SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE query LIKE 'LISTEN %' AND datname = current_database()"
      )
      expect(terminated.rows.length).toBeGreaterThan(0)
      // Queued while nobody listens: claimed when the listener reconnects.
      const during = await emit()
      await receiver.waitFor((all) => all.some((r) => r.id === during.id))
      // And notifications flow again on the new connection.
      const after = await emit()
      await receiver.waitFor((all) => all.some((r) => r.id === after.id))
      const listening = await admin.query(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE 'LISTEN %' AND datname = current_database()"
      )
      expect(listening.rows[0].n).toBeGreaterThan(0)
    } finally {
      await admin.end()
    }
  })
})
