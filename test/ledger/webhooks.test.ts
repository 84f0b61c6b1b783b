import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope, type TestPlatform, uuid } from "../support/platform.js"
import { queueDrained } from "../support/queue.js"
import { startDeliveries } from "../webhooks/deliveries.js"
import type { Receiver } from "../webhooks/receiver.js"
import { createWallet, fund, transfer } from "./support.js"

/**
 * Transfer events reach webhook subscribers on every posting path: the general posting (first
 * transfer of a currency, which creates the settlement account; attaching to a transaction) and,
 * on PostgreSQL, the one-statement posting (issuing_post_transfer), whose fan-out is the same SQL
 * function the webhook store uses. A refused transfer (insufficient funds) emits nothing.
 */
describe.each(STORE_KINDS)("transfer events and their webhooks on %s", (kind) => {
  let platform: TestPlatform
  let receiver: Receiver
  let stop: (() => Promise<void>) | undefined

  beforeAll(async () => {
    ;({ platform, receiver, stop } = await startDeliveries(kind, { webhookRetryScheduleMs: [150, 150, 150], webhookTimeoutMs: 2000 }))
  })
  afterAll(() => stop?.())

  it("delivers transfer.created, transaction.updated and the settlement event of every posted transfer", async () => {
    const types = ["transfer.created", "transaction.updated", "transfer.settled", "transfer.settled.instant"]
    const subscription = await platform.request("POST", "/v1/webhook-subscriptions", { body: { url: receiver.url, event_types: types } })
    expect(subscription.status, subscription.text).toBe(200)
    const a = await createWallet(platform, "A")
    const b = await createWallet(platform, "B")

    const first = await fund(platform, a.financial_account_id, 500) // creates the settlement account
    const second = await fund(platform, a.financial_account_id, 500) // settlement account exists
    const book = await transfer(platform, {
      paymentRail: "book",
      amount: 300,
      from_financial_account_id: a.financial_account_id,
      to_financial_account_id: b.financial_account_id
    })
    expect(book.status, book.text).toBe(200)
    const idempotent = await platform.request("POST", "/v1/transfers", {
      idempotencyKey: uuid(),
      body: { paymentRail: "ach_same_day", amount: 100, currency: "USD", from_financial_account_id: a.financial_account_id }
    })
    expect(idempotent.status, idempotent.text).toBe(200)
    expect(idempotent.body.status).toBe("PENDING")
    const refused = await transfer(platform, {
      paymentRail: "book",
      amount: 10_000,
      from_financial_account_id: a.financial_account_id,
      to_financial_account_id: b.financial_account_id
    })
    expectEnvelope(refused, 422, { code: "insufficient_funds", param: "amount" })

    const expected: Array<[string, string]> = [
      [first.id, "transfer.created"],
      [first.id, "transfer.settled.instant"],
      [second.id, "transfer.created"],
      [second.id, "transfer.settled.instant"],
      [book.body.id, "transfer.created"],
      [book.body.id, "transfer.settled"],
      [idempotent.body.id, "transfer.created"],
      [first.transaction_id, "transaction.updated"],
      [second.transaction_id, "transaction.updated"],
      [book.body.transaction_id, "transaction.updated"],
      [idempotent.body.transaction_id, "transaction.updated"]
    ]
    const seen = () => receiver.received.map((r) => JSON.parse(r.body)).map((e) => [e.data.object.id, e.type] as [string, string])
    await receiver.waitFor(() => expected.every(([id, type]) => seen().some(([i, t]) => i === id && t === type)))
    // Exactly one delivery per event: 11 events, nothing for the refused transfer. Once the queue
    // is empty every delivery has been sent and recorded, so the count is final.
    await queueDrained(platform.database)
    expect(new Set(receiver.received.map((r) => r.headers["webhook-id"])).size).toBe(expected.length)

    // The events API shows the same events, the transfer's object as the API returns it.
    const events = await platform.request("GET", "/v1/events?type=transfer.created&page_size=100")
    expect(events.body.total_count).toBe(4)
    const created = events.body.data.find((e: any) => e.data.object.id === book.body.id)
    expect(created.data.object).toEqual(book.body)
    const instant = await platform.request("GET", "/v1/events?type=transfer.settled.instant&page_size=100")
    expect(instant.body.total_count).toBe(2)
  })
})
