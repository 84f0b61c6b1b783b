import { Events, newId, runDeliveryWorker, WebhookStore } from "@issuing/core"
import { Effect, Fiber } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { startPlatform, type TestPlatform } from "../support/platform.js"
import { type Receiver, startReceiver } from "./receiver.js"

// The worker's fallback poll is set to ten minutes: a delivery below arrives only because the
// worker learned, without polling, that it was due (its claim's next-due time, a wake-up).
const NO_POLL_MS = 600_000

describe.each(STORE_KINDS)("worker wake-ups on %s", (kind) => {
  let platform: TestPlatform
  let receiver: Receiver
  let worker: Fiber.RuntimeFiber<never, unknown> | undefined

  beforeAll(async () => {
    platform = await startPlatform(kind, { webhookRetryScheduleMs: [300] })
    receiver = await startReceiver()
    const created = await platform.request("POST", "/v1/webhook-subscriptions", {
      body: { url: receiver.url, event_types: ["wallet.created"] }
    })
    expect(created.status, created.text).toBe(200)
  })
  afterAll(async () => {
    if (worker) await platform.instance.runtime.runPromise(Fiber.interrupt(worker))
    await receiver?.close()
    await platform?.close()
  })

  const run = <A, E>(effect: Effect.Effect<A, E, any>) => platform.instance.runtime.runPromise(effect as Effect.Effect<A, E, never>)
  const emit = () => run(Effect.flatMap(Events, (events) => events.emit(platform.org.program_id, "wallet.created", { id: newId() })))

  it("takes deliveries another holder hands back at once (a stopping worker's), without waiting for a poll", async () => {
    // Queued and claimed by another holder before this worker starts: the worker finds nothing due.
    const event = await emit()
    const holder = newId()
    const farIso = new Date(Date.now() + NO_POLL_MS).toISOString()
    const held = await run(Effect.flatMap(WebhookStore, (store) => store.claimDue(holder, new Date().toISOString(), farIso, 10)))
    expect(held.map((delivery) => delivery.event_id)).toEqual([event.id])
    // Released only once the worker waits: after its first empty claim, and on PostgreSQL after the
    // one its listening connection rings when it connects.
    let emptyClaims = 0
    const onClaim = (count: number) => {
      if (count === 0) emptyClaims++
    }
    worker = platform.instance.runtime.runFork(runDeliveryWorker({ pollIntervalMs: NO_POLL_MS, onClaim }))
    while (emptyClaims < (kind === "postgres" ? 2 : 1)) await new Promise((resolve) => setTimeout(resolve, 10))

    await run(Effect.flatMap(WebhookStore, (store) => store.releaseClaims(holder, new Date().toISOString(), [])))
    await receiver.waitFor((all) => all.some((r) => r.id === event.id), 20_000)
  })

  it("sends a retry when it comes due, learned from the claim, without a poll", async () => {
    let answered = 0
    receiver.reply = () => (answered++ === 0 ? { status: 500, body: "once" } : { status: 200, body: "ok" })
    const event = await emit()
    await receiver.waitFor((all) => all.filter((r) => r.id === event.id).length === 2, 20_000)
    receiver.reply = () => ({ status: 200, body: "ok" })
  })
})
