import { Webhook } from "standardwebhooks"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fund, issueCard } from "../cards/helpers.js"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope, type TestPlatform } from "../support/platform.js"
import { queueDrained } from "../support/queue.js"
import { startDeliveries } from "./deliveries.js"
import type { Receiver } from "./receiver.js"

/**
 * A program's customers see only their own events (docs/webhooks.md#customers-and-tags): events
 * carry the tags of the wallets they concern, and a tagged subscription — here made through two
 * customers' portal sessions — receives only its tag's events, live, by replay and by resend.
 */
describe.each(STORE_KINDS)("customer tags on events and subscriptions on %s", (kind) => {
  let platform: TestPlatform
  let receiver: Receiver
  let stop: (() => Promise<void>) | undefined

  beforeAll(async () => {
    ;({ platform, receiver, stop } = await startDeliveries(kind, { webhookRetryScheduleMs: [60_000], webhookTimeoutMs: 5000 }))
  })
  afterAll(() => stop?.())

  const TYPES = ["wallet.updated", "card.created", "transaction.updated", "transfer.created", "balance.updated"]

  const wallet = async (tag?: string) => {
    const response = await platform.request("POST", "/v1/wallets", {
      body: { holder: { name: "Customer" }, ...(tag === undefined ? {} : { tag }) }
    })
    expect(response.status, response.text).toBe(200)
    return response.body as { id: string; financial_account_id: string; tag: string | null }
  }
  const portalSession = async (scope_tag: string) => {
    const response = await platform.request("POST", "/v1/webhook-portal-sessions", { body: { scope_tag, allowed_event_types: TYPES } })
    expect(response.status, response.text).toBe(200)
    return new URL(response.body.url).searchParams.get("session_token")!
  }
  const portal = (token: string, method: string, path: string, body?: unknown) =>
    platform.request(method, `/v1/webhook-portal${path}`, {
      key: undefined,
      program: null,
      headers: { authorization: `Bearer ${token}` },
      ...(body === undefined ? {} : { body })
    })
  const portalSubscription = async (token: string, suffix: string) => {
    const response = await portal(token, "POST", "/subscriptions", { url: `${receiver.url}${suffix}`, event_types: TYPES })
    expect(response.status, response.text).toBe(200)
    return response.body as { id: string; secret: string; tag: string }
  }
  const pathOf = (suffix: string) => `${new URL(receiver.url).pathname}${suffix}`
  /** The events each path received since `start`, verified with that subscription's secret. */
  const receivedBy = (suffix: string, secret: string, start: number) =>
    receiver.received
      .slice(start)
      .filter((request) => request.path === pathOf(suffix))
      .map((request) => new Webhook(secret).verify(request.body, request.headers) as { id: string; type: string; tags: Array<string> })
  const eventsOf = async (type: string) => {
    const response = await platform.request("GET", `/v1/events?type=${type}&page_size=100`)
    expect(response.status, response.text).toBe(200)
    return response.body.data as Array<{ id: string; type: string; tags: Array<string>; data: { object: any } }>
  }

  it("delivers each customer only the events of its wallets, live, by replay and by resend", async () => {
    const begin = new Date(Date.now() - 1000).toISOString()
    const bobToken = await portalSession("cust_bob")
    const carolToken = await portalSession("cust_carol")
    const bobSub = await portalSubscription(bobToken, "/bob")
    const carolSub = await portalSubscription(carolToken, "/carol")
    const all = await platform.request("POST", "/v1/webhook-subscriptions", { body: { url: `${receiver.url}/all`, event_types: TYPES } })
    expect(all.status, all.text).toBe(200)
    const start = receiver.received.length

    const bob = await wallet("cust_bob")
    const carol = await wallet("cust_carol")
    const dan = await wallet()
    expect([bob.tag, carol.tag, dan.tag]).toEqual(["cust_bob", "cust_carol", null])
    await fund(platform, bob.financial_account_id, 10_000)
    await fund(platform, dan.financial_account_id, 10_000)
    const bobCard = await issueCard(platform, bob.id)
    const carolCard = await issueCard(platform, carol.id)
    const between = await platform.request("POST", "/v1/transfers", {
      body: {
        paymentRail: "book",
        amount: 2_500,
        currency: "USD",
        from_financial_account_id: bob.financial_account_id,
        to_financial_account_id: carol.financial_account_id
      }
    })
    expect(between.status, between.text).toBe(200)
    const authorization = await platform.request("POST", "/v1/simulate/authorizations", {
      body: { card_id: carolCard.id, amount: 700, mcc: "5411", merchant_name: "Carol's grocer" }
    })
    expect(authorization.status, authorization.text).toBe(200)
    const danTransfer = await platform.request("POST", "/v1/transfers", {
      body: {
        paymentRail: "book",
        amount: 100,
        currency: "USD",
        from_financial_account_id: dan.financial_account_id,
        to_financial_account_id: bob.financial_account_id
      }
    })
    expect(danTransfer.status, danTransfer.text).toBe(200)

    // Every event carries the tags of the wallets it concerns.
    const cards = await eventsOf("card.created")
    expect(cards.find((e) => e.data.object.id === bobCard.id)!.tags).toEqual(["cust_bob"])
    expect(cards.find((e) => e.data.object.id === carolCard.id)!.tags).toEqual(["cust_carol"])
    const transfers = await eventsOf("transfer.created")
    expect(transfers.find((e) => e.data.object.id === between.body.id)!.tags).toEqual(["cust_bob", "cust_carol"])
    expect(transfers.find((e) => e.data.object.id === danTransfer.body.id)!.tags).toEqual(["cust_bob"])
    const transactions = await eventsOf("transaction.updated")
    expect(transactions.find((e) => e.data.object.id === authorization.body.id)!.tags).toEqual(["cust_carol"])
    // A transfer's own transaction (no card) is its transfer's wallets'.
    expect(transactions.find((e) => e.data.object.id === between.body.transaction_id)!.tags).toEqual(["cust_bob", "cust_carol"])
    const balances = await eventsOf("balance.updated")
    const danBalances = balances.filter((e) => e.data.object.id === dan.financial_account_id)
    expect(danBalances.length).toBeGreaterThan(0)
    for (const event of danBalances) expect(event.tags).toEqual([])
    for (const event of balances.filter((e) => e.data.object.id === bob.financial_account_id)) expect(event.tags).toEqual(["cust_bob"])

    // Live: the untagged subscription gets everything; each customer only events carrying its tag.
    const expectedFor = (tag: string) =>
      [...cards, ...transfers, ...transactions, ...balances].filter((e) => e.tags.includes(tag)).map((e) => e.id)
    const bobIds = expectedFor("cust_bob")
    const carolIds = expectedFor("cust_carol")
    await receiver.waitFor(
      () =>
        receivedBy("/bob", bobSub.secret, start).length >= bobIds.length &&
        receivedBy("/carol", carolSub.secret, start).length >= carolIds.length &&
        receivedBy("/all", all.body.secret, start).length >= cards.length + transfers.length + transactions.length + balances.length
    )
    // The queue is drained of everything these writes fanned out before the last check.
    await queueDrained(platform.database)
    const bobGot = receivedBy("/bob", bobSub.secret, start)
    expect(new Set(bobGot.map((e) => e.id))).toEqual(new Set(bobIds))
    for (const event of bobGot) expect(event.tags).toContain("cust_bob")
    const carolGot = receivedBy("/carol", carolSub.secret, start)
    expect(new Set(carolGot.map((e) => e.id))).toEqual(new Set(carolIds))
    expect(carolGot.map((e) => e.id)).not.toContain(cards.find((e) => e.data.object.id === bobCard.id)!.id)

    // Replay through Bob's portal: only Bob's events, read from his tag.
    const replayStart = receiver.received.length
    const replay = await portal(bobToken, "POST", `/subscriptions/${bobSub.id}/replay`, { begin, end: new Date().toISOString() })
    expect(replay.status, replay.text).toBe(200)
    expect(replay.body.events_queued).toBe(bobIds.length)
    await receiver.waitFor(() => receivedBy("/bob", bobSub.secret, replayStart).length >= bobIds.length)
    expect(new Set(receivedBy("/bob", bobSub.secret, replayStart).map((e) => e.id))).toEqual(new Set(bobIds))
    // A customer owning nothing replays nothing.
    const nobodyToken = await portalSession("cust_nobody")
    const nobodySub = await portalSubscription(nobodyToken, "/nobody")
    const nothing = await portal(nobodyToken, "POST", `/subscriptions/${nobodySub.id}/replay`, { begin, end: new Date().toISOString() })
    expect(nothing.body.events_queued).toBe(0)

    // Resend: another customer's event is not found for a portal; the customer's own is sent.
    const carolCardEvent = cards.find((e) => e.data.object.id === carolCard.id)!
    const bobCardEvent = cards.find((e) => e.data.object.id === bobCard.id)!
    expectEnvelope(await portal(bobToken, "POST", `/events/${carolCardEvent.id}/resend`, { subscription_id: bobSub.id }), 404, {
      param: "event_id"
    })
    const own = await portal(bobToken, "POST", `/events/${bobCardEvent.id}/resend`, { subscription_id: bobSub.id })
    expect(own.status, own.text).toBe(200)
    expect(own.body.data).toHaveLength(1)
    // With an API key: a tagged target of an event without its tag is refused; untargeted skips it.
    expectEnvelope(
      await platform.request("POST", `/v1/events/${carolCardEvent.id}/resend`, { body: { subscription_id: bobSub.id } }),
      422,
      { code: "event_tag_not_subscribed", param: "subscription_id" }
    )
    const untargeted = await platform.request("POST", `/v1/events/${carolCardEvent.id}/resend`, { body: {} })
    expect(untargeted.status, untargeted.text).toBe(200)
    expect(untargeted.body.data.map((a: any) => a.webhook_subscription_id).sort()).toEqual([all.body.id, carolSub.id].sort())

    // Carol's test event carries her tag: Bob's portal cannot send it again.
    const test = await portal(carolToken, "POST", `/subscriptions/${carolSub.id}/test`)
    expect(test.status, test.text).toBe(200)
    const [testEvent] = (await eventsOf("webhook.test")).filter((e) => e.id === test.body.event_id)
    expect(testEvent!.tags).toEqual(["cust_carol"])
    const resendStart = receiver.received.length
    expectEnvelope(await portal(bobToken, "POST", `/events/${test.body.event_id}/resend`, { subscription_id: bobSub.id }), 404, {
      param: "event_id"
    })
    expect(receiver.received.slice(resendStart).filter((r) => r.path === pathOf("/bob"))).toHaveLength(0)
  })

  it("tags each event with the wallet tag of its time", async () => {
    const erin = await wallet("cust_erin")
    const patched = await platform.request("PATCH", `/v1/wallets/${erin.id}`, { body: { tag: "cust_erin2" } })
    expect(patched.status, patched.text).toBe(200)
    await fund(platform, erin.financial_account_id, 500)
    const created = (await eventsOf("wallet.updated")).find((e) => e.data.object.id === erin.id)!
    expect(created.tags).toEqual(["cust_erin2"])
    const balance = (await eventsOf("balance.updated")).find((e) => e.data.object.id === erin.financial_account_id)!
    expect(balance.tags).toEqual(["cust_erin2"])
    const walletCreated = (await platform.request("GET", "/v1/events?type=wallet.created&page_size=100")).body.data.find(
      (e: any) => e.data.object.id === erin.id
    )
    expect(walletCreated.tags).toEqual(["cust_erin"])
  })

  it("tags each event of a batch with the wallets of its own transfer", async () => {
    const [fay, gus, plain] = [await wallet("cust_fay"), await wallet("cust_gus"), await wallet()]
    await fund(platform, fay.financial_account_id, 500)
    const book = (from: string, to: string, amount: number) => ({
      payment_rail: "book",
      amount,
      currency: "USD",
      from_financial_account_id: from,
      to_financial_account_id: to
    })
    // One request, so each kind of event of the three transfers is written by one statement.
    const response = await platform.request("POST", "/v1/transfers/batch", {
      body: {
        transfers: [
          book(fay.financial_account_id, gus.financial_account_id, 10),
          book(fay.financial_account_id, plain.financial_account_id, 20),
          book(plain.financial_account_id, gus.financial_account_id, 5)
        ]
      }
    })
    expect(response.status, response.text).toBe(200)
    const [both, fayOnly, gusOnly] = response.body.data as Array<{ id: string; transaction_id: string }>
    const tagsOf = (events: Array<{ tags: Array<string>; data: { object: any } }>, id: string) =>
      [...events.find((e) => e.data.object.id === id)!.tags].sort()
    const created = await eventsOf("transfer.created")
    expect(tagsOf(created, both!.id)).toEqual(["cust_fay", "cust_gus"])
    expect(tagsOf(created, fayOnly!.id)).toEqual(["cust_fay"])
    expect(tagsOf(created, gusOnly!.id)).toEqual(["cust_gus"])
    const transactions = await eventsOf("transaction.updated")
    expect(tagsOf(transactions, both!.transaction_id)).toEqual(["cust_fay", "cust_gus"])
    expect(tagsOf(transactions, fayOnly!.transaction_id)).toEqual(["cust_fay"])
    expect(tagsOf(transactions, gusOnly!.transaction_id)).toEqual(["cust_gus"])
    const balances = await eventsOf("balance.updated")
    expect(tagsOf(balances, gus.financial_account_id)).toEqual(["cust_gus"])
    expect(tagsOf(balances, plain.financial_account_id)).toEqual([])
  })
})

describe.each(STORE_KINDS)("a re-tagged subscription on %s", (kind) => {
  let platform: TestPlatform
  let receiver: Receiver
  let stop: (() => Promise<void>) | undefined

  beforeAll(async () => {
    // The retry waits 4 s (±20 %): the PATCH below lands while it is queued even on a loaded machine.
    ;({ platform, receiver, stop } = await startDeliveries(kind, { webhookRetryScheduleMs: [4000], webhookTimeoutMs: 5000 }))
  })
  afterAll(() => stop?.())

  it("is never sent a queued retry of the old tag's event", async () => {
    const subscription = await platform.request("POST", "/v1/webhook-subscriptions", {
      body: { url: `${receiver.url}/retag`, event_types: ["card.created"], tag: "cust_old" }
    })
    expect(subscription.status, subscription.text).toBe(200)
    const path = `${new URL(receiver.url).pathname}/retag`
    receiver.reply = (request) => (request.path === path ? { status: 500 } : { status: 200 })
    const owner = await platform.request("POST", "/v1/wallets", { body: { holder: { name: "Old" }, tag: "cust_old" } })
    const card = await issueCard(platform, owner.body.id)
    const tries = () => receiver.received.filter((request) => request.path === path && JSON.parse(request.body).data.object.id === card.id)
    // The first try fails and is queued again; the subscription moves to another customer meanwhile.
    await receiver.waitFor(() => tries().length >= 1)
    const moved = await platform.request("PATCH", `/v1/webhook-subscriptions/${subscription.body.id}`, { body: { tag: "cust_new" } })
    expect(moved.status, moved.text).toBe(200)
    // The queued retry leaves the queue when it falls due: taken off unsent, or (the bug) sent.
    await queueDrained(platform.database, { subscriptionId: subscription.body.id })
    expect(tries()).toHaveLength(1)
  })
})
