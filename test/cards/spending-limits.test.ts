import { describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope } from "../support/platform.js"
import { useFundedWallet } from "../support/walletPlatform.js"
import { issueCard } from "./helpers.js"

// Several spending limits per card, on the sum and the number of approved authorizations
// (docs/card-transactions.md#spending-limits): decided from the running totals, shown by
// GET /v1/cards/{card_id}/spend-limits, refused with the field named when malformed.
// WEEKLY and ALL_TIME windows keep the test clear of a UTC midnight (a week ends once in seven days).

describe.each(STORE_KINDS)("a card's spending limits on %s", (kind) => {
  const fixture = useFundedWallet(kind, 1_000_000)

  const authorize = async (cardId: string, amount: number) => {
    const response = await fixture.platform.request("POST", "/v1/simulate/authorizations", {
      body: { card_id: cardId, amount, mcc: "5411" }
    })
    expect(response.status, response.text).toBe(200)
    return response.body
  }
  const message = async (id: string, action: string, body: unknown = {}) => {
    const response = await fixture.platform.request("POST", `/v1/simulate/transactions/${id}/${action}`, { body })
    expect(response.status, response.text).toBe(200)
    return response.body
  }
  const limits = async (cardId: string) => {
    const response = await fixture.platform.request("GET", `/v1/cards/${cardId}/spend-limits`)
    expect(response.status, response.text).toBe(200)
    return response.body.data as Array<any>
  }
  const patch = (cardId: string, body: unknown) => fixture.platform.request("PATCH", `/v1/cards/${cardId}`, { body })

  it("limits the sum and the count of approved authorizations per window, each limit on its own", async () => {
    const card = await issueCard(fixture.platform, fixture.wallet.id, {
      spending_limits: [
        { interval: "WEEKLY", amount: 1_000, count: 2 },
        { interval: "ALL_TIME", count: 3 },
        { interval: "PER_TRANSACTION", amount: 800, count: null }
      ]
    })
    expect(card.spending_limits).toEqual([
      { interval: "WEEKLY", amount: 1_000, count: 2 },
      { interval: "ALL_TIME", amount: null, count: 3 },
      { interval: "PER_TRANSACTION", amount: 800, count: null }
    ])
    // The one-limit spelling shows the first limit with an amount.
    expect(card.spending_period).toEqual({ interval: "WEEKLY", amount: 1_000 })

    expect((await authorize(card.id, 900)).decline_reason).toBe("SPENDING_LIMIT_EXCEEDED")
    const first = await authorize(card.id, 600)
    const second = await authorize(card.id, 300)
    expect([first.status, second.status]).toEqual(["PENDING", "PENDING"])
    // The week's count is reached: even a small authorization declines.
    expect((await authorize(card.id, 50)).decline_reason).toBe("SPENDING_LIMIT_EXCEEDED")
    // An increment is not a new authorization: only the amounts limit it.
    expect((await message(first.id, "increment", { amount: 100 })).card_events.at(-1).result).toBe("APPROVED")
    expect((await message(first.id, "increment", { amount: 1 })).card_events.at(-1).decline_reason).toBe("SPENDING_LIMIT_EXCEEDED")

    const [weekly, allTime, perTransaction] = await limits(card.id)
    expect(weekly).toMatchObject({
      object: "spend_limit",
      interval: "WEEKLY",
      amount: 1_000,
      count: 2,
      spent_amount: 1_000,
      spent_count: 2,
      remaining_amount: 0,
      remaining_count: 0
    })
    expect(Date.parse(weekly.window_end) - Date.parse(weekly.window_start)).toBe(7 * 86_400_000)
    expect(new Date(weekly.window_start).getUTCDay()).toBe(1)
    expect(allTime).toEqual({
      object: "spend_limit",
      interval: "ALL_TIME",
      amount: null,
      count: 3,
      spent_amount: 1_000,
      spent_count: 2,
      remaining_amount: null,
      remaining_count: 1,
      window_start: null,
      window_end: null
    })
    expect(perTransaction).toEqual({
      object: "spend_limit",
      interval: "PER_TRANSACTION",
      amount: 800,
      count: null,
      spent_amount: null,
      spent_count: null,
      remaining_amount: 800,
      remaining_count: null,
      window_start: null,
      window_end: null
    })

    // A hold reversed whole gives its amount and its count back; a clearing and a return keep the count.
    expect((await message(second.id, "reversal")).status).toBe("VOIDED")
    expect((await message(first.id, "clearing")).status).toBe("SETTLED")
    expect((await message(first.id, "return", { amount: 200 })).status).toBe("SETTLED")
    expect((await limits(card.id))[0]).toMatchObject({ spent_amount: 500, spent_count: 1, remaining_amount: 500, remaining_count: 1 })
    expect((await authorize(card.id, 500)).status).toBe("PENDING")
    // All time: three approved, one of them released whole.
    expect((await limits(card.id))[1]).toMatchObject({ spent_count: 2, remaining_count: 1 })
    const patched = await patch(card.id, { spending_limits: [{ interval: "ALL_TIME", count: 3 }] })
    expect(patched.status, patched.text).toBe(200)
    expect(patched.body).toMatchObject({ spending_limits: [{ interval: "ALL_TIME", amount: null, count: 3 }], spending_period: null })
    expect((await authorize(card.id, 5_000)).status).toBe("PENDING")
    expect((await authorize(card.id, 1)).decline_reason).toBe("SPENDING_LIMIT_EXCEEDED")
    expect(await limits(card.id)).toMatchObject([{ interval: "ALL_TIME", spent_amount: 6_000, spent_count: 3, remaining_count: 0 }])
  })

  it("takes spending_period as the one-limit spelling, and either spelling clears", async () => {
    const card = await issueCard(fixture.platform, fixture.wallet.id, { spendingPeriod: { interval: "MONTHLY", amount: 700 } })
    expect(card.spending_limits).toEqual([{ interval: "MONTHLY", amount: 700, count: null }])
    const counted = await patch(card.id, {
      spending_limits: [
        { interval: "YEARLY", count: 9 },
        { interval: "DAILY", amount: 50 }
      ]
    })
    expect(counted.body).toMatchObject({ spending_period: { interval: "DAILY", amount: 50 } })
    expect((await patch(card.id, { spending_period: null })).body).toMatchObject({ spending_limits: [], spending_period: null })
    expect((await patch(card.id, { spending_period: { interval: "WEEKLY", amount: 10 } })).body.spending_limits).toEqual([
      { interval: "WEEKLY", amount: 10, count: null }
    ])
    expect((await patch(card.id, { spending_limits: null })).body).toMatchObject({ spending_limits: [], spending_period: null })
    expect(await limits(card.id)).toEqual([])
  })

  it("refuses malformed limits with 400 naming the field, and writes nothing", async () => {
    const limit = { interval: "DAILY", amount: 100 }
    const cases: ReadonlyArray<readonly [Record<string, unknown>, string]> = [
      [
        {
          spending_limits: ["DAILY", "WEEKLY", "MONTHLY", "YEARLY", "ALL_TIME", "PER_TRANSACTION"].map((interval) => ({
            interval,
            amount: 1
          }))
        },
        "spending_limits"
      ],
      [{ spending_limits: "DAILY" }, "spending_limits"],
      [{ spending_limits: [{ interval: "DAILY" }] }, "spending_limits.0"],
      [{ spending_limits: [limit, { interval: "WEEKLY", amount: null, count: null }] }, "spending_limits.1"],
      [{ spending_limits: [{ interval: "DAILY", amount: -5 }] }, "spending_limits.0.amount"],
      [{ spending_limits: [{ interval: "DAILY", amount: 1.5 }] }, "spending_limits.0.amount"],
      [{ spending_limits: [{ interval: "DAILY", count: 2.5 }] }, "spending_limits.0.count"],
      [{ spending_limits: [{ interval: "DAILY", count: 0 }] }, "spending_limits.0.count"],
      [{ spending_limits: [{ interval: "DAILY", count: -1 }] }, "spending_limits.0.count"],
      [{ spending_limits: [{ interval: "HOURLY", amount: 1 }] }, "spending_limits.0.interval"],
      [{ spending_limits: [limit, { interval: "MONTHLY", count: 1 }, { interval: "DAILY", count: 2 }] }, "spending_limits.2.interval"],
      [{ spending_limits: [{ interval: "PER_TRANSACTION", amount: 100, count: 1 }] }, "spending_limits.0.count"],
      [{ spending_limits: [{ ...limit, window: "DAILY" }] }, "spending_limits.0.window"],
      [{ spending_limits: [limit], spending_period: limit }, "spending_limits"],
      [{ spending_limits: [limit], spendingPeriod: null }, "spending_limits"]
    ]
    const card = await issueCard(fixture.platform, fixture.wallet.id, { spending_limits: [{ interval: "WEEKLY", count: 5 }] })
    const cardsBefore = (await fixture.platform.request("GET", `/v1/cards?wallet_id=${fixture.wallet.id}`)).body.total_count
    const eventsBefore = (await fixture.platform.request("GET", "/v1/events?type=card.updated&page_size=100")).body.total_count
    for (const [body, param] of cases) {
      const issued = await fixture.platform.request("POST", "/v1/cards", {
        body: { wallet_id: fixture.wallet.id, type: "VIRTUAL", ...body }
      })
      expectEnvelope(issued, 400, { code: "invalid_request", param })
      expect(issued.text).not.toContain("HOURLY")
      expectEnvelope(await patch(card.id, body), 400, { code: "invalid_request", param })
    }
    expect((await fixture.platform.request("GET", `/v1/cards?wallet_id=${fixture.wallet.id}`)).body.total_count).toBe(cardsBefore)
    expect((await fixture.platform.request("GET", "/v1/events?type=card.updated&page_size=100")).body.total_count).toBe(eventsBefore)
    expect((await fixture.platform.request("GET", `/v1/cards/${card.id}`)).body.spending_limits).toEqual([
      { interval: "WEEKLY", amount: null, count: 5 }
    ])
  })

  it("never lets authorizations sent at once pass a count or an amount limit together", async () => {
    const counted = await issueCard(fixture.platform, fixture.wallet.id, { spending_limits: [{ interval: "ALL_TIME", count: 3 }] })
    const summed = await issueCard(fixture.platform, fixture.wallet.id, { spending_limits: [{ interval: "WEEKLY", amount: 1_000 }] })
    const answers = await Promise.all([
      ...Array.from({ length: 8 }, () => authorize(counted.id, 100)),
      ...Array.from({ length: 8 }, () => authorize(summed.id, 300))
    ])
    const approved = (cardId: string) => answers.filter((t) => t.card_id === cardId && t.status === "PENDING").length
    expect(approved(counted.id)).toBe(3)
    expect(approved(summed.id)).toBe(3)
    for (const t of answers) if (t.status === "DECLINED") expect(t.decline_reason).toBe("SPENDING_LIMIT_EXCEEDED")
    expect(await limits(counted.id)).toMatchObject([{ spent_count: 3, remaining_count: 0, spent_amount: 300 }])
    expect(await limits(summed.id)).toMatchObject([{ spent_amount: 900, remaining_amount: 100, spent_count: null }])
  })
})
