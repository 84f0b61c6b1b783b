import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { onDatabase } from "../foundation/fixtures.js"
import { createWallet, fund, issueCard, reveal } from "../cards/helpers.js"
import { STORE_KINDS } from "../support/databases.js"
import { type DecisionReceiver, startDecisionReceiver } from "../support/decisionReceiver.js"
import { expectEnvelope, startPlatform, type TestPlatform, uuid } from "../support/platform.js"

/**
 * The network's door for card messages (docs/network.md), over HTTP on both stores, as a gateway
 * uses it: the card found by its number, the answer an ISO 8583 one, each message applied once per
 * network_message_id, the messages of one transaction linked by network_transaction_id, the
 * merchant kept on the transaction; every refusal writes nothing.
 */
describe.each(STORE_KINDS)("card network messages on %s", (kind) => {
  let platform: TestPlatform
  let receiver: DecisionReceiver

  beforeAll(async () => {
    platform = await startPlatform(kind)
    receiver = await startDecisionReceiver()
  })
  afterAll(async () => {
    receiver?.close()
    await platform?.close()
  })

  const MERCHANT = { acceptor_id: "ACQ-000123", name: "Corner Grocery", city: "Springfield", country: "US", mcc: "5411" }

  /** Sends a card message with the organization's first admin key (it holds the network right); no X-Program-ID. */
  const send = (body: Record<string, unknown>, key = platform.org.api_key) =>
    platform.request("POST", "/v1/network/card-messages", { key, program: null, body })
  const message = (type: string, fields: Record<string, unknown>) => ({
    network_message_id: uuid(),
    type,
    currency: "USD",
    ...fields
  })
  const answered = async (body: Record<string, unknown>, key?: string) => {
    const response = await send(body, key)
    expect(response.status, response.text).toBe(200)
    expect(response.headers.get("idempotent-replayed")).toBeNull()
    return response.body
  }
  const account = async (id: string) => {
    const body = (await platform.request("GET", `/v1/financial-accounts/${id}`)).body
    return { balance: body.balance.amount, pending: body.pending_balance.amount, available: body.available_balance.amount }
  }
  const transaction = async (id: string) => (await platform.request("GET", `/v1/transactions/${id}`)).body
  const transactionCount = () =>
    onDatabase(platform, async (query) => Number((await query("SELECT COUNT(*) AS n FROM issuing_transactions"))[0]!.n))
  /** A funded wallet, a card on it and the card as a terminal reads it. */
  const setup = async (funds: number, card: Record<string, unknown> = {}) => {
    const wallet = await createWallet(platform)
    if (funds > 0) await fund(platform, wallet.financial_account_id, funds)
    const issued = await issueCard(platform, wallet.id, card)
    const data = await reveal(platform, issued.id)
    return {
      cardId: issued.id as string,
      accountId: wallet.financial_account_id as string,
      card: { number: data.pan, exp_month: data.exp_month, exp_year: data.exp_year, cvv: data.cvv }
    }
  }

  it("authorizes by card number: the ISO answer, the hold, the merchant and the network id on the transaction", async () => {
    const { accountId, card, cardId } = await setup(10_000)
    const ntid = `ntx-${uuid()}`
    const body = message("AUTHORIZATION", { network_transaction_id: ntid, card, amount: 2_500, merchant: MERCHANT })
    const answer = await answered(body)
    expect(answer).toEqual({
      object: "network_card_message",
      network_message_id: body.network_message_id,
      type: "AUTHORIZATION",
      transaction_id: expect.any(String),
      result: "APPROVED",
      approved_amount: 2_500,
      response_code: "00",
      authorization_code: expect.stringMatching(/^[0-9A-Z]{6}$/),
      decline_reason: null,
      created_at: expect.any(String)
    })
    expect(await account(accountId)).toEqual({ balance: 10_000, pending: 2_500, available: 7_500 })
    const held = await transaction(answer.transaction_id)
    expect(held).toMatchObject({
      card_id: cardId,
      status: "PENDING",
      pending_amount: 2_500,
      mcc: "5411",
      merchant_name: "Corner Grocery",
      merchant: MERCHANT,
      network_transaction_id: ntid
    })
    // Lists and events show the merchant too; no card number anywhere.
    const listed = (await platform.request("GET", `/v1/transactions?card_id=${cardId}`)).body.data
    expect(listed[0]).toMatchObject({ id: answer.transaction_id, merchant: MERCHANT, network_transaction_id: ntid })
    const events = (await platform.request("GET", "/v1/events?type=transaction.updated&page_size=100")).body.data
    const event = events.find((e: any) => e.data.object.id === answer.transaction_id)
    expect(event.data.object.merchant).toEqual(MERCHANT)
    expect(JSON.stringify(events)).not.toContain(card.number)
  })

  it("answers a retransmission with the first answer, once: same id, same bytes, Idempotent-Replayed, no second hold", async () => {
    const { accountId, card } = await setup(10_000)
    const body = message("AUTHORIZATION", { network_transaction_id: `ntx-${uuid()}`, card, amount: 1_000, merchant: MERCHANT })
    const first = await send(body)
    expect(first.status, first.text).toBe(200)
    const again = await send(body)
    expect(again.status).toBe(200)
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    expect(again.text).toBe(first.text)
    expect(await account(accountId)).toMatchObject({ pending: 1_000 })
    // The same id with another message: 409, nothing written.
    const before = await transactionCount()
    expectEnvelope(await send({ ...body, amount: 1_001 }), 409, { code: "conflict", param: "network_message_id" })
    expect(await transactionCount()).toBe(before)
    // A decline is answered the same way again (nothing recorded twice).
    const unknown = message("AUTHORIZATION", {
      network_transaction_id: `ntx-${uuid()}`,
      card: { number: "4000009999999991" },
      amount: 100
    })
    const declined = await send(unknown)
    const replayed = await send(unknown)
    expect([replayed.headers.get("idempotent-replayed"), replayed.text]).toEqual(["true", declined.text])
  })

  it("declines an unknown number with 14, and the number's wrong expiry or code with 54 and N7", async () => {
    const { card, cardId } = await setup(10_000)
    const before = await transactionCount()
    const unknown = await answered(
      message("AUTHORIZATION", { network_transaction_id: `ntx-${uuid()}`, card: { number: "4000 0099 9999 9991" }, amount: 100 })
    )
    expect(unknown).toMatchObject({ result: "DECLINED", response_code: "14", transaction_id: null, decline_reason: "UNKNOWN_CARD" })
    expect(unknown.authorization_code).toBeNull()
    expect(await transactionCount()).toBe(before)
    const wrongYear = await answered(
      message("AUTHORIZATION", { network_transaction_id: `ntx-${uuid()}`, card: { ...card, exp_year: card.exp_year + 1 }, amount: 100 })
    )
    expect(wrongYear).toMatchObject({ result: "DECLINED", response_code: "54", decline_reason: "CARD_EXPIRED" })
    expect(await transaction(wrongYear.transaction_id)).toMatchObject({
      status: "DECLINED",
      card_id: cardId,
      decline_reason: "CARD_EXPIRED"
    })
    const wrongCode = String((Number(card.cvv) + 1) % 1000).padStart(3, "0")
    const badCvv = await answered(
      message("AUTHORIZATION", { network_transaction_id: `ntx-${uuid()}`, card: { ...card, cvv: wrongCode }, amount: 100 })
    )
    expect(badCvv).toMatchObject({ result: "DECLINED", response_code: "N7", decline_reason: "INCORRECT_CVV" })
    // Only the number: expiry and code are checked when sent.
    const numberOnly = await answered(
      message("AUTHORIZATION", { network_transaction_id: `ntx-${uuid()}`, card: { number: card.number }, amount: 100 })
    )
    expect(numberOnly).toMatchObject({ result: "APPROVED", response_code: "00" })
  })

  it("maps each built-in decline to its response code", async () => {
    const auth = (card: Record<string, unknown>, amount: number, merchant: Record<string, unknown> = MERCHANT) =>
      answered(message("AUTHORIZATION", { network_transaction_id: `ntx-${uuid()}`, card, amount, merchant }))
    const funded = await setup(1_000, { blockedMccCodes: ["7995"], spendingPeriod: { interval: "PER_TRANSACTION", amount: 500 } })
    expect(await auth(funded.card, 600)).toMatchObject({ response_code: "61", decline_reason: "SPENDING_LIMIT_EXCEEDED" })
    expect(await auth(funded.card, 100, { ...MERCHANT, mcc: "7995" })).toMatchObject({ response_code: "57", decline_reason: "MCC_BLOCKED" })
    const poor = await setup(100)
    expect(await auth(poor.card, 101)).toMatchObject({ response_code: "51", decline_reason: "INSUFFICIENT_FUNDS" })
    expect((await platform.request("POST", `/v1/cards/${poor.cardId}/freeze`)).status).toBe(200)
    expect(await auth(poor.card, 10)).toMatchObject({ response_code: "62", decline_reason: "CARD_FROZEN" })
    expect((await platform.request("POST", `/v1/cards/${poor.cardId}/close`)).status).toBe(200)
    expect(await auth(poor.card, 10)).toMatchObject({ response_code: "46", decline_reason: "CARD_CLOSED" })
  })

  it("asks the program only once every built-in check passed, funds included; its decline is 05, its partial approval 10", async () => {
    const created = await platform.request("POST", "/v1/authorization-endpoints", {
      body: { url: receiver.url("/decline"), timeout_ms: 2000 }
    })
    expect(created.status, created.text).toBe(200)
    const endpoint = created.body.id
    try {
      const { card, cardId } = await setup(1_000)
      const asked = async () => (await receiver.log()).filter((r) => r.body?.data?.card?.id === cardId).length
      // Over the available funds: declined 51 and the program never asked.
      const poor = await answered(
        message("AUTHORIZATION", { network_transaction_id: `ntx-${uuid()}`, card, amount: 1_001, merchant: MERCHANT })
      )
      expect(poor).toMatchObject({ result: "DECLINED", response_code: "51" })
      expect(await asked()).toBe(0)
      const declined = await answered(
        message("AUTHORIZATION", { network_transaction_id: `ntx-${uuid()}`, card, amount: 500, merchant: MERCHANT })
      )
      expect(declined).toMatchObject({ result: "DECLINED", response_code: "05", decline_reason: "WEBHOOK_DECLINED" })
      expect(await asked()).toBe(1)
      await platform.request("PATCH", `/v1/authorization-endpoints/${endpoint}`, { body: { url: receiver.url("/amount/300") } })
      const partial = await answered(
        message("AUTHORIZATION", {
          network_transaction_id: `ntx-${uuid()}`,
          card,
          amount: 500,
          merchant: MERCHANT,
          partial_approval_capable: true
        })
      )
      expect(partial).toMatchObject({ result: "PARTIALLY_APPROVED", response_code: "10", approved_amount: 300 })
      expect(partial.authorization_code).toMatch(/^[0-9A-Z]{6}$/)
    } finally {
      await platform.request("DELETE", `/v1/authorization-endpoints/${endpoint}`)
    }
  })

  it("links a transaction's messages by network_transaction_id: increment, clearing with a tip, partial reversal, return", async () => {
    const { accountId, card } = await setup(10_000)
    const ntid = `ntx-${uuid()}`
    const opened = await answered(message("AUTHORIZATION", { network_transaction_id: ntid, card, amount: 4_000, merchant: MERCHANT }))
    const id = opened.transaction_id
    const grown = await answered(message("INCREMENTAL_AUTHORIZATION", { network_transaction_id: ntid, amount: 1_000 }))
    expect(grown).toMatchObject({ transaction_id: id, result: "APPROVED", response_code: "00", approved_amount: 1_000 })
    expect(await account(accountId)).toMatchObject({ pending: 5_000 })
    const reversed = await answered(message("AUTHORIZATION_REVERSAL", { network_transaction_id: ntid, amount: 500 }))
    expect(reversed).toMatchObject({ transaction_id: id, result: "ACKNOWLEDGED", response_code: "00", approved_amount: 500 })
    expect(reversed.authorization_code).toBeNull()
    // A clearing above the hold (a tip): posts it all, releases the hold.
    const cleared = await answered(message("CLEARING", { network_transaction_id: ntid, amount: 5_200 }))
    expect(cleared).toMatchObject({ transaction_id: id, result: "ACKNOWLEDGED", approved_amount: 5_200 })
    expect(await account(accountId)).toEqual({ balance: 4_800, pending: 0, available: 4_800 })
    const refunded = await answered(message("RETURN", { network_transaction_id: ntid, card: { number: card.number }, amount: 200 }))
    expect(refunded).toMatchObject({ transaction_id: id, result: "ACKNOWLEDGED", approved_amount: 200 })
    expect(await account(accountId)).toEqual({ balance: 5_000, pending: 0, available: 5_000 })
    expect((await transaction(id)).card_events.map((e: { type: string }) => e.type)).toEqual([
      "AUTHORIZATION",
      "INCREMENTAL_AUTHORIZATION",
      "AUTHORIZATION_REVERSAL",
      "CLEARING",
      "RETURN"
    ])
    // A return above what settled: 13, nothing moves.
    const tooMuch = await answered(message("RETURN", { network_transaction_id: ntid, card: { number: card.number }, amount: 9_999 }))
    expect(tooMuch).toMatchObject({ transaction_id: id, result: "DECLINED", response_code: "13" })
    expect(await account(accountId)).toEqual({ balance: 5_000, pending: 0, available: 5_000 })
  })

  it("holds a stand-in advice whatever the checks say, and sets a known hold to the advised amount", async () => {
    const { accountId, card, cardId } = await setup(100, { blockedMccCodes: ["7995"] })
    const ntid = `ntx-${uuid()}`
    // Over the funds and in a blocked category: the network approved it, so it is held; available below zero.
    const advised = await answered(
      message("AUTHORIZATION_ADVICE", { network_transaction_id: ntid, card, amount: 500, merchant: { ...MERCHANT, mcc: "7995" } })
    )
    expect(advised).toMatchObject({ result: "ACKNOWLEDGED", response_code: "00", approved_amount: 500, authorization_code: null })
    expect(await account(accountId)).toEqual({ balance: 100, pending: 500, available: -400 })
    expect(await transaction(advised.transaction_id)).toMatchObject({
      card_id: cardId,
      status: "PENDING",
      pending_amount: 500,
      card_events: [{ type: "AUTHORIZATION_ADVICE", amount: 500, result: "APPROVED" }]
    })
    // A second advice of the same transaction sets its hold to the new amount.
    const lowered = await answered(message("AUTHORIZATION_ADVICE", { network_transaction_id: ntid, card, amount: 300 }))
    expect(lowered).toMatchObject({ transaction_id: advised.transaction_id, result: "ACKNOWLEDGED", approved_amount: 300 })
    expect(await account(accountId)).toEqual({ balance: 100, pending: 300, available: -200 })
    // The issuer declined, the network stood in: the declined transaction is held after all.
    const other = `ntx-${uuid()}`
    const declined = await answered(message("AUTHORIZATION", { network_transaction_id: other, card, amount: 50, merchant: MERCHANT }))
    expect(declined).toMatchObject({ result: "DECLINED", response_code: "51" })
    const stoodIn = await answered(message("AUTHORIZATION_ADVICE", { network_transaction_id: other, card, amount: 50 }))
    expect(stoodIn).toMatchObject({ transaction_id: declined.transaction_id, result: "ACKNOWLEDGED" })
    expect(await transaction(declined.transaction_id)).toMatchObject({ status: "PENDING", decline_reason: null, pending_amount: 50 })
    expect(await account(accountId)).toMatchObject({ pending: 350 })
  })

  it("acknowledges a reversal of a transaction never seen, moving nothing, and answers its repeat alike", async () => {
    const { accountId } = await setup(1_000)
    const before = await transactionCount()
    const body = message("AUTHORIZATION_REVERSAL", { network_transaction_id: `ntx-${uuid()}`, amount: 700 })
    const first = await send(body)
    expect(first.status, first.text).toBe(200)
    expect(first.body).toMatchObject({ result: "ACKNOWLEDGED", response_code: "00", transaction_id: null, approved_amount: 0 })
    const again = await send(body)
    expect([again.headers.get("idempotent-replayed"), again.text]).toEqual(["true", first.text])
    expect(await transactionCount()).toBe(before)
    expect(await account(accountId)).toEqual({ balance: 1_000, pending: 0, available: 1_000 })
  })

  it("posts a clearing without authorization (force post, or a clearing never authorized) and an unlinked refund", async () => {
    const { accountId, card, cardId } = await setup(1_000)
    const forced = await answered(message("FORCE_POST", { network_transaction_id: `ntx-${uuid()}`, card, amount: 800, merchant: MERCHANT }))
    expect(forced).toMatchObject({ result: "ACKNOWLEDGED", response_code: "00", approved_amount: 800 })
    expect(await transaction(forced.transaction_id)).toMatchObject({
      card_id: cardId,
      status: "SETTLED",
      authorized_amount: 0,
      settled_amount: 800,
      merchant: MERCHANT,
      card_events: [{ type: "CLEARING", amount: 800 }]
    })
    // Never refused for funds: the wallet goes below zero, shown as such.
    const late = await answered(message("CLEARING", { network_transaction_id: `ntx-${uuid()}`, card, amount: 500, merchant: MERCHANT }))
    expect(late).toMatchObject({ result: "ACKNOWLEDGED", approved_amount: 500 })
    expect(await account(accountId)).toEqual({ balance: -300, pending: 0, available: -300 })
    // A clearing of an unknown transaction that names no card cannot be posted: 30, nothing written.
    const before = await transactionCount()
    const nameless = await answered(message("CLEARING", { network_transaction_id: `ntx-${uuid()}`, amount: 500 }))
    expect(nameless).toMatchObject({ result: "DECLINED", response_code: "30", transaction_id: null })
    expect(await transactionCount()).toBe(before)
    const refund = await answered(
      message("RETURN", { network_transaction_id: `ntx-${uuid()}`, card: { number: card.number }, amount: 400 })
    )
    expect(refund).toMatchObject({ result: "ACKNOWLEDGED", approved_amount: 400 })
    expect(await transaction(refund.transaction_id)).toMatchObject({
      status: "SETTLED",
      settled_amount: -400,
      card_events: [{ type: "RETURN", amount: 400 }]
    })
    expect(await account(accountId)).toEqual({ balance: 100, pending: 0, available: 100 })
  })

  it("answers two first messages of one network transaction at once with one transaction: the other is 30", async () => {
    const { accountId, card } = await setup(10_000)
    const ntid = `ntx-${uuid()}`
    const both = await Promise.all(
      [1, 2].map(() => send(message("AUTHORIZATION", { network_transaction_id: ntid, card, amount: 1_000, merchant: MERCHANT })))
    )
    expect(both.map((r) => r.status)).toEqual([200, 200])
    expect(both.map((r) => r.body.response_code).sort()).toEqual(["00", "30"])
    expect(await account(accountId)).toMatchObject({ pending: 1_000 })
    // A message naming another card than its transaction's does not fit it either.
    const other = await setup(10_000)
    const mismatched = await answered(message("AUTHORIZATION_ADVICE", { network_transaction_id: ntid, card: other.card, amount: 5 }))
    expect(mismatched).toMatchObject({ result: "DECLINED", response_code: "30" })
  })

  it("posts a late presentment: a clearing after the hold expired", async () => {
    const { accountId, card } = await setup(10_000)
    const ntid = `ntx-${uuid()}`
    const opened = await answered(message("AUTHORIZATION", { network_transaction_id: ntid, card, amount: 1_000, merchant: MERCHANT }))
    expect((await platform.request("POST", `/v1/transactions/${opened.transaction_id}/expire`)).status).toBe(200)
    const late = await answered(message("CLEARING", { network_transaction_id: ntid, amount: 1_000 }))
    expect(late).toMatchObject({ transaction_id: opened.transaction_id, result: "ACKNOWLEDGED", approved_amount: 1_000 })
    expect(await transaction(opened.transaction_id)).toMatchObject({ status: "SETTLED", settled_amount: 1_000 })
    expect(await account(accountId)).toEqual({ balance: 9_000, pending: 0, available: 9_000 })
  })

  it("refuses bad input with 400 naming the field, and a key without the right with 403, writing nothing", async () => {
    const { card } = await setup(1_000)
    const valid = () => message("AUTHORIZATION", { network_transaction_id: `ntx-${uuid()}`, card, amount: 100, merchant: MERCHANT })
    const before = await transactionCount()
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...valid(), card: undefined }, "card"],
      [{ ...valid(), card: { number: "12" } }, "card.number"],
      [{ ...valid(), card: { cvv: "123" } }, "card.number"],
      [{ ...valid(), amount: 0 }, "amount"],
      [{ ...valid(), amount: -5 }, "amount"],
      [{ ...valid(), amount: 1.5 }, "amount"],
      [{ ...valid(), type: "PREAUTH" }, "type"],
      [{ ...valid(), currency: "XYZ" }, "currency"],
      [{ ...valid(), currency: "usd" }, "currency"],
      [{ ...valid(), network_message_id: "" }, "network_message_id"],
      [{ ...valid(), network_transaction_id: "x".repeat(65) }, "network_transaction_id"],
      [{ ...valid(), merchant: { ...MERCHANT, country: "USA" } }, "merchant.country"]
    ]
    for (const [body, param] of cases) {
      const response = await send(body)
      expectEnvelope(response, 400, { code: "invalid_request", param })
      expect(response.text).not.toContain(card.number)
    }
    // Keys without the network right: 403 before the body is read, a bad body included.
    const developer = await platform.request("POST", "/v1/api-keys", { program: null, body: { name: "dev", role: "developer" } })
    const admin = await platform.request("POST", "/v1/api-keys", { program: null, body: { name: "adm", role: "admin" } })
    for (const key of [developer.body.secret, admin.body.secret]) {
      expectEnvelope(await send(valid(), key), 403, { code: "permission_denied" })
      expectEnvelope(await send({ amount: "bad" }, key), 403, { code: "permission_denied" })
    }
    expect(await transactionCount()).toBe(before)
  })

  it("lets the sandbox's simulated authorization take the same merchant object", async () => {
    const { cardId } = await setup(1_000)
    const simulate = (body: Record<string, unknown>) =>
      platform.request("POST", "/v1/simulate/authorizations", { body: { card_id: cardId, amount: 100, ...body } })
    const held = await simulate({ merchant: MERCHANT })
    expect(held.status, held.text).toBe(200)
    expect(held.body).toMatchObject({ status: "PENDING", mcc: "5411", merchant_name: "Corner Grocery", merchant: MERCHANT })
    const plain = await simulate({ mcc: "5812", merchant_name: "Diner" })
    expect(plain.body).toMatchObject({ mcc: "5812", merchant_name: "Diner", merchant: null, network_transaction_id: null })
    const before = await transactionCount()
    expectEnvelope(await simulate({}), 400, { code: "invalid_request", param: "mcc" })
    expectEnvelope(await simulate({ mcc: "5812", merchant: MERCHANT }), 400, { code: "invalid_request", param: "mcc" })
    expectEnvelope(await simulate({ merchant: { ...MERCHANT, country: "us" } }), 400, {
      code: "invalid_request",
      param: "merchant.country"
    })
    expect(await transactionCount()).toBe(before)
  })

  it("finds only the cards of the programs a key may reach", async () => {
    const { card } = await setup(1_000)
    const program = await platform.request("POST", "/v1/programs", { program: null, body: { name: "Other program" } })
    expect(program.status, program.text).toBe(200)
    const limited = await platform.request("POST", "/v1/api-keys", {
      program: null,
      body: { name: "gateway", role: "developer", network: true, program_ids: [program.body.id] }
    })
    expect(limited.status, limited.text).toBe(200)
    const before = await transactionCount()
    const answer = await answered(
      message("AUTHORIZATION", { network_transaction_id: `ntx-${uuid()}`, card, amount: 100, merchant: MERCHANT }),
      limited.body.secret
    )
    expect(answer).toMatchObject({ result: "DECLINED", response_code: "14", transaction_id: null })
    expect(await transactionCount()).toBe(before)
  })
})
