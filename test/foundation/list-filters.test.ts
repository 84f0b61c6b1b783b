import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createWallet, fund, transfer } from "../ledger/support.js"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope, startPlatform, type TestPlatform, uuid } from "../support/platform.js"

interface Transfer {
  readonly id: string
  readonly from_financial_account_id: string
  readonly to_financial_account_id: string
}

// Issue 49 item 4, over HTTP on both stores: transfers by wallet_id, and event_types ["*"].
describe.each(STORE_KINDS)("list filters on %s", (kind) => {
  let platform: TestPlatform
  let walletA: { id: string; financial_account_id: string }
  let walletB: { id: string; financial_account_id: string }

  beforeAll(async () => {
    platform = await startPlatform(kind)
    walletA = await createWallet(platform, "A")
    walletB = await createWallet(platform, "B")
    const walletC = await createWallet(platform, "C")
    await fund(platform, walletA.financial_account_id, 1_000)
    await fund(platform, walletC.financial_account_id, 1_000)
    for (const [from, to] of [
      [walletA, walletB],
      [walletC, walletA],
      [walletC, walletB]
    ] as const) {
      const moved = await transfer(platform, {
        paymentRail: "book",
        amount: 25,
        from_financial_account_id: from.financial_account_id,
        to_financial_account_id: to.financial_account_id
      })
      expect(moved.status, moved.text).toBe(200)
    }
  })
  afterAll(async () => {
    await platform?.close()
  })

  const list = async (query: string) => {
    const response = await platform.request("GET", `/v1/transfers?${query}`)
    expect(response.status, response.text).toBe(200)
    return response.body as { data: Array<Transfer>; total_count: number; has_more: boolean }
  }

  it("lists a wallet's transfers, either side, as its financial account's", async () => {
    const all = (await list("page_size=100")).data
    for (const wallet of [walletA, walletB]) {
      const account = wallet.financial_account_id
      const expected = all.filter((row) => row.from_financial_account_id === account || row.to_financial_account_id === account)
      expect(expected.length).toBeGreaterThan(1)
      const byWallet = await list(`wallet_id=${wallet.id}&page_size=100`)
      expect(byWallet.data.map((row) => row.id)).toEqual(expected.map((row) => row.id))
      expect(byWallet.total_count).toBe(expected.length)
      expect(await list(`wallet_id=${wallet.id}&financial_account_id=${account}&page_size=100`)).toEqual(byWallet)
      const first = await list(`wallet_id=${wallet.id}&page_size=1`)
      expect(first.has_more).toBe(true)
      expect((await list(`wallet_id=${wallet.id}&page_size=100&starting_after=${first.data[0]!.id}`)).data.map((row) => row.id)).toEqual(
        expected.slice(1).map((row) => row.id)
      )
    }
    // Another account, an unknown wallet, another program's wallet: nothing.
    const none = { data: [], total_count: 0, has_more: false }
    expect(await list(`wallet_id=${walletA.id}&financial_account_id=${walletB.financial_account_id}`)).toEqual(none)
    expect(await list(`wallet_id=${uuid()}`)).toEqual(none)
    const stranger = await platform.createOrganization("Stranger")
    const theirs = await platform.request("GET", `/v1/transfers?wallet_id=${walletA.id}`, {
      key: stranger.api_key,
      program: stranger.program_id
    })
    expect(theirs.body).toEqual(none)
    expectEnvelope(await platform.request("GET", "/v1/transfers?wallet_id=nope"), 400, { param: "wallet_id" })
  })

  it('subscribes to every event type with event_types ["*"], and refuses "*" among others', async () => {
    const created = await platform.request("POST", "/v1/webhook-subscriptions", {
      body: { url: "https://hooks.example/all", event_types: ["*"] }
    })
    expect(created.status, created.text).toBe(200)
    const types = created.body.event_types as Array<string>
    for (const type of ["wallet.created", "transfer.created", "card.updated", "transaction.updated", "balance.updated"]) {
      expect(types).toContain(type)
    }
    expect(types).not.toContain("webhook.test")
    expect(types).not.toContain("*")
    const narrowed = await platform.request("PATCH", `/v1/webhook-subscriptions/${created.body.id}`, {
      body: { event_types: ["wallet.created"] }
    })
    expect(narrowed.body.event_types).toEqual(["wallet.created"])
    const widened = await platform.request("PATCH", `/v1/webhook-subscriptions/${created.body.id}`, { body: { event_types: ["*"] } })
    expect(widened.status, widened.text).toBe(200)
    expect([...widened.body.event_types].sort()).toEqual([...types].sort())
    const before = (await platform.request("GET", "/v1/webhook-subscriptions")).body.total_count
    for (const event_types of [["*", "wallet.created"], ["*", "*"], ["all"]]) {
      expectEnvelope(
        await platform.request("POST", "/v1/webhook-subscriptions", { body: { url: "https://hooks.example/x", event_types } }),
        400,
        { param: "event_types" }
      )
    }
    expect((await platform.request("GET", "/v1/webhook-subscriptions")).body.total_count).toBe(before)
  })
})
