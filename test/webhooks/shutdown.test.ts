import { Events, runDeliveryWorker } from "@issuing/core"
import { Effect, Fiber } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { startPlatform, type TestPlatform } from "../support/platform.js"
import { type Receiver, startReceiver } from "./receiver.js"

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe.each(STORE_KINDS)("graceful worker stop on %s", (kind) => {
  let platform: TestPlatform
  let receiver: Receiver
  const workers: Array<Fiber.RuntimeFiber<never, unknown>> = []
  // A stopped worker renews a running try's claim a last time, to timeout + 4 s = 5 s after the
  // stop. The worker is stopped while its first try runs: it must be asked to stop within the
  // time-out of that try's send (1 s), however loaded the machine.
  const timeoutMs = 1000

  beforeAll(async () => {
    platform = await startPlatform(kind, { webhookTimeoutMs: timeoutMs, webhookRetryScheduleMs: [100, 100, 100] })
    receiver = await startReceiver()
  })
  afterAll(async () => {
    for (const worker of workers) await platform.instance.runtime.runPromise(Fiber.interrupt(worker))
    await receiver?.close()
    await platform?.close()
  })

  it("keeps the lease of a try still running after the wait, so no other worker sends it meanwhile; it is sent again after the lease", async () => {
    const created = await platform.request("POST", "/v1/webhook-subscriptions", {
      body: { url: receiver.url, event_types: ["wallet.created"] }
    })
    expect(created.status, created.text).toBe(200)
    // The first request is held past the stopping worker's wait (and past its own timeout);
    // the receiver counts it as open until it answers. Its arrival starts the stop at once.
    let stopping: Promise<unknown> | undefined
    receiver.reply = () => {
      if (receiver.received.length !== 1) return { status: 200, body: "ok" }
      stopping = platform.instance.runtime.runPromise(Fiber.interrupt(first))
      return { status: 200, body: "late", delayMs: 3000 }
    }

    // The wait for tries in flight (100 ms) is shorter than the delivery timeout, as a 15 s cap
    // is shorter than a configured 300 s timeout.
    const first = platform.instance.runtime.runFork(runDeliveryWorker({ shutdownGraceMs: 100, pollIntervalMs: 50 }))
    workers.push(first)
    const event = await platform.instance.runtime.runPromise(
      Effect.flatMap(Events, (events) => events.emit(platform.org.program_id, "wallet.created", { id: "w" }))
    )
    await receiver.waitFor((all) => all.length === 1)
    await stopping
    // The try was still running when the worker stopped: nothing recorded it.
    expect((await platform.request("GET", `/v1/webhook-attempts?event_id=${event.id}`)).body.total_count).toBe(0)

    // Well inside the first worker's lease: the second must not take the delivery. It has looked
    // at the queue (and found nothing due) once two of its claims came back empty — its first, and
    // one after a poll — and it has claimed nothing.
    const claims: Array<number> = []
    const second = platform.instance.runtime.runFork(runDeliveryWorker({ pollIntervalMs: 50, onClaim: (count) => claims.push(count) }))
    workers.push(second)
    const deadline = Date.now() + 20_000
    while (claims.filter((count) => count === 0).length < 2) {
      if (Date.now() > deadline) throw new Error(`The second worker never claimed: ${JSON.stringify(claims)}`)
      await sleep(10)
    }
    expect(claims.filter((count) => count > 0)).toEqual([])
    expect(receiver.received.filter((r) => r.id === event.id)).toHaveLength(1)
    expect(receiver.maxConcurrentPerId()).toBe(1)

    // At least once: the first worker never recorded its try, so the delivery comes due when the
    // lease ends and the second worker sends it.
    await receiver.waitFor((all) => all.filter((r) => r.id === event.id).length === 2, 15_000)
    expect(receiver.maxConcurrentPerId()).toBe(1)
    for (let i = 0; i < 50; i++) {
      const attempts = await platform.request("GET", `/v1/webhook-attempts?event_id=${event.id}&status=SUCCESS`)
      if (attempts.body.total_count === 1) break
      await sleep(50)
    }
    const attempts = await platform.request("GET", `/v1/webhook-attempts?event_id=${event.id}`)
    expect(attempts.body.total_count).toBe(1)
    expect(attempts.body.data[0]).toMatchObject({ status: "SUCCESS", response_body: "ok" })
  }, 60_000)
})
