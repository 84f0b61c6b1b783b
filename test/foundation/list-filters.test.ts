import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { issueCard } from "../cards/helpers.js"
import { createWallet, fund, transfer } from "../ledger/support.js"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope, startPlatform, type TestPlatform, uuid } from "../support/platform.js"

interface Transfer {
  readonly id: string
  readonly from_financial_account_id: string
  readonly to_financial_account_id: string
}

// Issue 49 item 4, over HTTP on both stores: transfers by wallet_id, cards by last_four, and event_types ["*"].
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

  it("lists the cards whose number ends with last_four, with the other filters, and follows a reissue", async () => {
    const cards: Array<{ id: string; last_four: string; wallet_id: string }> = []
    for (let index = 0; index < 4; index += 1) cards.push(await issueCard(platform, (index % 2 === 0 ? walletA : walletB).id))
    const cardsOf = async (query: string) => {
      const response = await platform.request("GET", `/v1/cards?${query}`)
      expect(response.status, response.text).toBe(200)
      return response.body as { data: Array<{ id: string; last_four: string }>; total_count: number; has_more: boolean }
    }
    const all = (await cardsOf("page_size=100")).data
    for (const card of cards) {
      const expected = all.filter((row) => row.last_four === card.last_four).map((row) => row.id)
      const found = await cardsOf(`last_four=${card.last_four}`)
      expect(found.data.map((row) => row.id)).toEqual(expected)
      expect(found.total_count).toBe(expected.length)
      const ofWallet = await cardsOf(`last_four=${card.last_four}&wallet_id=${card.wallet_id}&order_by=updated_at`)
      expect(ofWallet.data.map((row) => row.id)).toContain(card.id)
      expect(ofWallet.total_count).toBe(ofWallet.data.length)
    }
    // A reissue gives a new number: the card is found by its new last four, not by its old one
    // (unless the new number happens to end the same).
    const reissued = await platform.request("POST", `/v1/cards/${cards[0]!.id}/reissue`)
    expect(reissued.status, reissued.text).toBe(200)
    expect((await cardsOf(`last_four=${reissued.body.last_four}`)).data.map((row) => row.id)).toContain(cards[0]!.id)
    if (reissued.body.last_four !== cards[0]!.last_four) {
      expect((await cardsOf(`last_four=${cards[0]!.last_four}`)).data.map((row) => row.id)).not.toContain(cards[0]!.id)
    }
    const unused = ["0000", "1111", "2222", "3333", "4444"].find((digits) => !all.some((row) => row.last_four === digits))!
    expect(await cardsOf(`last_four=${unused}`)).toEqual({ data: [], total_count: 0, has_more: false })
    for (const bad of ["123", "12345", "abcd", "4242 "]) {
      expectEnvelope(await platform.request("GET", `/v1/cards?last_four=${encodeURIComponent(bad)}`), 400, { param: "last_four" })
    }
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
