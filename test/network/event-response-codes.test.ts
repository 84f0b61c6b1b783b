import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { onDatabase } from "../foundation/fixtures.js"
import { createWallet, fund, issueCard, reveal } from "../cards/helpers.js"
import { STORE_KINDS } from "../support/databases.js"
import { type DecisionReceiver, startDecisionReceiver } from "../support/decisionReceiver.js"
import { startPlatform, type TestPlatform, uuid } from "../support/platform.js"

/**
 * Each card event keeps the ISO 8583 response code its message was answered with
 * (docs/network.md#response-codes), so a transaction read later tells a partial approval from a
 * full one and each decline's code, on both stores; events stored before they kept it get the
 * code what was stored tells, or null (docs/decisions.md#response-codes-on-card-events).
 */
describe.each(STORE_KINDS)("response codes on card events on %s", (kind) => {
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

  const MERCHANT = { acceptor_id: "ACQ-7", name: "Fuel Stop", city: null, country: "US", mcc: "5542" }

  const send = async (type: string, fields: Record<string, unknown>) => {
    const response = await platform.request("POST", "/v1/network/card-messages", {
      program: null,
      body: { network_message_id: uuid(), type, currency: "USD", merchant: MERCHANT, ...fields }
    })
    expect(response.status, response.text).toBe(200)
    return response.body
  }
  const events = async (transactionId: string) => {
    const response = await platform.request("GET", `/v1/transactions/${transactionId}`)
    expect(response.status, response.text).toBe(200)
    return response.body.card_events.map((e: any) => [e.type, e.result, e.amount, e.response_code])
  }
  const setup = async (funds: number, controls: Record<string, unknown> = {}) => {
    const wallet = await createWallet(platform)
    if (funds > 0) await fund(platform, wallet.financial_account_id, funds)
    const issued = await issueCard(platform, wallet.id, controls)
    const data = await reveal(platform, issued.id)
    return { cardId: issued.id as string, card: { number: data.pan, exp_month: data.exp_month, exp_year: data.exp_year, cvv: data.cvv } }
  }
  /** An authorization's answer and its transaction's one card event. */
  const declinedEvent = async (card: Record<string, unknown>, amount: number, merchant = MERCHANT) => {
    const answer = await send("AUTHORIZATION", { network_transaction_id: `ntx-${uuid()}`, card, amount, merchant })
    expect(answer.result).toBe("DECLINED")
    const [event] = await events(answer.transaction_id)
    expect(event[3]).toBe(answer.response_code)
    return event[3]
  }

  it("keeps each built-in decline's code on the declined event", async () => {
    const limited = await setup(1_000, { blockedMccCodes: ["7995"], spendingPeriod: { interval: "PER_TRANSACTION", amount: 500 } })
    expect(await declinedEvent(limited.card, 600)).toBe("61")
    expect(await declinedEvent(limited.card, 100, { ...MERCHANT, mcc: "7995" })).toBe("57")
    expect(await declinedEvent({ ...limited.card, exp_year: limited.card.exp_year + 1 }, 100)).toBe("54")
    const wrongCode = String((Number(limited.card.cvv) + 1) % 1000).padStart(3, "0")
    expect(await declinedEvent({ ...limited.card, cvv: wrongCode }, 100)).toBe("N7")
    const poor = await setup(100)
    expect(await declinedEvent(poor.card, 101)).toBe("51")
    expect((await platform.request("POST", `/v1/cards/${poor.cardId}/freeze`)).status).toBe(200)
    expect(await declinedEvent(poor.card, 10)).toBe("62")
    expect((await platform.request("POST", `/v1/cards/${poor.cardId}/close`)).status).toBe(200)
    expect(await declinedEvent(poor.card, 10)).toBe("46")
  })

  it("tells a partial approval (10) from a full one (00) and the program's decline (05), in the transaction and its events", async () => {
    const created = await platform.request("POST", "/v1/authorization-endpoints", { body: { url: receiver.url("/amount/300") } })
    expect(created.status, created.text).toBe(200)
    const endpoint = created.body.id
    try {
      const { card } = await setup(10_000)
      const ntid = `ntx-${uuid()}`
      const partial = await send("AUTHORIZATION", { network_transaction_id: ntid, card, amount: 500, partial_approval_capable: true })
      expect(partial).toMatchObject({ result: "PARTIALLY_APPROVED", response_code: "10", approved_amount: 300 })
      // The program approves 300 of an increment of 300: in full.
      const grown = await send("INCREMENTAL_AUTHORIZATION", { network_transaction_id: ntid, amount: 300 })
      expect(grown).toMatchObject({ result: "APPROVED", response_code: "00" })
      await platform.request("PATCH", `/v1/authorization-endpoints/${endpoint}`, { body: { url: receiver.url("/decline") } })
      const refused = await send("INCREMENTAL_AUTHORIZATION", { network_transaction_id: ntid, amount: 200 })
      expect(refused).toMatchObject({ result: "DECLINED", response_code: "05" })
      await send("AUTHORIZATION_REVERSAL", { network_transaction_id: ntid, amount: 100 })
      await send("CLEARING", { network_transaction_id: ntid, amount: 700 })
      await send("RETURN", { network_transaction_id: ntid, card: { number: card.number }, amount: 50 })
      expect(await events(partial.transaction_id)).toEqual([
        ["AUTHORIZATION", "APPROVED", 300, "10"],
        ["INCREMENTAL_AUTHORIZATION", "APPROVED", 300, "00"],
        ["INCREMENTAL_AUTHORIZATION", "DECLINED", 200, "05"],
        ["AUTHORIZATION_REVERSAL", "APPROVED", 100, "00"],
        ["CLEARING", "APPROVED", 700, "00"],
        ["RETURN", "APPROVED", 50, "00"]
      ])
      // The transaction.updated event carries the codes as the transaction does.
      const updates = (await platform.request("GET", "/v1/events?type=transaction.updated&page_size=100")).body.data
      const last = updates.find((e: any) => e.data.object.id === partial.transaction_id)
      expect(last.data.object.card_events.map((e: any) => e.response_code)).toEqual(["10", "00", "05", "00", "00", "00"])
    } finally {
      await platform.request("DELETE", `/v1/authorization-endpoints/${endpoint}`)
    }
    // The sandbox's messages take the same path: a simulated authorization keeps its 00.
    const { cardId } = await setup(1_000)
    const simulated = await platform.request("POST", "/v1/simulate/authorizations", { body: { card_id: cardId, amount: 100, mcc: "5411" } })
    expect(simulated.status, simulated.text).toBe(200)
    expect(simulated.body.card_events).toMatchObject([{ type: "AUTHORIZATION", result: "APPROVED", response_code: "00" }])
  })

  it("gives an event stored before events kept their code the one what was stored tells, or null", async () => {
    const { card } = await setup(1_000)
    const poor = await send("AUTHORIZATION", { network_transaction_id: `ntx-${uuid()}`, card, amount: 5_000 })
    const ntid = `ntx-${uuid()}`
    const held = await send("AUTHORIZATION", { network_transaction_id: ntid, card, amount: 400 })
    await send("CLEARING", { network_transaction_id: ntid, amount: 400 })
    const asked = await platform.request("POST", "/v1/authorization-endpoints", { body: { url: receiver.url("/amount/300") } })
    expect(asked.status, asked.text).toBe(200)
    let decided: any
    try {
      decided = await send("AUTHORIZATION", { network_transaction_id: `ntx-${uuid()}`, card, amount: 300 })
    } finally {
      await platform.request("DELETE", `/v1/authorization-endpoints/${asked.body.id}`)
    }
    // Rewrite the stored events as they were before the field existed.
    await onDatabase(platform, async (query) => {
      for (const id of [poor.transaction_id, held.transaction_id, decided.transaction_id]) {
        const [row] = await query(`SELECT card_events FROM issuing_transactions WHERE id = '${id}'`)
        const stored = JSON.parse(String(row!.card_events)) as Array<Record<string, unknown>>
        const before = JSON.stringify(stored.map(({ response_code: _, ...rest }) => rest)).replaceAll("'", "''")
        await query(`UPDATE issuing_transactions SET card_events = '${before}' WHERE id = '${id}'`)
      }
    })
    expect(await events(poor.transaction_id)).toEqual([["AUTHORIZATION", "DECLINED", 5_000, "51"]])
    expect(await events(held.transaction_id)).toEqual([
      ["AUTHORIZATION", "APPROVED", 400, "00"],
      ["CLEARING", "APPROVED", 400, "00"]
    ])
    // An approval after a program decision: the amount asked was not kept, so its code cannot be told.
    expect(await events(decided.transaction_id)).toEqual([["AUTHORIZATION", "APPROVED", 300, null]])
  })
})
