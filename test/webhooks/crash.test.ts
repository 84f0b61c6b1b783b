import type { ChildProcess } from "node:child_process"
import { afterAll, describe, expect, it } from "vitest"
import { spawnCli, waitForOutput } from "../support/cli.js"
import { createTestDatabase, STORE_KINDS, type TestDatabase } from "../support/databases.js"
import { TEST_VAULT_KEY } from "../support/platform.js"
import { startReceiver } from "./receiver.js"

const API_KEY = "sk_sandbox_crash_test_key_0001_long_enough"

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode)
    child.once("exit", (code) => resolve(code))
  })

describe.each(STORE_KINDS)("at-least-once delivery across a crash on %s", (kind) => {
  const children: Array<ChildProcess> = []
  let database: TestDatabase | undefined
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
    await database?.drop()
  })

  it("makes every due delivery after `issuing serve` is killed with SIGKILL and restarted", async () => {
    database = await createTestDatabase(kind, { migrated: true })
    const receiver = await startReceiver()
    receiver.reply = () => ({ status: 503, body: "down for maintenance" })
    const env = {
      ISSUING_DATABASE_URL: database.url,
      ISSUING_PORT: "0",
      ISSUING_VAULT_KEY: TEST_VAULT_KEY.toString("base64"),
      ISSUING_BOOTSTRAP_API_KEY: API_KEY,
      ISSUING_WEBHOOK_RETRY_SCHEDULE: Array(20).fill("500ms").join(","),
      ISSUING_WEBHOOK_TIMEOUT_MS: "1000"
    }
    const start = async () => {
      const child = spawnCli(["serve"], env)
      children.push(child)
      const output = await waitForOutput(child, /listening on (http:\/\/\S+)/, 60_000)
      return { child, url: /listening on (http:\/\/\S+)/.exec(output)![1]!, output }
    }
    const first = await start()
    const program = /X-Program-ID: (\S+)/.exec(first.output)![1]!
    const call = (base: string, method: string, path: string, body?: unknown) =>
      fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${API_KEY}`, "x-program-id": program, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body)
      }).then(async (response) => ({ status: response.status, body: (await response.json()) as any }))

    const subscription = await call(first.url, "POST", "/v1/webhook-subscriptions", { url: receiver.url, event_types: ["wallet.created"] })
    expect(subscription.status).toBe(200)
    const walletIds: Array<string> = []
    for (let i = 0; i < 12; i++) {
      const wallet = await call(first.url, "POST", "/v1/wallets", { holder: { name: `Holder ${i}` } })
      expect(wallet.status).toBe(200)
      walletIds.push(wallet.body.id)
    }
    const walletOf = (body: string) => JSON.parse(body).data.object.id as string
    // Every delivery has been tried and failed at least once, so all are due (or claimed) at the kill.
    await receiver.waitFor((all) => walletIds.every((id) => all.some((r) => walletOf(r.body) === id)))
    first.child.kill("SIGKILL")
    expect(await exited(first.child)).toBeNull()

    const afterCrash = receiver.received.length
    receiver.reply = () => ({ status: 200, body: "ok" })
    const second = await start()
    await receiver.waitFor((all) => walletIds.every((id) => all.slice(afterCrash).some((r) => walletOf(r.body) === id)), 30_000)
    for (let i = 0; i < 50; i++) {
      const attempts = await call(second.url, "GET", "/v1/webhook-attempts?status=SUCCESS&page_size=100")
      if (attempts.body.total_count >= walletIds.length) break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const successes = await call(second.url, "GET", "/v1/webhook-attempts?status=SUCCESS&page_size=100")
    expect(new Set(successes.body.data.map((a: any) => a.event_id)).size).toBe(walletIds.length)
    const failures = await call(second.url, "GET", "/v1/webhook-attempts?status=FAILED&page_size=1")
    // Tries before the crash were recorded as FAILED (a try whose result was not yet recorded
    // when the process died simply has no attempt; its delivery was made again after restart).
    expect(failures.body.total_count).toBeGreaterThan(0)

    second.child.kill("SIGTERM")
    expect(await exited(second.child)).toBe(0)
    await receiver.close()
  }, 120_000)
})
