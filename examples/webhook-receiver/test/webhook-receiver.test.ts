import { runDeliveryWorker } from "@issuing/core"
import { Fiber } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startPlatform, type TestPlatform } from "../../../test/support/platform.js"
import { startWebhookReceiver } from "../server.js"

const waitUntil = async (condition: () => boolean, timeoutMs = 20_000) => {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("timed out")
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

// The receiver example against the real platform and its delivery worker.
describe("examples/webhook-receiver", () => {
  let platform: TestPlatform
  let worker: Fiber.RuntimeFiber<never, unknown>
  beforeAll(async () => {
    platform = await startPlatform("sqlite")
    worker = platform.instance.runtime.runFork(runDeliveryWorker())
  })
  afterAll(async () => {
    if (worker) await platform.instance.runtime.runPromise(Fiber.interrupt(worker))
    await platform?.close()
  })

  it("verifies deliveries, handles each event once, and keeps verifying through a secret rotation", async () => {
    const handled: Array<{ id: string; type: string }> = []
    // The subscription needs the receiver's URL and the receiver needs the subscription's secret.
    const placeholder = await startWebhookReceiver({ secret: `whsec_${Buffer.alloc(24).toString("base64")}`, port: 0 })
    await placeholder.close()
    const created = await platform.request("POST", "/v1/webhook-subscriptions", {
      body: { url: placeholder.url, event_types: ["wallet.created"] }
    })
    expect(created.status, created.text).toBe(200)
    const port = Number(new URL(placeholder.url).port)
    const receiver = await startWebhookReceiver({ secret: created.body.secret, port, onEvent: (event) => void handled.push(event) })
    try {
      const wallet = await platform.request("POST", "/v1/wallets", { body: { holder: { name: "Receiver" } } })
      expect(wallet.status).toBe(200)
      await waitUntil(() => handled.length === 1)
      expect(handled[0]).toMatchObject({ type: "wallet.created", data: { object: { id: wallet.body.id } } })

      // At least once: a resend of the same event is acknowledged and not handled again.
      const resent = await platform.request("POST", `/v1/events/${handled[0]!.id}/resend`, { body: {} })
      expect(resent.body.data[0]).toMatchObject({ status: "SUCCESS", response_code: 204 })
      expect(receiver.stats.duplicates).toBe(1)
      expect(handled).toHaveLength(1)

      // A forged delivery is refused before its body is trusted.
      const forged = await fetch(receiver.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "webhook-id": crypto.randomUUID(),
          "webhook-timestamp": String(Math.floor(Date.now() / 1000)),
          "webhook-signature": `v1,${Buffer.alloc(32).toString("base64")}`
        },
        body: JSON.stringify({ type: "wallet.created" })
      })
      expect(forged.status).toBe(400)
      expect(receiver.stats.rejected).toBe(1)

      // Rotated: the platform signs with both secrets for 24 h, so the old secret still verifies.
      const rotated = await platform.request("POST", `/v1/webhook-subscriptions/${created.body.id}/rotate-secret`, { body: {} })
      expect(rotated.status, rotated.text).toBe(200)
      await platform.request("POST", "/v1/wallets", { body: { holder: { name: "After rotation" } } })
      await waitUntil(() => handled.length === 2)
      expect(receiver.stats.rejected).toBe(1)
    } finally {
      await receiver.close()
    }
  })
})
