import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { type DecisionReceiver, startDecisionReceiver } from "../support/decisionReceiver.js"
import { startPlatform, type TestPlatform } from "../support/platform.js"
import { createWallet, fund, issueCard } from "./helpers.js"

/**
 * Real-time decisions inside the card transaction flow (docs/card-transactions.md#real-time-decisions),
 * over HTTP on both stores, with a real receiver process that verifies every signature with the
 * stock `standardwebhooks` package: the answer approves, declines (WEBHOOK_DECLINED), partially
 * approves, or — late, garbage, dropped — applies the endpoint's timeout_decision; each decision is
 * in `request_history`. A built-in decline never asks; a freeze committed while a decision is
 * pending wins.
 */
/**
 * The endpoint's time-out wherever its answer must arrive in time: the most it may be (100 to
 * 5000 ms, docs/card-transactions.md), so that an answer slowed by a loaded machine is never taken
 * for a late one (at 300 ms it raced the load); only the late case sets a short one.
 */
const ANSWER_MS = 5000

describe.each(STORE_KINDS)("authorizations decided by the program on %s", (kind) => {
  let platform: TestPlatform
  let receiver: DecisionReceiver
  let endpointId: string
  let accountId: string
  let cardId: string

  beforeAll(async () => {
    platform = await startPlatform(kind)
    receiver = await startDecisionReceiver()
    const wallet = await createWallet(platform)
    accountId = wallet.financial_account_id
    await fund(platform, accountId, 100_000)
    cardId = (await issueCard(platform, wallet.id, { blockedMccCodes: ["7995"] })).id
    const created = await platform.request("POST", "/v1/authorization-endpoints", {
      body: { url: receiver.url("/approve"), timeout_ms: ANSWER_MS }
    })
    expect(created.status, created.text).toBe(200)
    endpointId = created.body.id
    await receiver.trust([created.body.secret])
  })
  afterAll(async () => {
    receiver?.close()
    await platform?.close()
  })

  const route = async (path: string, extra: Record<string, unknown> = {}) => {
    const response = await platform.request("PATCH", `/v1/authorization-endpoints/${endpointId}`, {
      body: { url: receiver.url(path), ...extra }
    })
    expect(response.status, response.text).toBe(200)
  }
  const authorize = async (body: Record<string, unknown> = {}) => {
    const response = await platform.request("POST", "/v1/simulate/authorizations", {
      body: { card_id: cardId, amount: 1_000, mcc: "5411", ...body }
    })
    expect(response.status, response.text).toBe(200)
    return response.body
  }

  it("an approval holds the amount and records the decision", async () => {
    await route("/approve")
    const before = (await receiver.log()).length
    const held = await authorize()
    expect(held).toMatchObject({ status: "PENDING", pending_amount: 1_000 })
    expect(held.request_history).toEqual([{ amount: 1_000, approved: true, reason: "webhook_approved", created_at: expect.any(String) }])
    const asked = (await receiver.log()).slice(before)
    expect(asked).toHaveLength(1)
    expect(asked[0]).toMatchObject({ verified: true })
    expect(asked[0].body).toMatchObject({
      type: "authorization.request",
      data: { amount: 1_000, kind: "AUTHORIZATION", partial_approval_capable: false, card: { id: cardId } }
    })
    expect(JSON.stringify(asked[0].body)).not.toMatch(/"(pan|cvv|number)"/)
  })

  it("a decline is WEBHOOK_DECLINED and holds nothing", async () => {
    await route("/decline")
    const available = (await platform.request("GET", `/v1/financial-accounts/${accountId}`)).body.available_balance.amount
    const declined = await authorize()
    expect(declined).toMatchObject({ status: "DECLINED", decline_reason: "WEBHOOK_DECLINED", pending_amount: 0 })
    expect(declined.request_history).toEqual([expect.objectContaining({ approved: false, reason: "webhook_declined" })])
    expect((await platform.request("GET", `/v1/financial-accounts/${accountId}`)).body.available_balance.amount).toBe(available)
  })

  it("a partial approval holds what the program approved, when the merchant can take it", async () => {
    await route("/amount/600")
    const partial = await authorize({ partial_approval_capable: true })
    expect(partial).toMatchObject({ status: "PENDING", amount: 600, authorized_amount: 600, pending_amount: 600 })
    expect(partial.request_history).toEqual([expect.objectContaining({ amount: 600, approved: true, reason: "webhook_approved" })])
    // Not partial-capable: a partial answer declines.
    expect(await authorize()).toMatchObject({ status: "DECLINED", decline_reason: "WEBHOOK_DECLINED" })
  })

  it("late, garbage, a non-2xx and a dropped connection apply the endpoint's timeout_decision", async () => {
    // Two seconds late against a 300 ms time-out: late however loaded the machine.
    await route("/late/2000", { timeout_ms: 300 })
    expect(await authorize()).toMatchObject({
      status: "DECLINED",
      decline_reason: "WEBHOOK_DECLINED",
      request_history: [expect.objectContaining({ approved: false, reason: "webhook_timeout" })]
    })
    await route("/garbage", { timeout_ms: ANSWER_MS })
    expect((await authorize()).request_history).toEqual([expect.objectContaining({ approved: false, reason: "webhook_error" })])
    await route("/status/500")
    expect((await authorize()).request_history).toEqual([expect.objectContaining({ approved: false, reason: "webhook_error" })])
    await route("/drop", { timeout_decision: "APPROVE" })
    expect(await authorize()).toMatchObject({
      status: "PENDING",
      request_history: [expect.objectContaining({ approved: true, reason: "webhook_error" })]
    })
    await route("/approve", { timeout_decision: "DECLINE" })
  })

  it("a built-in decline never asks; increments are asked and recorded too", async () => {
    await route("/approve")
    const before = (await receiver.log()).length
    expect(await authorize({ mcc: "7995" })).toMatchObject({ decline_reason: "MCC_BLOCKED", request_history: [] })
    expect((await receiver.log()).length).toBe(before)
    const held = await authorize()
    const grown = await platform.request("POST", `/v1/simulate/transactions/${held.id}/increment`, { body: { amount: 50 } })
    expect(grown.status, grown.text).toBe(200)
    expect(grown.body).toMatchObject({ pending_amount: 1_050 })
    expect(grown.body.request_history.map((r: any) => r.reason)).toEqual(["webhook_approved", "webhook_approved"])
    const asked = (await receiver.log()).at(-1)
    expect(asked.body.data).toMatchObject({ kind: "INCREMENTAL_AUTHORIZATION", amount: 50 })
  })

  it("a freeze committed while the decision is pending wins", async () => {
    // Answered 2 s after it arrives: the poll and the freeze below fit in that on a loaded machine
    // (500 ms raced them), and the answer still comes well within the time-out.
    await route("/late/2000", { timeout_ms: ANSWER_MS })
    const before = (await receiver.log()).length
    let answered = false
    const pending = authorize().finally(() => {
      answered = true
    })
    // The decision is asked (the receiver has the request, and answers it 2 s later): freeze now.
    await expect
      .poll(async () => (await receiver.log()).slice(before).some((request) => request.body?.data?.card?.id === cardId), {
        interval: 10,
        timeout: 5_000
      })
      .toBe(true)
    const frozen = await platform.request("POST", `/v1/cards/${cardId}/freeze`)
    expect(frozen.status, frozen.text).toBe(200)
    expect(answered).toBe(false)
    expect(await pending).toMatchObject({ status: "DECLINED", decline_reason: "CARD_FROZEN" })
    await platform.request("POST", `/v1/cards/${cardId}/unfreeze`)
    await route("/approve", { timeout_ms: ANSWER_MS })
  })
})
