import { Events, newId, runDeliveryWorker, Transactor, WebhookStore } from "@issuing/core"
import { Effect, Fiber } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { type ServedPlatform, servePlatform, startPlatform, type TestPlatform } from "../support/platform.js"
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

// PostgreSQL announces a commit that queued deliveries to the other nodes with a NOTIFY sent after
// it (docs/webhooks.md#wake-ups-on-postgresql). Node A below runs no worker; node B's worker never
// polls: each delivery reaches B's receiver only because B heard of its commit.
describe("wake-ups from another node on postgres", () => {
  let a: TestPlatform
  let b: ServedPlatform
  let receiver: Receiver
  let worker: Fiber.RuntimeFiber<never, unknown> | undefined

  beforeAll(async () => {
    a = await startPlatform("postgres")
    b = await servePlatform(a.database)
    receiver = await startReceiver()
    const created = await a.request("POST", "/v1/webhook-subscriptions", {
      body: { url: receiver.url, event_types: ["wallet.created", "transfer.created"] }
    })
    expect(created.status, created.text).toBe(200)
    let emptyClaims = 0
    worker = b.instance.runtime.runFork(
      runDeliveryWorker({ pollIntervalMs: NO_POLL_MS, onClaim: (count) => void (count === 0 && emptyClaims++) })
    )
    // Its first claim, and the one its listening connection rings when it connects.
    while (emptyClaims < 2) await new Promise((resolve) => setTimeout(resolve, 10))
  })
  afterAll(async () => {
    if (worker) await b.instance.runtime.runPromise(Fiber.interrupt(worker))
    await receiver?.close()
    await b?.close()
    await a?.close()
  })

  const runOnA = <X, E>(effect: Effect.Effect<X, E, any>) => a.instance.runtime.runPromise(effect as Effect.Effect<X, E, never>)
  const delivered = (eventId: string) => receiver.waitFor((all) => all.some((r) => r.id === eventId), 20_000)
  const eventsOf = async (type: string) => (await a.request("GET", `/v1/events?type=${type}&page_size=100`)).body.data as Array<any>

  it("from a lone emit, an idempotent request's transaction, a transfer and a batch", async () => {
    const lone = await runOnA(Effect.flatMap(Events, (events) => events.emit(a.org.program_id, "wallet.created", { id: newId() })))
    await delivered(lone.id)

    const wallet = await a.request("POST", "/v1/wallets", {
      body: { holder: { name: "Ada", email: "ada@example.com" } },
      idempotencyKey: newId()
    })
    expect(wallet.status, wallet.text).toBe(200)
    const [walletEvent] = (await eventsOf("wallet.created")).filter((e) => e.data.object.id === wallet.body.id)
    await delivered(walletEvent.id)

    const funded = await a.request("POST", "/v1/transfers", {
      body: { paymentRail: "fednow_instant", amount: 500, currency: "USD", to_financial_account_id: wallet.body.financial_account_id }
    })
    expect(funded.status, funded.text).toBe(200)
    const other = await a.request("POST", "/v1/wallets", { body: { holder: { name: "Bob", email: "bob@example.com" } } })
    const book = { paymentRail: "book", amount: 5, currency: "USD", from_financial_account_id: wallet.body.financial_account_id }
    const batch = await a.request("POST", "/v1/transfers/batch", {
      body: { transfers: [{ ...book, to_financial_account_id: other.body.financial_account_id }] }
    })
    expect(batch.status, batch.text).toBe(200)
    const transferEvents = await eventsOf("transfer.created")
    for (const id of [funded.body.id, batch.body.data[0].id]) {
      const event = transferEvents.find((e) => e.data.object.id === id)
      expect(event, id).toBeDefined()
      await delivered(event.id)
    }
  })

  it("only once the transaction that queued the delivery has committed", async () => {
    // Announced before the commit, B's claim would find nothing and B would wait for its poll.
    const event = await runOnA(
      Effect.flatMap(Transactor, (transactor) =>
        transactor.withTransaction(
          Effect.flatMap(Events, (events) => events.emit(a.org.program_id, "wallet.created", { id: newId() })).pipe(
            Effect.tap(() => Effect.sleep("300 millis"))
          )
        )
      )
    )
    await delivered(event.id)
  })
})
