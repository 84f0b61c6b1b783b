import type { ChildProcess } from "node:child_process"
import { CardAuthorizations } from "@issuing/core"
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { spawnCli, waitForOutput } from "../support/cli.js"
import { STORE_KINDS } from "../support/databases.js"
import { servePlatform, startPlatform, TEST_VAULT_KEY, type TestPlatform } from "../support/platform.js"
import { createWallet, fund, issueCard } from "./helpers.js"

const DAY_MS = 86_400_000

const stop = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once("exit", () => resolve())
    child.kill("SIGTERM")
  })

/**
 * The worker releases holds once they expire (docs/card-transactions.md#expiry): two `issuing
 * worker` processes on one database, their clocks a week and ten minutes ahead
 * (ISSUING_TEST_CLOCK_OFFSET_MS), release every hold of the default 7 days exactly once — one
 * AUTHORIZATION_EXPIRY card event and one EXPIRED transaction.updated each, the pending balance
 * back to zero.
 */
describe("hold expiry by two worker processes on PostgreSQL", () => {
  let platform: TestPlatform | undefined
  const workers: Array<ChildProcess> = []
  afterAll(async () => {
    await Promise.all(workers.map(stop))
    await platform?.close()
  })

  it("releases each expired hold exactly once", async () => {
    platform = await startPlatform("postgres")
    const p = platform
    const wallet = await createWallet(p)
    await fund(p, wallet.financial_account_id, 100_000)
    const card = await issueCard(p, wallet.id)
    const holds = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const response = await p.request("POST", "/v1/simulate/authorizations", {
          body: { card_id: card.id, amount: 100 + i, mcc: "5411" }
        })
        expect(response.status, response.text).toBe(200)
        return response.body as { id: string; expires_at: string }
      })
    )
    const env = {
      ISSUING_DATABASE_URL: p.database.url,
      ISSUING_VAULT_KEY: TEST_VAULT_KEY.toString("base64"),
      ISSUING_TEST_CLOCK_OFFSET_MS: String(7 * DAY_MS + 10 * 60_000)
    }
    for (let i = 0; i < 2; i++) workers.push(spawnCli(["worker"], env))
    await Promise.all(workers.map((child) => waitForOutput(child, /webhook worker running/, 60_000)))

    const deadline = Date.now() + 60_000
    let statuses: Array<string> = []
    while (Date.now() < deadline) {
      const list = await p.request("GET", `/v1/transactions?card_id=${card.id}&page_size=100`)
      statuses = list.body.data.map((t: any) => t.status)
      if (statuses.every((status) => status === "EXPIRED")) break
      await new Promise((resolve) => setTimeout(resolve, 250))
    }
    expect(statuses).toEqual(holds.map(() => "EXPIRED"))
    for (const hold of holds) {
      const transaction = (await p.request("GET", `/v1/transactions/${hold.id}`)).body
      expect(transaction.card_events.map((e: any) => e.type)).toEqual(["AUTHORIZATION", "AUTHORIZATION_EXPIRY"])
      expect(transaction.pending_amount).toBe(0)
    }
    const account = (await p.request("GET", `/v1/financial-accounts/${wallet.financial_account_id}`)).body
    expect([account.balance.amount, account.pending_balance.amount, account.available_balance.amount]).toEqual([100_000, 0, 100_000])
    const events = (await p.request("GET", "/v1/events?type=transaction.updated&page_size=100")).body.data as Array<any>
    const expiredEvents = events.filter((e) => e.data.object.status === "EXPIRED").map((e) => e.data.object.id)
    expect(expiredEvents.sort()).toEqual(holds.map((h) => h.id).sort())
  }, 180_000)
})

/**
 * The same guarantee on both stores without spawning processes: two platforms on one database
 * (two SQLite connections to one file, or two PostgreSQL pools), their clocks ahead, sweep at
 * once; a clock not yet past the expiry releases nothing.
 */
describe.each(STORE_KINDS)("hold expiry sweeps racing on %s", (kind) => {
  it("release each due hold exactly once and none early", async () => {
    const platform = await startPlatform(kind)
    const ahead = (offsetMs: number) => servePlatform(platform.database, [TEST_VAULT_KEY], {}, { clockOffsetMs: offsetMs })
    const sweepers = await Promise.all([0, 1].map(() => ahead(7 * DAY_MS + 60_000)))
    const early = await ahead(7 * DAY_MS - 60_000)
    try {
      const wallet = await createWallet(platform)
      await fund(platform, wallet.financial_account_id, 100_000)
      const card = await issueCard(platform, wallet.id)
      const ids: Array<string> = []
      for (let i = 0; i < 30; i++) {
        const response = await platform.request("POST", "/v1/simulate/authorizations", {
          body: { card_id: card.id, amount: 10, mcc: "5411" }
        })
        ids.push(response.body.id)
      }
      const sweep = (instance: (typeof sweepers)[number]["instance"]) =>
        instance.runtime.runPromise(Effect.flatMap(CardAuthorizations, (a) => a.expireDue(7)) as Effect.Effect<number>)
      expect(await sweep(early.instance)).toBe(0)
      let released = 0
      for (;;) {
        const counts = await Promise.all(sweepers.map((s) => sweep(s.instance)))
        released += counts[0]! + counts[1]!
        if (counts.every((n) => n === 0)) break
      }
      expect(released).toBe(30)
      for (const id of ids) {
        const transaction = (await platform.request("GET", `/v1/transactions/${id}`)).body
        expect(transaction.card_events.map((e: any) => e.type)).toEqual(["AUTHORIZATION", "AUTHORIZATION_EXPIRY"])
      }
      const account = (await platform.request("GET", `/v1/financial-accounts/${wallet.financial_account_id}`)).body
      expect([account.pending_balance.amount, account.available_balance.amount]).toEqual([0, 100_000])
    } finally {
      for (const s of [...sweepers, early]) await s.close()
      await platform.close()
    }
  }, 120_000)
})
