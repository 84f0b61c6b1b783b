import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope, startPlatform, type TestPlatform, uuid } from "../support/platform.js"
import { createWallet, fund, issueCard } from "./helpers.js"

/**
 * Card transactions as card networks run them (docs/card-transactions.md), over HTTP on both
 * stores: an authorization holds, increments grow the hold, clearings post the book transfer and
 * close or shrink it, reversals and expiry release it, returns refund what settled; every refusal
 * writes nothing.
 */
describe.each(STORE_KINDS)("card transactions on %s", (kind) => {
  let platform: TestPlatform

  beforeAll(async () => {
    platform = await startPlatform(kind)
  })
  afterAll(async () => {
    await platform?.close()
  })

  const authorize = async (body: Record<string, unknown>) => {
    const response = await platform.request("POST", "/v1/simulate/authorizations", { body: { mcc: "5411", ...body } })
    expect(response.status, response.text).toBe(200)
    return response.body
  }
  const message = (id: string, name: string, body: Record<string, unknown> = {}) =>
    platform.request("POST", `/v1/simulate/transactions/${id}/${name}`, { body })
  const ok = async (id: string, name: string, body: Record<string, unknown> = {}) => {
    const response = await message(id, name, body)
    expect(response.status, response.text).toBe(200)
    return response.body
  }
  const account = async (id: string) => {
    const body = (await platform.request("GET", `/v1/financial-accounts/${id}`)).body
    return { balance: body.balance.amount, pending: body.pending_balance.amount, available: body.available_balance.amount }
  }
  const bookTransfers = async (transactionId: string) =>
    (await platform.request("GET", `/v1/transactions/${transactionId}/book-transfers`)).body
  const eventsOf = async (type: string, id: string) =>
    ((await platform.request("GET", `/v1/events?type=${type}&page_size=100`)).body.data as Array<any>).filter(
      (event) => event.data.object.id === id
    )
  /** A funded wallet and a card on it. */
  const setup = async (funds: number, card: Record<string, unknown> = {}) => {
    const wallet = await createWallet(platform)
    if (funds > 0) await fund(platform, wallet.financial_account_id, funds)
    return { wallet, card: await issueCard(platform, wallet.id, card), accountId: wallet.financial_account_id as string }
  }

  it("an authorization holds the amount until it expires; the hold counts against available funds", async () => {
    const { accountId, card } = await setup(1_000)
    const before = Date.now()
    const held = await authorize({ card_id: card.id, amount: 600 })
    expect(held).toMatchObject({
      status: "PENDING",
      amount: 600,
      authorized_amount: 600,
      pending_amount: 600,
      settled_amount: 0,
      request_history: [],
      card_events: [{ type: "AUTHORIZATION", amount: 600, result: "APPROVED", decline_reason: null }]
    })
    // ISSUING_AUTHORIZATION_HOLD_DAYS defaults to 7.
    const expires = Date.parse(held.expires_at) - before
    expect(expires).toBeGreaterThanOrEqual(7 * 86_400_000 - 1_000)
    expect(expires).toBeLessThanOrEqual(7 * 86_400_000 + 60_000)
    expect(await account(accountId)).toEqual({ balance: 1_000, pending: 600, available: 400 })
    // A second authorization and a transfer see only what is available.
    expect(await authorize({ card_id: card.id, amount: 401 })).toMatchObject({ status: "DECLINED", decline_reason: "INSUFFICIENT_FUNDS" })
    const other = await createWallet(platform)
    const transfer = await platform.request("POST", "/v1/transfers", {
      body: {
        paymentRail: "book",
        amount: 401,
        currency: "USD",
        from_financial_account_id: accountId,
        to_financial_account_id: other.financial_account_id
      }
    })
    expectEnvelope(transfer, 422, { code: "insufficient_funds", param: "amount" })
    expect(await account(accountId)).toEqual({ balance: 1_000, pending: 600, available: 400 })
    // The hold's own events: the transaction and the account as they stand.
    expect((await eventsOf("transaction.updated", held.id)).map((e) => e.data.object.status)).toEqual(["PENDING"])
    const balanceEvents = await eventsOf("balance.updated", accountId)
    expect(balanceEvents[0].data.object).toMatchObject({
      balance: { amount: 1_000, currency: "USD" },
      pending_balance: { amount: 600, currency: "USD" },
      available_balance: { amount: 400, currency: "USD" }
    })
    expect((await bookTransfers(held.id)).total_count).toBe(0)
  })

  it("authorizations racing for the last funds cannot both hold them", async () => {
    const { accountId, card } = await setup(500)
    const results = await Promise.all(Array.from({ length: 10 }, () => authorize({ card_id: card.id, amount: 100 })))
    expect(results.filter((t) => t.status === "PENDING")).toHaveLength(5)
    expect(results.filter((t) => t.decline_reason === "INSUFFICIENT_FUNDS")).toHaveLength(5)
    expect(await account(accountId)).toEqual({ balance: 500, pending: 500, available: 0 })
  })

  it("a clearing posts the four-entry book transfer and closes the hold; an over-clearing posts the excess too", async () => {
    const { accountId, card } = await setup(1_000)
    const held = await authorize({ card_id: card.id, amount: 300 })
    const cleared = await ok(held.id, "clearing")
    expect(cleared).toMatchObject({ status: "SETTLED", pending_amount: 0, settled_amount: 300 })
    expect(cleared.card_events.map((e: any) => [e.type, e.amount])).toEqual([
      ["AUTHORIZATION", 300],
      ["CLEARING", 300]
    ])
    expect(await account(accountId)).toEqual({ balance: 700, pending: 0, available: 700 })
    const books = await bookTransfers(held.id)
    expect(books.total_count).toBe(1)
    expect(books.data[0].entries).toHaveLength(4)
    expect(books.data[0].entries[0]).toMatchObject({ book: "principal", financial_account_id: accountId, entry_type: "DEBIT" })
    // A tip: the clearing is larger than the hold.
    const tipped = await authorize({ card_id: card.id, amount: 100 })
    expect(await ok(tipped.id, "clearing", { amount: 120 })).toMatchObject({ status: "SETTLED", pending_amount: 0, settled_amount: 120 })
    expect(await account(accountId)).toEqual({ balance: 580, pending: 0, available: 580 })
  })

  it("a clearing never fails for funds: it may take the balance below zero, shown as such", async () => {
    const { accountId, card } = await setup(100)
    const held = await authorize({ card_id: card.id, amount: 100 })
    await platform.request("POST", `/v1/cards/${card.id}/freeze`)
    expect(await ok(held.id, "clearing", { amount: 250 })).toMatchObject({ status: "SETTLED", settled_amount: 250 })
    expect(await account(accountId)).toEqual({ balance: -150, pending: 0, available: -150 })
  })

  it("multi-completion: partial clearings with final: false keep the rest of the hold, the final one releases it", async () => {
    const { accountId, card } = await setup(1_000)
    const held = await authorize({ card_id: card.id, amount: 500 })
    expect(await ok(held.id, "clearing", { amount: 200, final: false })).toMatchObject({
      status: "PENDING",
      pending_amount: 300,
      settled_amount: 200
    })
    expect(await account(accountId)).toEqual({ balance: 800, pending: 300, available: 500 })
    expect(await ok(held.id, "clearing", { amount: 100 })).toMatchObject({ status: "SETTLED", pending_amount: 0, settled_amount: 300 })
    expect(await account(accountId)).toEqual({ balance: 700, pending: 0, available: 700 })
    expect((await bookTransfers(held.id)).total_count).toBe(2)
  })

  it("increments grow the hold, decided like a new authorization", async () => {
    const { accountId, card } = await setup(1_000, { blockedMccCodes: ["7995"] })
    const held = await authorize({ card_id: card.id, amount: 400 })
    expect(await ok(held.id, "increment", { amount: 100 })).toMatchObject({
      status: "PENDING",
      amount: 500,
      authorized_amount: 500,
      pending_amount: 500
    })
    expect(await account(accountId)).toEqual({ balance: 1_000, pending: 500, available: 500 })
    // Beyond the funds: recorded, declined, the hold unchanged.
    const declined = await ok(held.id, "increment", { amount: 501 })
    expect(declined).toMatchObject({ status: "PENDING", pending_amount: 500 })
    expect(declined.card_events.at(-1)).toMatchObject({
      type: "INCREMENTAL_AUTHORIZATION",
      amount: 501,
      result: "DECLINED",
      decline_reason: "INSUFFICIENT_FUNDS"
    })
    // A frozen card declines increments (never clearings).
    await platform.request("POST", `/v1/cards/${card.id}/freeze`)
    expect((await ok(held.id, "increment", { amount: 1 })).card_events.at(-1)).toMatchObject({ decline_reason: "CARD_FROZEN" })
    await platform.request("POST", `/v1/cards/${card.id}/unfreeze`)
    expect(await account(accountId)).toEqual({ balance: 1_000, pending: 500, available: 500 })
  })

  it("reversals release all or part of the hold; a full one voids the transaction", async () => {
    const { accountId, card } = await setup(1_000)
    const held = await authorize({ card_id: card.id, amount: 400 })
    expect(await ok(held.id, "reversal", { amount: 150 })).toMatchObject({ status: "PENDING", pending_amount: 250 })
    expect(await account(accountId)).toEqual({ balance: 1_000, pending: 250, available: 750 })
    expectEnvelope(await message(held.id, "reversal", { amount: 251 }), 422, { code: "amount_exceeds_pending", param: "amount" })
    expect(await ok(held.id, "reversal")).toMatchObject({ status: "VOIDED", pending_amount: 0, settled_amount: 0 })
    expect(await account(accountId)).toEqual({ balance: 1_000, pending: 0, available: 1_000 })
    // A voided transaction takes no reversal or increment; a late presentment still clears.
    expectEnvelope(await message(held.id, "reversal"), 409, { code: "conflict" })
    expectEnvelope(await message(held.id, "increment", { amount: 1 }), 409, { code: "conflict" })
    expect(await ok(held.id, "clearing", { amount: 90 })).toMatchObject({ status: "SETTLED", settled_amount: 90 })
    expect(await account(accountId)).toEqual({ balance: 910, pending: 0, available: 910 })
  })

  it("returns refund at most what settled, as a book transfer from settlement to the wallet", async () => {
    const { accountId, card } = await setup(1_000)
    const held = await authorize({ card_id: card.id, amount: 400 })
    expectEnvelope(await message(held.id, "return", { amount: 1 }), 422, { code: "amount_exceeds_settled", param: "amount" })
    await ok(held.id, "clearing")
    expect(await ok(held.id, "return", { amount: 150 })).toMatchObject({ status: "SETTLED", settled_amount: 250 })
    expect(await account(accountId)).toEqual({ balance: 750, pending: 0, available: 750 })
    expectEnvelope(await message(held.id, "return", { amount: 251 }), 422, { code: "amount_exceeds_settled", param: "amount" })
    expect(await ok(held.id, "return")).toMatchObject({ settled_amount: 0 })
    expect(await account(accountId)).toEqual({ balance: 1_000, pending: 0, available: 1_000 })
    const books = await bookTransfers(held.id)
    expect(books.total_count).toBe(3)
  })

  it("a financial authorization clears at once; expire releases an open hold in every environment", async () => {
    const { accountId, card } = await setup(1_000)
    const single = await authorize({ card_id: card.id, amount: 250, kind: "FINANCIAL_AUTHORIZATION" })
    expect(single).toMatchObject({ status: "SETTLED", pending_amount: 0, settled_amount: 250, expires_at: null })
    expect(single.card_events.map((e: any) => e.type)).toEqual(["FINANCIAL_AUTHORIZATION"])
    expect((await bookTransfers(single.id)).total_count).toBe(1)
    const held = await authorize({ card_id: card.id, amount: 300 })
    const expired = await platform.request("POST", `/v1/transactions/${held.id}/expire`)
    expect(expired.status, expired.text).toBe(200)
    expect(expired.body).toMatchObject({ status: "EXPIRED", pending_amount: 0 })
    expect(expired.body.card_events.at(-1)).toMatchObject({ type: "AUTHORIZATION_EXPIRY", amount: 300 })
    expect(await account(accountId)).toEqual({ balance: 750, pending: 0, available: 750 })
    expectEnvelope(await platform.request("POST", `/v1/transactions/${held.id}/expire`), 409, { code: "conflict" })
    expectEnvelope(await platform.request("POST", `/v1/transactions/${uuid()}/expire`), 404, { param: "transaction_id" })
  })

  it("spend controls count holds and settled amounts, minus reversals and returns", async () => {
    const { card } = await setup(100_000, { spendingPeriod: { interval: "DAILY", amount: 1_000 } })
    const first = await authorize({ card_id: card.id, amount: 700 })
    expect(await authorize({ card_id: card.id, amount: 400 })).toMatchObject({ decline_reason: "SPENDING_LIMIT_EXCEEDED" })
    await ok(first.id, "reversal", { amount: 200 })
    expect(await authorize({ card_id: card.id, amount: 400 })).toMatchObject({ status: "PENDING" })
    // 500 held + 400 held = 900; an increment of 200 passes the limit.
    expect((await ok(first.id, "increment", { amount: 200 })).card_events.at(-1)).toMatchObject({
      decline_reason: "SPENDING_LIMIT_EXCEEDED"
    })
    await ok(first.id, "clearing")
    await ok(first.id, "return", { amount: 300 })
    expect(await authorize({ card_id: card.id, amount: 400 })).toMatchObject({ status: "PENDING" })
  })

  it("refuses malformed messages with 400 and unknown transactions with 404, writing nothing", async () => {
    const { accountId, card } = await setup(1_000)
    const held = await authorize({ card_id: card.id, amount: 100 })
    expectEnvelope(await message(held.id, "increment", {}), 400, { param: "amount" })
    expectEnvelope(await message(held.id, "increment", { amount: 0 }), 400, { param: "amount" })
    expectEnvelope(await message(held.id, "clearing", { amount: 1.5 }), 400, { param: "amount" })
    expectEnvelope(await message(held.id, "clearing", { final: "yes" }), 400, { param: "final" })
    expectEnvelope(await message(held.id, "reversal", { amount: -3 }), 400, { param: "amount" })
    expectEnvelope(await message(uuid(), "clearing"), 404, { param: "transaction_id" })
    expectEnvelope(
      await platform.request("POST", "/v1/simulate/authorizations", { body: { card_id: card.id, amount: 5, mcc: "5411", kind: "SALE" } }),
      400,
      { param: "kind" }
    )
    // A transfer-driven transaction takes no card message.
    const funding = await fund(platform, accountId, 10)
    expectEnvelope(await message(funding.transaction_id, "clearing", { amount: 5 }), 409, { code: "conflict" })
    const now = (await platform.request("GET", `/v1/transactions/${held.id}`)).body
    expect(now).toMatchObject({ status: "PENDING", pending_amount: 100, settled_amount: 0 })
    expect(await account(accountId)).toEqual({ balance: 1_010, pending: 100, available: 910 })
  })

  it("an inbound credit PENDING on its rail is not available until the rail settles it", async () => {
    const wallet = await createWallet(platform)
    const accountId = wallet.financial_account_id
    const inbound = await platform.request("POST", "/v1/transfers", {
      body: { paymentRail: "wire", amount: 5_000, currency: "USD", to_financial_account_id: accountId }
    })
    expect(inbound.status, inbound.text).toBe(200)
    expect(inbound.body.status).toBe("PENDING")
    expect(await account(accountId)).toEqual({ balance: 5_000, pending: 5_000, available: 0 })
    const other = await createWallet(platform)
    const spend = await platform.request("POST", "/v1/transfers", {
      body: {
        paymentRail: "book",
        amount: 1,
        currency: "USD",
        from_financial_account_id: accountId,
        to_financial_account_id: other.financial_account_id
      }
    })
    expectEnvelope(spend, 422, { code: "insufficient_funds" })
    const card = await issueCard(platform, wallet.id)
    expect(await authorize({ card_id: card.id, amount: 1 })).toMatchObject({ decline_reason: "INSUFFICIENT_FUNDS" })
    const settled = await platform.request("POST", `/v1/simulate/transfers/${inbound.body.id}/settle`)
    expect(settled.status, settled.text).toBe(200)
    expect(await account(accountId)).toEqual({ balance: 5_000, pending: 0, available: 5_000 })
    expect((await eventsOf("balance.updated", accountId)).at(0)?.data.object.available_balance.amount).toBe(5_000)
  })
})

describe("card transaction messages in production", () => {
  it("simulations are not served (404); expire is", async () => {
    const platform = await startPlatform("sqlite", { environment: "production" })
    try {
      for (const name of ["increment", "clearing", "reversal", "return"]) {
        expectEnvelope(await platform.request("POST", `/v1/simulate/transactions/${uuid()}/${name}`, { body: {} }), 404, {
          code: "not_found",
          param: null
        })
      }
      expectEnvelope(await platform.request("POST", `/v1/transactions/${uuid()}/expire`), 404, { param: "transaction_id" })
    } finally {
      await platform.close()
    }
  })
})
