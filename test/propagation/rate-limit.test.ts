import { spawn } from "node:child_process"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, STORE_KINDS, type TestDatabase } from "../support/databases.js"
import { type Cluster, NODE_ADMIN_SECRET, type Node, startCluster } from "../support/nodes.js"

const BURST = 20
/** Slow enough that what flows in while the test runs is small beside the burst (and is counted). */
const PER_SECOND = 0.2

/**
 * Two `issuing serve` processes on one database: a key's rate limit holds across them
 * (docs/operations.md#rate-limits-across-nodes). Per process, a key alternating between the two
 * nodes would get twice its burst.
 */
describe.each(STORE_KINDS)("rate limit across two nodes on one %s database", (kind) => {
  let database: TestDatabase
  let cluster: Cluster | undefined

  const call = (node: Node, key: string, method = "GET", body?: unknown) =>
    fetch(`${node.url}/v1/programs`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { "content-type": "application/json" })
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })

  beforeAll(async () => {
    database = await createTestDatabase(kind, { migrated: true })
    cluster = await startCluster(database, {
      ISSUING_RATE_LIMIT_BURST: String(BURST),
      ISSUING_RATE_LIMIT_PER_SECOND: String(PER_SECOND),
      // The bounds below hold while leases land. Past the lease time-out a node limits a key by its
      // own bucket (tested last): a lease slowed past the default 250 ms by a loaded test machine
      // gave one node its own burst. A second is well above any lease here, and well below the
      // lock test's 2.5 s.
      ISSUING_RATE_LIMIT_LEASE_TIMEOUT_MS: "1000"
    })
  }, 120_000)

  afterAll(async () => {
    await cluster?.stop()
    await database?.drop()
  }, 60_000)

  const newKey = async () => {
    const created = await fetch(`${cluster!.a.url}/v1/api-keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${NODE_ADMIN_SECRET}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "limited", role: "developer" })
    })
    expect(created.status, await created.clone().text()).toBe(200)
    return ((await created.json()) as { secret: string }).secret
  }

  it("a key alternating between the nodes gets its burst, not twice it, and a 429 from both", async () => {
    const { a, b } = cluster!
    const key = await newKey()
    const startedMs = Date.now()
    const granted = { a: 0, b: 0 }
    const limited = { a: 0, b: 0 }
    for (let i = 0; i < BURST * 3; i++) {
      const side = i % 2 === 0 ? "a" : "b"
      const response = await call(side === "a" ? a : b, key)
      await response.arrayBuffer()
      if (response.status === 429) {
        limited[side] += 1
        expect(Number(response.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
      } else expect(response.status).toBe(200)
      if (response.status === 200) granted[side] += 1
    }
    // What flowed in meanwhile may pass too; a lease can add at most a tenth of the burst.
    const refilled = Math.floor(((Date.now() - startedMs) / 1000) * PER_SECOND)
    const total = granted.a + granted.b
    expect(total).toBeGreaterThanOrEqual(BURST)
    expect(total).toBeLessThanOrEqual(BURST + refilled + BURST / 10)
    // Both nodes served the key, and both refused it once its budget was spent.
    expect(granted.a).toBeGreaterThan(0)
    expect(granted.b).toBeGreaterThan(0)
    expect(limited.a).toBeGreaterThan(0)
    expect(limited.b).toBeGreaterThan(0)
  })

  it("concurrent requests on both nodes share the one budget", async () => {
    const { a, b } = cluster!
    const key = await newKey()
    const startedMs = Date.now()
    const statuses = await Promise.all(
      Array.from({ length: BURST * 2 }, async (_, i) => {
        const response = await call(i % 2 === 0 ? a : b, key)
        await response.arrayBuffer()
        return response.status
      })
    )
    const refilled = Math.floor(((Date.now() - startedMs) / 1000) * PER_SECOND)
    const total = statuses.filter((status) => status === 200).length
    expect(statuses.every((status) => status === 200 || status === 429)).toBe(true)
    expect(total).toBeLessThanOrEqual(BURST + refilled + BURST / 10)
    // Tokens a node leased but did not spend are lost only to the concurrency of this burst, never more than a lease per node.
    expect(total).toBeGreaterThanOrEqual(BURST - 2 * Math.max(1, BURST / 10))
  })

  // docs/webhooks.md#the-page-and-its-calls: a webhook portal session's bucket is its own, and is
  // as shared across the nodes as a key's.
  it("a portal session alternating between the nodes gets its burst, not twice it, and not from its key", async () => {
    const { a, b } = cluster!
    const key = await newKey()
    const programs = await fetch(`${a.url}/v1/programs`, { headers: { authorization: `Bearer ${key}` } })
    const programId = ((await programs.json()) as { data: Array<{ id: string }> }).data[0]!.id
    const created = await fetch(`${a.url}/v1/webhook-portal-sessions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "x-program-id": programId, "content-type": "application/json" },
      body: JSON.stringify({ scope_tag: "customer" })
    })
    expect(created.status, await created.clone().text()).toBe(200)
    const token = new URL(((await created.json()) as { url: string }).url).searchParams.get("session_token")!
    const startedMs = Date.now()
    let granted = 0
    for (let i = 0; i < BURST * 2; i++) {
      const response = await fetch(`${(i % 2 === 0 ? a : b).url}/v1/webhook-portal/subscriptions`, {
        headers: { authorization: `Bearer ${token}` }
      })
      await response.arrayBuffer()
      expect([200, 429]).toContain(response.status)
      if (response.status === 200) granted += 1
    }
    const refilled = Math.floor(((Date.now() - startedMs) / 1000) * PER_SECOND)
    expect(granted).toBeGreaterThanOrEqual(BURST)
    expect(granted).toBeLessThanOrEqual(BURST + refilled + BURST / 10)
    // The key spent two tokens (the program list, the session): its own requests still pass.
    const own = await call(b, key)
    expect(own.status, await own.text()).toBe(200)
  })

  // docs/operations.md#rate-limits-across-nodes: a lease the database cannot give does not turn
  // the request away; the node limits the key by its own bucket meanwhile.
  it.runIf(kind === "sqlite")(
    "a key whose lease cannot be taken (another process holds the write lock) is limited by the node alone",
    async () => {
      const { a } = cluster!
      const key = await newKey()
      const holder = spawn(
        process.execPath,
        [
          "-e",
          `const db = new (require("better-sqlite3"))(process.argv[1]);
         db.exec("BEGIN IMMEDIATE"); console.log("locked");
         process.stdin.once("data", () => { db.exec("COMMIT"); db.close(); process.exit(0) })`,
          database.filename!
        ],
        { stdio: ["pipe", "pipe", "inherit"] }
      )
      try {
        await new Promise<void>((resolve, reject) => {
          holder.stdout!.once("data", () => resolve())
          holder.once("exit", (code) => reject(new Error(`lock holder exited with ${code}`)))
        })
        // The lease is given up after the lease time-out (1 s here) and the node's own bucket answers:
        // the request does not wait out the lock's 5 s busy timeout behind the lease.
        const sentMs = Date.now()
        const first = await call(a, key)
        expect(first.status, await first.text()).toBe(200)
        expect(Date.now() - sentMs).toBeLessThan(2_500)
        const second = await call(a, key)
        expect(second.status, await second.text()).toBe(200)
      } finally {
        holder.stdin!.write("commit\n")
        await new Promise((resolve) => (holder.exitCode !== null ? resolve(null) : holder.once("exit", resolve)))
      }
      // Back on the shared bucket once the lock is free.
      const after = await call(a, key)
      expect(after.status, await after.text()).toBe(200)
    },
    60_000
  )
})
