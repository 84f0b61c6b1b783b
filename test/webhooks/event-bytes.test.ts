import * as fs from "node:fs"
import * as path from "node:path"
import { SUBSCRIBABLE_EVENT_TYPES } from "@issuing/core"
import { Webhook } from "standardwebhooks"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fund, issueCard } from "../cards/helpers.js"
import { STORE_KINDS } from "../support/databases.js"
import type { TestPlatform } from "../support/platform.js"
import { startDeliveries } from "./deliveries.js"
import type { Receiver } from "./receiver.js"

/**
 * Whatever form the stores keep an event in (docs/operations.md#disk-per-transfer), every reader
 * gets the same bytes: GET /v1/events, GET /v1/events/{id} and the signed webhook body of each
 * event a funding, a book transfer (single and batched, with and without a description and
 * metadata) and a card authorization write. Ids and timestamps are numbered by first appearance
 * within each text, so a field restored from the event's own columns that came back different
 * shows as a new number. The expected texts are event-bytes.<store>.json, written from the release
 * before events were stored compactly (ISSUING_WRITE_EVENT_BYTES=1 rewrites them: never to make
 * this test pass). On PostgreSQL the balance.updated its functions write are delivered as that
 * function's JSON text (spaces after colons and commas), as before.
 */
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g
const ISO = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g

const normalized = (text: string): string => {
  const ids = new Map<string, number>()
  const times = new Map<string, number>()
  const number = (seen: Map<string, number>, value: string) => {
    if (!seen.has(value)) seen.set(value, seen.size + 1)
    return seen.get(value)
  }
  return text.replace(UUID, (id) => `<id${number(ids, id)}>`).replace(ISO, (time) => `<t${number(times, time)}>`)
}

/** The JSON text of one element of a list's `data` as the server sent it (the list is compact JSON). */
const elementsOf = (listText: string): Array<string> => {
  const data = JSON.parse(listText).data as Array<unknown>
  // The list's bytes hold each element's bytes in order; find each by its re-serialization's
  // length, then check the slice is exactly that element.
  const start = listText.indexOf('"data":[') + '"data":['.length
  const out: Array<string> = []
  let at = start
  for (const element of data) {
    const length = JSON.stringify(element).length
    const slice = listText.slice(at, at + length)
    expect(JSON.parse(slice)).toEqual(element)
    out.push(slice)
    at += length + 1
  }
  return out
}

describe.each(STORE_KINDS)("the bytes of events as read and delivered on %s", (kind) => {
  let platform: TestPlatform
  let receiver: Receiver
  let stop: (() => Promise<void>) | undefined

  beforeAll(async () => {
    ;({ platform, receiver, stop } = await startDeliveries(kind, { webhookRetryScheduleMs: [60_000], webhookTimeoutMs: 5000 }))
  })
  afterAll(() => stop?.())

  const ok = async (method: string, path: string, body?: unknown) => {
    const response = await platform.request(method, path, body === undefined ? {} : { body })
    expect(response.status, response.text).toBe(200)
    return response
  }

  it("reads and delivers each event of a transfer and an authorization as it did", async () => {
    const subscription = (await ok("POST", "/v1/webhook-subscriptions", { url: receiver.url, event_types: SUBSCRIBABLE_EVENT_TYPES }))
      .body as { secret: string }
    const a = (await ok("POST", "/v1/wallets", { holder: { name: "Ada" } })).body
    const b = (await ok("POST", "/v1/wallets", { holder: { name: "Bob" }, tag: "cust_b" })).body
    const start = receiver.received.length
    await fund(platform, a.financial_account_id, 10_000)
    const book = { paymentRail: "book", currency: "USD", from_financial_account_id: a.financial_account_id }
    await ok("POST", "/v1/transfers", { ...book, amount: 250, to_financial_account_id: b.financial_account_id })
    await ok("POST", "/v1/transfers", {
      ...book,
      amount: 125,
      to_financial_account_id: b.financial_account_id,
      description: "rent",
      metadata: { order: "42" }
    })
    await ok("POST", "/v1/transfers/batch", {
      transfers: [
        { ...book, amount: 5, to_financial_account_id: b.financial_account_id },
        { ...book, amount: 7, to_financial_account_id: b.financial_account_id, description: "tip" }
      ]
    })
    const card = await issueCard(platform, a.id)
    await ok("POST", "/v1/simulate/authorizations", { card_id: card.id, amount: 300, mcc: "5411", merchant_name: "Grocer" })

    const types = ["transaction.updated", "transfer.created", "transfer.settled", "transfer.settled.instant", "balance.updated"]
    const listed: Array<string> = []
    for (const type of types) listed.push(...elementsOf((await ok("GET", `/v1/events?type=${type}&page_size=100`)).text))
    const byId = new Map<string, string>()
    for (const text of listed) {
      const id = JSON.parse(text).id as string
      byId.set(id, text)
      // The event by id is the same bytes as its list element.
      expect((await ok("GET", `/v1/events/${id}`)).text).toBe(text)
    }
    await receiver.waitFor((received) => received.slice(start).filter((r) => byId.has(r.headers["webhook-id"] ?? "")).length >= byId.size)
    const delivered = new Map<string, string>()
    for (const request of receiver.received.slice(start)) {
      const id = request.headers["webhook-id"] ?? ""
      if (!byId.has(id)) continue
      new Webhook(subscription.secret).verify(request.body, request.headers)
      delivered.set(id, request.body)
    }
    const pairs = [...byId].map(([id, text]) => {
      const body = delivered.get(id)!
      return normalized(body === text ? text : `${text}\nwebhook: ${body}`)
    })
    const fixture = path.join(import.meta.dirname, `event-bytes.${kind}.json`)
    if (process.env.ISSUING_WRITE_EVENT_BYTES === "1") fs.writeFileSync(fixture, `${JSON.stringify(pairs.sort(), null, 2)}\n`)
    expect(pairs.sort()).toEqual(JSON.parse(fs.readFileSync(fixture, "utf8")))
  })
})
