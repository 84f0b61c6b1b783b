import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { startPlatform, type TestPlatform } from "../support/platform.js"
import { createWallet, fund, issueCard } from "./helpers.js"

// docs/card-transactions.md#the-transaction-object: a card transaction names the financial account its
// money moves on (`financial_account_id`, the card's wallet account) wherever it is shown — the
// message's answer, GET, the lists and the events; a transfer-driven transaction names none (its
// transfers name their accounts). Both stores.
describe.each(STORE_KINDS)("a transaction's financial account on %s", (kind) => {
  let platform: TestPlatform

  beforeAll(async () => {
    platform = await startPlatform(kind)
  })
  afterAll(async () => {
    await platform?.close()
  })

  const ok = async (method: string, path: string, body?: unknown) => {
    const response = await platform.request(method, path, body === undefined ? {} : { body })
    expect(response.status, `${method} ${path}: ${response.text}`).toBe(200)
    return response.body
  }

  it("a card transaction names its card's wallet account everywhere; a transfer's names none", async () => {
    const wallet = await createWallet(platform)
    const other = await createWallet(platform)
    const funding = await fund(platform, wallet.financial_account_id, 1_000)
    await fund(platform, other.financial_account_id, 1_000)
    const card = await issueCard(platform, wallet.id)
    expect(card.financial_account_id).toBe(wallet.financial_account_id)

    const approved = await ok("POST", "/v1/simulate/authorizations", { card_id: card.id, amount: 300, mcc: "5411" })
    expect(approved).toMatchObject({ status: "PENDING", financial_account_id: wallet.financial_account_id })
    const cleared = await ok("POST", `/v1/simulate/transactions/${approved.id}/clearing`, { amount: 320 })
    expect(cleared).toMatchObject({ status: "SETTLED", financial_account_id: wallet.financial_account_id })
    await ok("POST", `/v1/cards/${card.id}/freeze`)
    const declined = await ok("POST", "/v1/simulate/authorizations", { card_id: card.id, amount: 10, mcc: "5411" })
    expect(declined).toMatchObject({ status: "DECLINED", financial_account_id: wallet.financial_account_id })

    for (const transaction of [approved, declined]) {
      expect((await ok("GET", `/v1/transactions/${transaction.id}`)).financial_account_id).toBe(wallet.financial_account_id)
    }
    const listed = (await ok("GET", `/v1/transactions?card_id=${card.id}`)).data as Array<any>
    expect(listed.map((t) => [t.id, t.financial_account_id])).toEqual([
      [declined.id, wallet.financial_account_id],
      [approved.id, wallet.financial_account_id]
    ])
    const events = (await ok("GET", "/v1/events?type=transaction.updated&page_size=100")).data as Array<any>
    const about = events.filter((event) => event.data.object.id === approved.id || event.data.object.id === declined.id)
    expect(about.length).toBeGreaterThanOrEqual(3)
    for (const event of about) expect(event.data.object.financial_account_id).toBe(wallet.financial_account_id)

    // Transfer-driven: an inbound funding and a book transfer between two wallets.
    const book = await ok("POST", "/v1/transfers", {
      paymentRail: "book",
      amount: 5,
      currency: "USD",
      from_financial_account_id: other.financial_account_id,
      to_financial_account_id: wallet.financial_account_id
    })
    for (const transactionId of [funding.transaction_id, book.transaction_id]) {
      const transaction = await ok("GET", `/v1/transactions/${transactionId}`)
      expect(transaction).toMatchObject({ card_id: null, financial_account_id: null })
    }
    const all = (await ok("GET", "/v1/transactions?page_size=100")).data as Array<any>
    expect(all.filter((t) => t.card_id === null).every((t) => t.financial_account_id === null)).toBe(true)
    expect(all.filter((t) => t.card_id !== null).every((t) => t.financial_account_id === wallet.financial_account_id)).toBe(true)
  })
})
