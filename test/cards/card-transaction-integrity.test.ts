import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope, startPlatform, type TestPlatform, uuid } from "../support/platform.js"
import { createWallet, fund, issueCard } from "./helpers.js"

/**
 * A card transaction moves by its card messages alone and within its card's limits
 * (docs/card-transactions.md#transfers-and-card-transactions, #spend-controls), over HTTP on both
 * stores: no transfer can be attached to one, whichever way it is posted, and a PER_TRANSACTION
 * limit holds for the transaction's authorized total, increments included.
 */
describe.each(STORE_KINDS)("card transaction integrity on %s", (kind) => {
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
  const ok = async (id: string, name: string, body: Record<string, unknown> = {}) => {
    const response = await platform.request("POST", `/v1/simulate/transactions/${id}/${name}`, { body })
    expect(response.status, response.text).toBe(200)
    return response.body
  }
  const account = async (id: string) => {
    const body = (await platform.request("GET", `/v1/financial-accounts/${id}`)).body
    return { balance: body.balance.amount, pending: body.pending_balance.amount, available: body.available_balance.amount }
  }
  const transaction = async (id: string) => (await platform.request("GET", `/v1/transactions/${id}`)).body
  const transfersOf = async (transactionId: string) =>
    (await platform.request("GET", `/v1/transfers?transaction_id=${transactionId}&page_size=100`)).body.total_count
  const setup = async (funds: number, card: Record<string, unknown> = {}) => {
    const wallet = await createWallet(platform)
    if (funds > 0) await fund(platform, wallet.financial_account_id, funds)
    return { card: await issueCard(platform, wallet.id, card), accountId: wallet.financial_account_id as string }
  }

  it("refuses a transfer attached to a card transaction with 409 (param transaction_id), single, idempotent or batched, writing nothing", async () => {
    const { accountId, card } = await setup(1_000)
    const other = (await createWallet(platform)).financial_account_id as string
    await fund(platform, other, 500)
    const held = await authorize({ card_id: card.id, amount: 300 })
    const single = await authorize({ card_id: card.id, amount: 200, kind: "FINANCIAL_AUTHORIZATION" })
    const declined = await authorize({ card_id: card.id, amount: 5_000 })
    expect([held.status, single.status, declined.status]).toEqual(["PENDING", "SETTLED", "DECLINED"])
    const before = {
      transactions: await Promise.all([held, single, declined].map((t) => transaction(t.id))),
      card: await account(accountId),
      other: await account(other),
      transfers: await Promise.all([held, single].map((t) => transfersOf(t.id)))
    }

    const attached = (transactionId: string) => [
      // Pending on its rail (settling it later moved the card transaction), instant, and book.
      { paymentRail: "ach_same_day", amount: 100, currency: "USD", to_financial_account_id: accountId, transaction_id: transactionId },
      { paymentRail: "wire", amount: 100, currency: "USD", from_financial_account_id: other, transaction_id: transactionId },
      { paymentRail: "fednow_instant", amount: 100, currency: "USD", to_financial_account_id: accountId, transaction_id: transactionId },
      {
        paymentRail: "book",
        amount: 100,
        currency: "USD",
        from_financial_account_id: other,
        to_financial_account_id: accountId,
        transaction_id: transactionId
      }
    ]
    for (const t of [held, single, declined]) {
      for (const body of attached(t.id)) {
        expectEnvelope(await platform.request("POST", "/v1/transfers", { body }), 409, { code: "conflict", param: "transaction_id" })
        expectEnvelope(await platform.request("POST", "/v1/transfers", { body, idempotencyKey: uuid() }), 409, {
          code: "conflict",
          param: "transaction_id"
        })
      }
    }
    const batch = await platform.request("POST", "/v1/transfers/batch", { body: { transfers: attached(held.id) } })
    expect(batch.status, batch.text).toBe(200)
    for (const item of batch.body.data) expect(item.error).toMatchObject({ code: "conflict", param: "transaction_id" })
    expectEnvelope(await platform.request("POST", "/v1/transfers/batch", { body: { atomic: true, transfers: attached(single.id) } }), 409, {
      code: "conflict",
      param: "transfers.0.transaction_id"
    })

    expect(await Promise.all([held, single, declined].map((t) => transaction(t.id)))).toEqual(before.transactions)
    expect(await account(accountId)).toEqual(before.card)
    expect(await account(other)).toEqual(before.other)
    expect(await Promise.all([held, single].map((t) => transfersOf(t.id)))).toEqual(before.transfers)
    // The hold still moves by its messages: the reversal releases it.
    expect(await ok(held.id, "reversal")).toMatchObject({ status: "VOIDED", pending_amount: 0, settled_amount: 0 })
    expect(await account(accountId)).toEqual({ balance: 800, pending: 0, available: 800 })
  })

  it("declines an increment that takes the transaction's authorized total past a PER_TRANSACTION limit", async () => {
    const { accountId, card } = await setup(10_000, { spendingPeriod: { interval: "PER_TRANSACTION", amount: 1_000 } })
    const held = await authorize({ card_id: card.id, amount: 1_000 })
    expect(held).toMatchObject({ status: "PENDING", authorized_amount: 1_000 })
    for (let i = 0; i < 3; i++) {
      const after = await ok(held.id, "increment", { amount: 1_000 })
      expect(after).toMatchObject({ status: "PENDING", authorized_amount: 1_000, pending_amount: 1_000 })
      expect(after.card_events.at(-1)).toMatchObject({
        type: "INCREMENTAL_AUTHORIZATION",
        amount: 1_000,
        result: "DECLINED",
        decline_reason: "SPENDING_LIMIT_EXCEEDED"
      })
    }
    expect(await account(accountId)).toEqual({ balance: 10_000, pending: 1_000, available: 9_000 })

    // Below the limit an increment is approved up to it, not one unit past it.
    const smaller = await authorize({ card_id: card.id, amount: 600 })
    expect(await ok(smaller.id, "increment", { amount: 400 })).toMatchObject({ authorized_amount: 1_000, pending_amount: 1_000 })
    expect((await ok(smaller.id, "increment", { amount: 1 })).card_events.at(-1)).toMatchObject({
      result: "DECLINED",
      decline_reason: "SPENDING_LIMIT_EXCEEDED"
    })
    // Increments racing on one transaction: at most the limit is authorized, whichever wins.
    const raced = await authorize({ card_id: card.id, amount: 500 })
    const answers = await Promise.all(
      Array.from({ length: 4 }, () =>
        platform.request("POST", `/v1/simulate/transactions/${raced.id}/increment`, { body: { amount: 300 } })
      )
    )
    for (const answer of answers) expect(answer.status, answer.text).toBe(200)
    const final = await transaction(raced.id)
    expect(final).toMatchObject({ authorized_amount: 800, pending_amount: 800 })
    expect(final.card_events.filter((e: any) => e.result === "DECLINED")).toHaveLength(3)
    expect(await account(accountId)).toEqual({ balance: 10_000, pending: 2_800, available: 7_200 })
  })
})
