import { Events, runDeliveryWorker, storedBodyText } from "@issuing/core"
import { Effect, Fiber } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { startPlatform } from "../support/platform.js"

describe("the stored text of a response body", () => {
  it("is UTF-8 of at most the bound, without NUL, whatever bytes the receiver answered", () => {
    expect(storedBodyText(Buffer.from("ok"), 4096)).toBe("ok")
    expect(storedBodyText(Buffer.from("a\u0000b"), 4096)).toBe("a\uFFFDb")
    // Invalid bytes decode as U+FFFD, three bytes each: cut back to the bound.
    const binary = Buffer.alloc(4096, 0xff)
    const stored = storedBodyText(binary, 4096)
    expect(Buffer.byteLength(stored)).toBeLessThanOrEqual(4096)
    expect(stored.length).toBe(1365)
    // A multi-byte character cut at the bound is dropped, not kept half.
    expect(storedBodyText(Buffer.from("aé").subarray(0, 2), 2)).toBe("a")
  })
})

/**
 * Regression (receiver chaos, docs/operations.md#fault-tolerance): a receiver answering binary
 * bytes — NULs, invalid UTF-8 — used to have them stored as decoded: on PostgreSQL the NUL made
 * the recording transaction fail, so the attempts of its whole batch were lost and the deliveries
 * sent again after their lease, again and again; on SQLite the stored text grew to three times the
 * documented 4096 bytes.
 */
describe.each(STORE_KINDS)("a receiver answering binary bytes on %s", (kind) => {
  it("gets its delivery recorded once as SUCCESS, the body within 4096 bytes and without NUL", async () => {
    const body = Buffer.alloc(64 * 1024, Buffer.from([0x00, 0xff, 0x41, 0xc3]))
    let calls = 0
    const server = http.createServer((request, response) => {
      calls += 1
      request.resume()
      request.on("end", () => response.writeHead(200, { "content-type": "application/octet-stream" }).end(body))
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const platform = await startPlatform(kind, { webhookRetryScheduleMs: [100, 100, 100], webhookTimeoutMs: 2000 })
    const worker = platform.instance.runtime.runFork(runDeliveryWorker())
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/binary`
      const created = await platform.request("POST", "/v1/webhook-subscriptions", { body: { url, event_types: ["transaction.updated"] } })
      expect(created.status, created.text).toBe(200)
      const events = await platform.instance.runtime.runPromise(
        Effect.flatMap(Events, (events) =>
          events.emitAll(
            platform.org.program_id,
            Array.from({ length: 3 }, () => ({ type: "transaction.updated" as const, object: { status: "SETTLED" } }))
          )
        )
      )
      const deadline = Date.now() + 20_000
      let attempts: any
      for (;;) {
        attempts = (await platform.request("GET", "/v1/webhook-attempts?page_size=100")).body
        if (attempts.total_count >= events.length || Date.now() > deadline) break
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      expect(attempts.total_count).toBe(events.length)
      expect(calls).toBe(events.length)
      for (const attempt of attempts.data) {
        expect(attempt).toMatchObject({ status: "SUCCESS", response_code: 200 })
        expect(Buffer.byteLength(attempt.response_body)).toBeLessThanOrEqual(4096)
        expect(attempt.response_body).not.toContain("\u0000")
        expect(attempt.response_body.startsWith("\uFFFD\uFFFDA\uFFFD")).toBe(true)
      }
    } finally {
      await platform.instance.runtime.runPromise(Fiber.interrupt(worker))
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await platform.close()
    }
  })
})
