import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { type DecisionReceiver, startDecisionReceiver } from "../support/decisionReceiver.js"
import { expectEnvelope, startPlatform, type TestPlatform, uuid } from "../support/platform.js"
import { startReceiver, type Receiver } from "../webhooks/receiver.js"
import { createWallet, fund, issueCard } from "./helpers.js"

/**
 * Operations that call out under an Idempotency-Key (docs/api.md#idempotency): an authorization or
 * an increment that asks the program's authorization endpoint, and the test event delivered at
 * once, write once after the call, with their answer. The answer is the one the endpoint sends —
 * byte for byte what `GET` answers for the same transaction — and a retry replays it with
 * `Idempotent-Replayed: true`, asking nobody again and writing nothing. Both stores.
 * The crash between the decision and the answer: test/faults/commit-point.test.ts.
 */
describe.each(STORE_KINDS)("Idempotency-Keys on operations that call out, on %s", (kind) => {
  let platform: TestPlatform
  let decisions: DecisionReceiver
  let hooks: Receiver
  let endpointId: string
  beforeAll(async () => {
    platform = await startPlatform(kind)
    decisions = await startDecisionReceiver()
    hooks = await startReceiver()
    const endpoint = await platform.request("POST", "/v1/authorization-endpoints", {
      body: { url: decisions.url("/approve"), timeout_ms: 5000 }
    })
    expect(endpoint.status, endpoint.text).toBe(200)
    endpointId = endpoint.body.id
  })
  afterAll(async () => {
    decisions?.close()
    await hooks?.close()
    await platform?.close()
  })

  const decideWith = async (mode: string) => {
    const updated = await platform.request("PATCH", `/v1/authorization-endpoints/${endpointId}`, { body: { url: decisions.url(mode) } })
    expect(updated.status, updated.text).toBe(200)
  }
  /** A funded wallet's account and a card on it. */
  const cardWithFunds = async (funds: number) => {
    const wallet = await createWallet(platform)
    await fund(platform, wallet.financial_account_id, funds)
    return { card: await issueCard(platform, wallet.id), accountId: wallet.financial_account_id as string }
  }
  const pending = async (accountId: string) =>
    (await platform.request("GET", `/v1/financial-accounts/${accountId}`)).body.pending_balance.amount as number
  const transactionsOf = async (cardId: string) =>
    (await platform.request("GET", `/v1/transactions?card_id=${cardId}&page_size=100`)).body.data as Array<{ id: string }>
  /** How many decisions the receiver was asked about the transaction. */
  const askedAbout = async (transactionId: string) =>
    (await decisions.log()).filter((received) => received.body?.data?.object?.id === transactionId).length
  /** Sends the same request twice with one key: the first answer, and the replay. */
  const twice = async (path: string, body: unknown) => {
    const key = uuid()
    const first = await platform.request("POST", path, { body, idempotencyKey: key })
    const again = await platform.request("POST", path, { body, idempotencyKey: key })
    return { first, again }
  }
  const expectReplayOf = (first: { text: string; headers: Headers }, again: { text: string; status: number; headers: Headers }) => {
    expect(first.headers.get("idempotent-replayed")).toBeNull()
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    expect(again.text).toBe(first.text)
  }

  it("answers an approved authorization as GET shows its transaction, and replays it byte for byte, asked and held once", async () => {
    await decideWith("/approve")
    const { card, accountId } = await cardWithFunds(10_000)
    const { first, again } = await twice("/v1/simulate/authorizations", { card_id: card.id, amount: 1_200, mcc: "5411" })
    expect(first.status, first.text).toBe(200)
    expect(first.headers.get("content-type")).toContain("application/json")
    expect(first.body).toMatchObject({ status: "PENDING", pending_amount: 1_200, request_history: [{ reason: "webhook_approved" }] })
    expect(again.status).toBe(200)
    expectReplayOf(first, again)
    expect((await platform.request("GET", `/v1/transactions/${first.body.id}`)).text).toBe(first.text)
    expect(await askedAbout(first.body.id)).toBe(1)
    expect((await transactionsOf(card.id)).map((t) => t.id)).toEqual([first.body.id])
    expect(await pending(accountId)).toBe(1_200)
  })

  it("replays an increment and a financial authorization byte for byte, each asked and posted once", async () => {
    await decideWith("/approve")
    const { card, accountId } = await cardWithFunds(10_000)
    const held = await platform.request("POST", "/v1/simulate/authorizations", { body: { card_id: card.id, amount: 1_000, mcc: "5411" } })
    expect(held.status, held.text).toBe(200)
    const increment = await twice(`/v1/simulate/transactions/${held.body.id}/increment`, { amount: 300 })
    expect(increment.first.status, increment.first.text).toBe(200)
    expect(increment.first.body).toMatchObject({ authorized_amount: 1_300, pending_amount: 1_300 })
    expectReplayOf(increment.first, increment.again)
    expect((await platform.request("GET", `/v1/transactions/${held.body.id}`)).text).toBe(increment.first.text)
    expect(await pending(accountId)).toBe(1_300)

    const single = await twice("/v1/simulate/authorizations", {
      card_id: card.id,
      amount: 500,
      mcc: "5411",
      kind: "FINANCIAL_AUTHORIZATION"
    })
    expect(single.first.status, single.first.text).toBe(200)
    expect(single.first.body).toMatchObject({ status: "SETTLED", settled_amount: 500 })
    expectReplayOf(single.first, single.again)
    expect(await askedAbout(single.first.body.id)).toBe(1)
    expect((await transactionsOf(card.id)).length).toBe(2)
    const account = (await platform.request("GET", `/v1/financial-accounts/${accountId}`)).body
    expect([account.balance.amount, account.pending_balance.amount]).toEqual([9_500, 1_300])
  })

  it("replays the program's decline and a built-in decline as first answered, recorded once", async () => {
    const { card, accountId } = await cardWithFunds(10_000)
    await decideWith("/decline")
    const declined = await twice("/v1/simulate/authorizations", { card_id: card.id, amount: 700, mcc: "5411" })
    expect(declined.first.body).toMatchObject({ status: "DECLINED", decline_reason: "WEBHOOK_DECLINED" })
    expectReplayOf(declined.first, declined.again)
    expect(await askedAbout(declined.first.body.id)).toBe(1)
    // A blocked merchant category: declined before anyone is asked.
    const blocked = await issueCard(platform, card.wallet_id, { blocked_mcc_codes: ["7995"] })
    const refused = await twice("/v1/simulate/authorizations", { card_id: blocked.id, amount: 100, mcc: "7995" })
    expect(refused.first.body).toMatchObject({ status: "DECLINED", decline_reason: "MCC_BLOCKED" })
    expectReplayOf(refused.first, refused.again)
    expect(await askedAbout(refused.first.body.id)).toBe(0)
    // Past the available funds: a built-in decline too, the program never asked (issue 45, item 5).
    await decideWith("/approve")
    const poor = await twice("/v1/simulate/authorizations", { card_id: card.id, amount: 20_000, mcc: "5411" })
    expect(poor.first.body).toMatchObject({ status: "DECLINED", decline_reason: "INSUFFICIENT_FUNDS" })
    expectReplayOf(poor.first, poor.again)
    expect(await askedAbout(poor.first.body.id)).toBe(0)
    expect((await transactionsOf(card.id)).length).toBe(2)
    expect((await transactionsOf(blocked.id)).length).toBe(1)
    expect(await pending(accountId)).toBe(0)
  })

  it("stores a refusal of an operation that calls out, and replays it", async () => {
    const { first, again } = await twice("/v1/simulate/authorizations", { card_id: uuid(), amount: 100, mcc: "5411" })
    expectEnvelope(first, 404, { param: "card_id" })
    expectReplayOf(first, again)
  })

  it("sends the test event once under one key: the event and its attempt written with the answer, replayed as first sent", async () => {
    const subscription = await platform.request("POST", "/v1/webhook-subscriptions", {
      body: { url: hooks.url, event_types: ["card.created"] }
    })
    expect(subscription.status, subscription.text).toBe(200)
    const before = hooks.received.length
    const { first, again } = await twice(`/v1/webhook-subscriptions/${subscription.body.id}/test`, undefined)
    expect(first.status, first.text).toBe(200)
    expect(first.body).toMatchObject({ object: "webhook_attempt", status: "SUCCESS", webhook_subscription_id: subscription.body.id })
    expectReplayOf(first, again)
    expect(hooks.received.length - before).toBe(1)
    const event = await platform.request("GET", `/v1/events/${first.body.event_id}`)
    expect(event.status, event.text).toBe(200)
    expect(event.body.type).toBe("webhook.test")
    const attempts = await platform.request("GET", `/v1/webhook-attempts?webhook_subscription_id=${subscription.body.id}`)
    expect(attempts.body.data.map((attempt: { id: string }) => attempt.id)).toEqual([first.body.id])
  })
})
