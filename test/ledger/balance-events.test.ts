import { FinancialAccount } from "@issuing/core"
import { Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { issueCard } from "../cards/helpers.js"
import { STORE_KINDS } from "../support/databases.js"
import { startPlatform, type TestPlatform, uuid } from "../support/platform.js"
import { createWallet, fund, transfer } from "./support.js"

/** A balance.updated object decoded as the API's financial account, no field more or less. */
const decodeAccount = Schema.decodeUnknownSync(FinancialAccount, { onExcessProperty: "error" })

/**
 * The data of a balance.updated is the financial account of the API, composed by the store inside
 * the write: on PostgreSQL by `issuing_account_json` (store-pg/src/functions/), on SQLite by
 * `INSERT_BALANCE_EVENT` (store-sqlite/src/BalanceEvents.ts). Every way a store writes one — a
 * single posting, an idempotent one in its own transaction, a batch, concurrent postings coalesced
 * (PostgreSQL), a card authorization's hold, a clearing's transfer and a reversal — gives the object
 * the TypeScript schema decodes (ledger/Records.ts FinancialAccount) with the fields of
 * `GET /v1/financial-accounts/{id}`, and the account's last one is that GET's answer.
 */
describe.each(STORE_KINDS)("balance.updated on %s", (kind) => {
  let platform: TestPlatform
  beforeAll(async () => {
    platform = await startPlatform(kind)
  })
  afterAll(async () => {
    await platform?.close()
  })

  const ok = async (method: string, path: string, body: unknown, idempotencyKey?: string) => {
    const response = await platform.request(method, path, { body, ...(idempotencyKey === undefined ? {} : { idempotencyKey }) })
    expect(response.status, response.text).toBe(200)
    return response.body
  }

  it("is the financial account of the API, whichever write composed it", async () => {
    const a = await createWallet(platform, "A")
    const b = await createWallet(platform, "B")
    const [accountA, accountB] = [a.financial_account_id, b.financial_account_id]
    const book = (from: string, to: string, amount: number) => ({
      paymentRail: "book",
      amount,
      currency: "USD",
      from_financial_account_id: from,
      to_financial_account_id: to
    })
    await fund(platform, accountA, 10_000)
    await ok("POST", "/v1/transfers", book(accountA, accountB, 100), uuid())
    await ok("POST", "/v1/transfers/batch", { transfers: [book(accountA, accountB, 10), book(accountB, accountA, 5)] })
    const concurrent = await Promise.all(Array.from({ length: 12 }, () => transfer(platform, book(accountA, accountB, 1))))
    for (const response of concurrent) expect(response.status, response.text).toBe(200)
    const card = await issueCard(platform, a.id)
    const held = await ok("POST", "/v1/simulate/authorizations", { card_id: card.id, amount: 300, mcc: "5411" })
    await ok("POST", `/v1/simulate/transactions/${held.id}/clearing`, {})
    const reversed = await ok("POST", "/v1/simulate/authorizations", { card_id: card.id, amount: 40, mcc: "5411" })
    await ok("POST", `/v1/simulate/transactions/${reversed.id}/reversal`, {})
    // The last writes, one at a time: each account's newest event is what GET answers now.
    await transfer(platform, book(accountB, accountA, 1))

    const events: Array<{ data: { object: Record<string, unknown> } }> = []
    for (let after: string | undefined; ; ) {
      const page = await platform.request(
        "GET",
        `/v1/events?type=balance.updated&page_size=100${after === undefined ? "" : `&starting_after=${after}`}`
      )
      expect(page.status, page.text).toBe(200)
      events.push(...page.body.data)
      if (!page.body.has_more) break
      after = page.body.data.at(-1).id
    }
    for (const accountId of [accountA, accountB]) {
      const account = await ok("GET", `/v1/financial-accounts/${accountId}`, undefined)
      const objects = events.map((event) => event.data.object).filter((object) => object.id === accountId)
      expect(objects.length).toBeGreaterThan(10)
      for (const object of objects) {
        expect(decodeAccount(object)).toEqual(object)
        expect(Object.keys(object).sort()).toEqual(Object.keys(account).sort())
      }
      expect(objects).toContainEqual(account)
    }
  })
})
