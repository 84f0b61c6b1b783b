import { describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope, uuid } from "../support/platform.js"
import { useFundedWallet } from "../support/walletPlatform.js"
import { issueCard } from "./helpers.js"

// GET /v1/cards/{card_id}/spend-limits (docs/card-transactions.md#remaining-spend): the card's limit,
// its current UTC window, what the window spent as authorizations count it, and what remains.

describe.each(STORE_KINDS)("a card's remaining spend on %s", (kind) => {
  const fixture = useFundedWallet(kind, 100_000)

  const limits = async (cardId: string) => {
    const response = await fixture.platform.request("GET", `/v1/cards/${cardId}/spend-limits`)
    expect(response.status, response.text).toBe(200)
    return response.body
  }
  const authorize = async (cardId: string, amount: number) => {
    const response = await fixture.platform.request("POST", "/v1/simulate/authorizations", {
      body: { card_id: cardId, amount, mcc: "5411" }
    })
    expect(response.status, response.text).toBe(200)
    return response.body
  }
  const message = (id: string, action: string, body: unknown = {}) =>
    fixture.platform.request("POST", `/v1/simulate/transactions/${id}/${action}`, { body })

  it("follows authorizations, reversals, clearings and returns in the current UTC month", async () => {
    const card = await issueCard(fixture.platform, fixture.wallet.id, { spending_period: { interval: "MONTHLY", amount: 10_000 } })
    const now = new Date()
    const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString()
    const end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString()
    const status = (spent: number) => ({
      data: [
        {
          object: "spend_limit",
          interval: "MONTHLY",
          amount: 10_000,
          count: null,
          spent_amount: spent,
          spent_count: null,
          remaining_amount: Math.max(0, 10_000 - spent),
          remaining_count: null,
          window_start: start,
          window_end: end
        }
      ],
      total_count: 1,
      has_more: false
    })
    expect(await limits(card.id)).toEqual(status(0))
    const first = await authorize(card.id, 3_000)
    expect(await limits(card.id)).toEqual(status(3_000))
    expect((await message(first.id, "reversal", { amount: 1_000 })).status).toBe(200)
    expect(await limits(card.id)).toEqual(status(2_000))
    expect((await message(first.id, "clearing", { amount: 2_500 })).status).toBe(200)
    expect(await limits(card.id)).toEqual(status(2_500))
    expect((await message(first.id, "return", { amount: 500 })).status).toBe(200)
    expect(await limits(card.id)).toEqual(status(2_000))
    // A decline spends nothing; what remains is what the next authorization may take.
    expect((await authorize(card.id, 9_000)).decline_reason).toBe("SPENDING_LIMIT_EXCEEDED")
    expect(await limits(card.id)).toEqual(status(2_000))
    expect((await authorize(card.id, 8_000)).status).toBe("PENDING")
    expect(await limits(card.id)).toEqual(status(10_000))
  })

  it("shows a DAILY window, ALL_TIME and PER_TRANSACTION without one, and no limit as an empty list", async () => {
    const daily = await issueCard(fixture.platform, fixture.wallet.id, { spending_period: { interval: "DAILY", amount: 500 } })
    await authorize(daily.id, 200)
    const [day] = (await limits(daily.id)).data
    expect(day).toMatchObject({ interval: "DAILY", spent_amount: 200, remaining_amount: 300 })
    expect(Date.parse(day.window_end) - Date.parse(day.window_start)).toBe(86_400_000)
    expect(Date.parse(day.window_start)).toBeLessThanOrEqual(Date.now())
    const allTime = await issueCard(fixture.platform, fixture.wallet.id, { spending_period: { interval: "ALL_TIME", amount: 700 } })
    await authorize(allTime.id, 300)
    expect((await limits(allTime.id)).data[0]).toMatchObject({
      spent_amount: 300,
      remaining_amount: 400,
      window_start: null,
      window_end: null
    })
    const single = await issueCard(fixture.platform, fixture.wallet.id, { spending_period: { interval: "PER_TRANSACTION", amount: 900 } })
    await authorize(single.id, 600)
    expect((await limits(single.id)).data[0]).toMatchObject({ spent_amount: null, remaining_amount: 900, window_start: null })
    expect(await limits((await issueCard(fixture.platform, fixture.wallet.id)).id)).toEqual({ data: [], total_count: 0, has_more: false })
    // A PATCH of the period shows at once.
    await fixture.platform.request("PATCH", `/v1/cards/${daily.id}`, { body: { spending_period: { interval: "DAILY", amount: 250 } } })
    expect((await limits(daily.id)).data[0]).toMatchObject({ amount: 250, spent_amount: 200, remaining_amount: 50 })
  })

  it("is 404 for another program's card or an unknown one", async () => {
    const other = await fixture.platform.createOrganization("Other")
    const theirs = await fixture.platform.request("POST", "/v1/wallets", {
      key: other.api_key,
      program: other.program_id,
      body: { holder: { name: "B" } }
    })
    const card = await fixture.platform.request("POST", "/v1/cards", {
      key: other.api_key,
      program: other.program_id,
      body: { wallet_id: theirs.body.id, type: "VIRTUAL", spending_period: { interval: "DAILY", amount: 100 } }
    })
    for (const id of [card.body.id, uuid(), "nope"]) {
      expectEnvelope(await fixture.platform.request("GET", `/v1/cards/${id}/spend-limits`), 404, { param: "card_id" })
    }
  })
})
