import { Events } from "@issuing/core"
import { Effect } from "effect"
import type { ChildProcess } from "node:child_process"
import * as fs from "node:fs"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CLAIM_LEASE_MS } from "@issuing/core"
import { spawnCli, waitForOutput } from "../support/cli.js"
import { startPlatform, TEST_VAULT_KEY, type TestPlatform } from "../support/platform.js"
import { queueDrained } from "../support/queue.js"
import { type Receiver, startReceiver } from "./receiver.js"

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode)
    child.once("exit", (code) => resolve(code))
  })

/** The local TCP ports of a process's sockets (Linux /proc), to tell which worker sent a request. */
const localPortsOf = (pid: number): Set<number> => {
  const inodes = new Set<string>()
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    try {
      const link = fs.readlinkSync(`/proc/${pid}/fd/${fd}`)
      if (link.startsWith("socket:[")) inodes.add(link.slice(8, -1))
    } catch {
      // the descriptor closed meanwhile
    }
  }
  const ports = new Set<number>()
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    if (!fs.existsSync(file)) continue
    for (const line of fs.readFileSync(file, "utf8").split("\n").slice(1)) {
      const columns = line.trim().split(/\s+/)
      if (columns.length > 9 && inodes.has(columns[9]!)) ports.add(parseInt(columns[1]!.split(":").at(-1)!, 16))
    }
  }
  return ports
}

describe("two `issuing worker` processes on one PostgreSQL", () => {
  let platform: TestPlatform
  let receiver: Receiver
  const workers: Array<ChildProcess> = []
  beforeAll(async () => {
    platform = await startPlatform("postgres")
    receiver = await startReceiver()
  })
  afterAll(async () => {
    for (const child of workers) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
    await receiver?.close()
    await platform?.close()
  })

  it("share the queue without ever sending the same delivery twice at once", async () => {
    // A slow receiver keeps deliveries in flight long enough for the workers to contend.
    receiver.reply = () => ({ status: 200, body: "ok", delayMs: 25 })
    const created = await platform.request("POST", "/v1/webhook-subscriptions", {
      body: { url: receiver.url, event_types: ["transaction.updated"] }
    })
    expect(created.status).toBe(200)
    const env = {
      ISSUING_DATABASE_URL: platform.database.url,
      ISSUING_VAULT_KEY: TEST_VAULT_KEY.toString("base64"),
      ISSUING_WEBHOOK_CONCURRENCY: "8",
      ISSUING_WEBHOOK_TIMEOUT_MS: "5000"
    }
    for (let i = 0; i < 2; i++) {
      const child = spawnCli(["worker"], env)
      workers.push(child)
    }
    await Promise.all(workers.map((child) => waitForOutput(child, /webhook worker running/, 60_000)))

    const total = 160
    const ids: Array<string> = []
    const emit = Effect.flatMap(Events, (events) => events.emit(platform.org.program_id, "transaction.updated", { status: "SETTLED" }))
    for (let batch = 0; batch < total / 20; batch++) {
      const events = await Promise.all(Array.from({ length: 20 }, () => platform.instance.runtime.runPromise(emit)))
      ids.push(...events.map((event) => event.id))
    }
    await receiver.waitFor((all) => new Set(all.map((r) => r.id)).size >= total, 30_000)
    // Every delivery's try is recorded and the queue is empty: no worker holds anything it could
    // still send, so the counts below are final.
    await queueDrained(platform.database)

    expect(receiver.maxConcurrentPerId()).toBe(1)
    const counts = new Map<string, number>()
    for (const request of receiver.received) counts.set(request.id, (counts.get(request.id) ?? 0) + 1)
    expect([...counts.keys()].sort()).toEqual([...ids].sort())
    expect([...counts.values()].every((count) => count === 1)).toBe(true)

    // Both processes delivered: the receiver saw requests from sockets of each (their keep-alive
    // connections are still open now).
    if (fs.existsSync("/proc/net/tcp")) {
      const senders = new Set(receiver.received.map((r) => r.remotePort))
      for (const child of workers) {
        const ports = localPortsOf(child.pid!)
        expect([...ports].some((port) => senders.has(port))).toBe(true)
      }
    }

    for (const child of workers) child.kill("SIGTERM")
    const codes = await Promise.all(workers.map(exited))
    expect(codes).toEqual([0, 0])
    const attempts = await platform.request("GET", "/v1/webhook-attempts?status=SUCCESS&page_size=1")
    expect(attempts.body.total_count).toBe(total)
  }, 120_000)

  it("take over within 5 s the deliveries of a worker killed with SIGKILL while it sends them, never sending one twice at once", async () => {
    const created = await platform.request("POST", "/v1/webhook-subscriptions", {
      body: { url: `${receiver.url}/killed`, event_types: ["card.updated"] }
    })
    expect(created.status).toBe(200)
    const env = {
      ISSUING_DATABASE_URL: platform.database.url,
      ISSUING_VAULT_KEY: TEST_VAULT_KEY.toString("base64"),
      ISSUING_WEBHOOK_CONCURRENCY: "8",
      ISSUING_WEBHOOK_TIMEOUT_MS: "15000"
    }
    const pair = [spawnCli(["worker"], env), spawnCli(["worker"], env)]
    workers.push(...pair)
    await Promise.all(pair.map((child) => waitForOutput(child, /webhook worker running/, 60_000)))

    // Each first try is held 2 s (so the kill finds it in flight, and it ends before any takeover:
    // a lease ends at least 3 s after the last renewal); a later try is answered at once.
    const seen = new Set<string>()
    receiver.reply = (request) => {
      if (!request.path.endsWith("/killed") || seen.has(request.id)) return { status: 200, body: "ok" }
      seen.add(request.id)
      return { status: 200, body: "ok", delayMs: 2000 }
    }
    const before = receiver.received.length
    const emit = Effect.flatMap(Events, (events) => events.emit(platform.org.program_id, "card.updated", { status: "ACTIVE" }))
    const ids = (await Promise.all(Array.from({ length: 6 }, () => platform.instance.runtime.runPromise(emit)))).map((event) => event.id)
    const mine = () => receiver.received.slice(before).filter((request) => request.path.endsWith("/killed"))
    await receiver.waitFor(() => new Set(mine().map((request) => request.id)).size === ids.length, 20_000)

    // The victim: the worker whose sockets sent the most of these tries, still in flight.
    const portsOf = pair.map((child) => localPortsOf(child.pid!))
    const sentBy = (index: number) => mine().filter((request) => portsOf[index]!.has(request.remotePort))
    const victim = sentBy(0).length >= sentBy(1).length ? 0 : 1
    const orphaned = sentBy(victim).map((request) => request.id)
    expect(orphaned.length).toBeGreaterThan(0)
    pair[victim]!.kill("SIGKILL")
    await exited(pair[victim]!)
    const killedAtMs = Date.now()

    // Nothing ages the claims: the dead worker's leases end on their own, within one lease of its
    // last renewal.
    const client = new pg.Client({ connectionString: platform.database.url })
    await client.connect()
    try {
      const leases = await client.query<{ next_attempt_at: Date }>(
        "SELECT next_attempt_at FROM issuing_webhook_deliveries WHERE event_id = ANY($1::text[])",
        [orphaned]
      )
      expect(leases.rows.length).toBe(orphaned.length)
      for (const row of leases.rows) expect(row.next_attempt_at.getTime()).toBeLessThanOrEqual(killedAtMs + CLAIM_LEASE_MS)
    } finally {
      await client.end()
    }

    const resent = (id: string) => mine().filter((request) => request.id === id)[1]
    await receiver.waitFor(() => orphaned.every((id) => resent(id) !== undefined), 20_000)
    const takeoverMs = Math.max(...orphaned.map((id) => resent(id)!.receivedAtMs - killedAtMs))
    console.log(`two workers: ${orphaned.length} deliveries of the killed worker sent again by the other ${takeoverMs} ms after the kill`)
    expect(takeoverMs).toBeLessThanOrEqual(5000)
    const survivorPorts = localPortsOf(pair[1 - victim]!.pid!)
    for (const id of orphaned) expect(survivorPorts.has(resent(id)!.remotePort)).toBe(true)
    await queueDrained(platform.database)
    expect(receiver.maxConcurrentPerId()).toBe(1)
    // Every event reached the receiver, each sent at most twice: once by each worker.
    for (const id of ids) expect(mine().filter((request) => request.id === id).length).toBeLessThanOrEqual(2)

    pair[1 - victim]!.kill("SIGTERM")
    expect(await exited(pair[1 - victim]!)).toBe(0)
  }, 120_000)
})
