import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createWallet, fund, issueCard } from "../cards/helpers.js"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope, type TestPlatform, type TestResponse } from "../support/platform.js"
import { startDeliveries } from "../webhooks/deliveries.js"
import type { Receiver } from "../webhooks/receiver.js"

// `metadata` on wallets, cards, transfers and webhook subscriptions (docs/api.md#metadata): set at
// creation, returned in every JSON of the object, changed by PATCH Stripe's way, limits refused
// with 400 naming the key path and nothing written.
describe.each(STORE_KINDS)("metadata on %s", (kind) => {
  let platform: TestPlatform
  let receiver: Receiver
  let stop: (() => Promise<void>) | undefined
  let wallet: { id: string; financial_account_id: string }
  let other: { id: string; financial_account_id: string }

  beforeAll(async () => {
    ;({ platform, receiver, stop } = await startDeliveries(kind))
    wallet = await createWallet(platform)
    other = await createWallet(platform)
    await fund(platform, wallet.financial_account_id, 1_000_000)
  })
  afterAll(() => stop?.())

  const ok = (response: TestResponse) => {
    expect(response.status, response.text).toBe(200)
    return response.body
  }
  const post = (path: string, body: unknown) => platform.request("POST", path, { body })
  const patch = (path: string, body: unknown) => platform.request("PATCH", path, { body })
  const get = (path: string) => platform.request("GET", path)
  /** The event of `type` about object `id`, as GET /v1/events lists it. */
  const eventsAbout = async (type: string, id: string) =>
    (ok(await get(`/v1/events?type=${type}&page_size=100`)).data as Array<any>).filter((event) => event.data.object.id === id)
  /** The `data.object` of each webhook delivery of `type` about `id` the receiver got. */
  const deliveredAbout = (type: string, id: string) =>
    receiver.received.map((r) => JSON.parse(r.body)).filter((event) => event.type === type && event.data.object.id === id)
  const waitForDelivery = (type: string, id: string) => receiver.waitFor(() => deliveredAbout(type, id).length > 0)

  const TRANSFER = { paymentRail: "book", amount: 1, currency: "USD" }
  const transferBody = () => ({
    ...TRANSFER,
    from_financial_account_id: wallet.financial_account_id,
    to_financial_account_id: other.financial_account_id
  })

  it("is {} when unset and as sent when set at creation, in every JSON of the object", async () => {
    const subscription = ok(
      await post("/v1/webhook-subscriptions", {
        url: receiver.url,
        event_types: ["wallet.created", "card.created", "card.updated", "transfer.created"],
        metadata: { owner: "payments" }
      })
    )
    expect(subscription.metadata).toEqual({ owner: "payments" })
    expect(ok(await get(`/v1/webhook-subscriptions/${subscription.id}`)).metadata).toEqual({ owner: "payments" })
    const subscriptions = ok(await get("/v1/webhook-subscriptions?page_size=100")).data as Array<any>
    expect(subscriptions.find((s) => s.id === subscription.id).metadata).toEqual({ owner: "payments" })

    // A key may be any text up to 40 characters, "__proto__" included; "" at creation sets nothing.
    const metadata = { customer: "c_42", "ключ 🙂": "значение", ["__proto__"]: "a key like any other" }
    const created = ok(await post("/v1/wallets", { holder: { name: "Grace Hopper" }, metadata: { ...metadata, dropped: "" } }))
    expect(Object.entries(created.metadata)).toEqual(Object.entries(metadata))
    expect(ok(await post("/v1/wallets", { holder: { name: "No Metadata" } })).metadata).toEqual({})
    expect(ok(await get(`/v1/wallets/${created.id}`)).metadata).toEqual(created.metadata)
    const wallets = ok(await get("/v1/wallets?page_size=100")).data as Array<any>
    expect(wallets.find((w) => w.id === created.id).metadata).toEqual(created.metadata)
    expect(wallets.find((w) => w.id === wallet.id).metadata).toEqual({})
    expect((await eventsAbout("wallet.created", created.id)).map((e) => e.data.object.metadata)).toEqual([created.metadata])

    const card = await issueCard(platform, wallet.id, { metadata: { employee: "e_7" } })
    expect(card.metadata).toEqual({ employee: "e_7" })
    expect(ok(await get(`/v1/cards/${card.id}`)).metadata).toEqual({ employee: "e_7" })
    expect(
      (ok(await get(`/v1/cards?wallet_id=${wallet.id}&page_size=100`)).data as Array<any>).find((c) => c.id === card.id).metadata
    ).toEqual({
      employee: "e_7"
    })
    expect((await eventsAbout("card.created", card.id)).map((e) => e.data.object.metadata)).toEqual([{ employee: "e_7" }])

    const transfer = ok(await post("/v1/transfers", { ...transferBody(), metadata: { invoice: "inv_9" } }))
    expect(transfer.metadata).toEqual({ invoice: "inv_9" })
    expect(ok(await post("/v1/transfers", transferBody())).metadata).toEqual({})
    expect(ok(await get(`/v1/transfers/${transfer.id}`)).metadata).toEqual({ invoice: "inv_9" })
    const transfers = ok(await get(`/v1/transfers?financial_account_id=${wallet.financial_account_id}&page_size=100`)).data as Array<any>
    expect(transfers.find((t) => t.id === transfer.id).metadata).toEqual({ invoice: "inv_9" })
    expect((await eventsAbout("transfer.created", transfer.id)).map((e) => e.data.object.metadata)).toEqual([{ invoice: "inv_9" }])
    const settled = await eventsAbout("transfer.settled", transfer.id)
    expect(settled.map((e) => e.data.object.metadata)).toEqual([{ invoice: "inv_9" }])

    // The signed deliveries carry the same objects.
    await waitForDelivery("wallet.created", created.id)
    await waitForDelivery("card.created", card.id)
    await waitForDelivery("transfer.created", transfer.id)
    expect(Object.entries(deliveredAbout("wallet.created", created.id)[0].data.object.metadata)).toEqual(Object.entries(metadata))
    expect(deliveredAbout("card.created", card.id)[0].data.object.metadata).toEqual({ employee: "e_7" })
    expect(deliveredAbout("transfer.created", transfer.id)[0].data.object.metadata).toEqual({ invoice: "inv_9" })
  })

  it('changes a card\'s metadata Stripe\'s way: keys set, "" removes one, "" or null clears all; card.updated each time', async () => {
    const card = await issueCard(platform, wallet.id, { metadata: { a: "1", b: "2", c: "3" } })
    const changed = ok(await patch(`/v1/cards/${card.id}`, { metadata: { a: "one", b: "", d: "4" } }))
    expect(changed.metadata).toEqual({ a: "one", c: "3", d: "4" })
    // Only metadata changed: the controls are as they were, and card.updated says so.
    expect(changed.allowed_mcc_codes).toEqual(card.allowed_mcc_codes)
    expect(ok(await get(`/v1/cards/${card.id}`))).toEqual(changed)
    expect((await eventsAbout("card.updated", card.id)).map((e) => e.data.object.metadata)).toEqual([{ a: "one", c: "3", d: "4" }])
    await waitForDelivery("card.updated", card.id)
    expect(deliveredAbout("card.updated", card.id)[0].data.object.metadata).toEqual({ a: "one", c: "3", d: "4" })
    // Removing a key that is not there, or setting one as it is, changes nothing: no event.
    expect(ok(await patch(`/v1/cards/${card.id}`, { metadata: { a: "one", zzz: "" } }))).toEqual(changed)
    expect(ok(await patch(`/v1/cards/${card.id}`, { metadata: {} }))).toEqual(changed)
    // Metadata and a control together, then clearing both ways.
    const both = ok(await patch(`/v1/cards/${card.id}`, { blockedMccCodes: ["7995"], metadata: { e: "5" } }))
    expect(both).toMatchObject({ blocked_mcc_codes: ["7995"], metadata: { a: "one", c: "3", d: "4", e: "5" } })
    expect(ok(await patch(`/v1/cards/${card.id}`, { metadata: "" })).metadata).toEqual({})
    ok(await patch(`/v1/cards/${card.id}`, { metadata: { f: "6" } }))
    const cleared = ok(await patch(`/v1/cards/${card.id}`, { metadata: null }))
    expect(cleared).toMatchObject({ metadata: {}, blocked_mcc_codes: ["7995"] })
    expect((await eventsAbout("card.updated", card.id)).map((e) => e.data.object.metadata)).toEqual(
      // Newest first.
      [{}, { f: "6" }, {}, { a: "one", c: "3", d: "4", e: "5" }, { a: "one", c: "3", d: "4" }]
    )
    // A closed card keeps what it had: 409, as for its controls.
    ok(await patch(`/v1/cards/${card.id}`, { metadata: { last: "words" } }))
    expect((await platform.request("POST", `/v1/cards/${card.id}/close`)).status).toBe(200)
    expectEnvelope(await patch(`/v1/cards/${card.id}`, { metadata: null }), 409, { code: "conflict" })
    expect(ok(await get(`/v1/cards/${card.id}`)).metadata).toEqual({ last: "words" })
  })

  it("changes a subscription's metadata the same way (subscriptions have no events)", async () => {
    const created = ok(
      await post("/v1/webhook-subscriptions", { url: receiver.url, event_types: ["wallet.created"], metadata: { x: "1", y: "2" } })
    )
    const changed = ok(await patch(`/v1/webhook-subscriptions/${created.id}`, { metadata: { x: "", z: "3" } }))
    expect(changed.metadata).toEqual({ y: "2", z: "3" })
    expect(ok(await patch(`/v1/webhook-subscriptions/${created.id}`, { description: "kept" })).metadata).toEqual({ y: "2", z: "3" })
    expect(ok(await get(`/v1/webhook-subscriptions/${created.id}`)).metadata).toEqual({ y: "2", z: "3" })
    expect(ok(await patch(`/v1/webhook-subscriptions/${created.id}`, { metadata: null })).metadata).toEqual({})
    expect(ok(await patch(`/v1/webhook-subscriptions/${created.id}`, { metadata: { w: "4" } })).metadata).toEqual({ w: "4" })
    expect(ok(await patch(`/v1/webhook-subscriptions/${created.id}`, { metadata: "" })).metadata).toEqual({})
    await platform.request("DELETE", `/v1/webhook-subscriptions/${created.id}`)
  })

  const fiftyKeys = (prefix: string) => Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`${prefix}${i}`, "v"]))
  /** Each limit and the param of its 400. */
  const BAD: ReadonlyArray<readonly [string, unknown, string]> = [
    ["51 keys", { ...fiftyKeys("k"), one_more: "v" }, "metadata"],
    ["a key of 41 characters", { ["k".repeat(41)]: "v" }, "metadata"],
    ["an empty key", { "": "v" }, "metadata"],
    ["a value of 501 characters", { ok: "fine", note: "v".repeat(501) }, "metadata[note]"],
    ["a number value", { note: 5 }, "metadata[note]"],
    ["an object value", { note: { nested: "x" } }, "metadata[note]"],
    ["a null value", { note: null }, "metadata[note]"],
    // Text no store keeps as sent, in a key as in a value (issue 43: such keys were stored).
    ["a NUL in a key", { "no\u0000te": "v" }, "metadata"],
    ["a lone surrogate in a key", { "\ud800x": "v" }, "metadata"],
    ["a NUL in a value", { ok: "fine", note: "a\u0000b" }, "metadata[note]"],
    ["a lone surrogate in a value", { note: "\udc00" }, "metadata[note]"],
    ["an array", ["a", "b"], "metadata"],
    ["a number", 7, "metadata"],
    ['a string other than ""', "text", "metadata"],
    ["a boolean", true, "metadata"]
  ]

  it("takes the limits exactly: 50 keys of 40 characters with values of 500", async () => {
    const largest = Object.fromEntries(
      Array.from({ length: 50 }, (_, i) => [`${String(i).padStart(2, "0")}${"k".repeat(38)}`, "v".repeat(500)])
    )
    expect(Object.keys(largest).every((key) => key.length === 40)).toBe(true)
    expect(ok(await post("/v1/wallets", { holder: { name: "Limits" }, metadata: largest })).metadata).toEqual(largest)
    // Characters, not UTF-16 units: 40 emoji are 40 characters.
    const emoji = { ["🙂".repeat(40)]: "🙂".repeat(500) }
    expect(ok(await post("/v1/wallets", { holder: { name: "Emoji" }, metadata: emoji })).metadata).toEqual(emoji)
  })

  it.each(BAD)("refuses %s with 400 naming the key path, writing nothing, on every creation and update", async (_, bad, param) => {
    const totals = async () =>
      Promise.all(
        ["/v1/wallets", "/v1/cards", "/v1/transfers", "/v1/webhook-subscriptions"].map(async (path) => ok(await get(path)).total_count)
      )
    const card = await issueCard(platform, wallet.id, { metadata: { kept: "yes" } })
    const subscription = ok(
      await post("/v1/webhook-subscriptions", { url: receiver.url, event_types: ["card.created"], metadata: { kept: "yes" } })
    )
    const before = await totals()
    const refusals = [
      await post("/v1/wallets", { holder: { name: "Refused" }, metadata: bad }),
      await post("/v1/cards", { wallet_id: wallet.id, type: "VIRTUAL", metadata: bad }),
      await post("/v1/transfers", { ...transferBody(), metadata: bad }),
      await post("/v1/webhook-subscriptions", { url: receiver.url, event_types: ["card.created"], metadata: bad }),
      await patch(`/v1/cards/${card.id}`, { blockedMccCodes: ["7995"], metadata: bad }),
      await patch(`/v1/webhook-subscriptions/${subscription.id}`, { description: "changed", metadata: bad })
    ]
    for (const refusal of refusals) {
      const error = expectEnvelope(refusal, 400, { code: "invalid_request", param })
      // The value is never repeated.
      if (typeof bad === "object" && bad !== null && "note" in bad) expect(refusal.text).not.toContain("v".repeat(501))
      expect(error.message).toContain(`'${param}'`)
    }
    expect(await totals()).toEqual(before)
    expect(ok(await get(`/v1/cards/${card.id}`))).toEqual(card)
    expect(ok(await get(`/v1/webhook-subscriptions/${subscription.id}`))).toMatchObject({ description: "", metadata: { kept: "yes" } })
    expect(await eventsAbout("card.updated", card.id)).toEqual([])
    await platform.request("DELETE", `/v1/webhook-subscriptions/${subscription.id}`)
  })

  it("refuses a change that would leave more than 50 keys, writing nothing; removals count first", async () => {
    const card = await issueCard(platform, wallet.id, { metadata: fiftyKeys("k") })
    expectEnvelope(await patch(`/v1/cards/${card.id}`, { metadata: { extra: "v" } }), 400, { code: "invalid_request", param: "metadata" })
    expect(ok(await get(`/v1/cards/${card.id}`))).toEqual(card)
    expect(await eventsAbout("card.updated", card.id)).toEqual([])
    // One out, one in: still 50.
    const swapped = ok(await patch(`/v1/cards/${card.id}`, { metadata: { k0: "", extra: "v" } }))
    expect(Object.keys(swapped.metadata)).toHaveLength(50)
    expect(swapped.metadata.extra).toBe("v")
    const subscription = ok(
      await post("/v1/webhook-subscriptions", { url: receiver.url, event_types: ["card.created"], metadata: fiftyKeys("s") })
    )
    expectEnvelope(await patch(`/v1/webhook-subscriptions/${subscription.id}`, { metadata: { extra: "v" } }), 400, { param: "metadata" })
    expect(ok(await get(`/v1/webhook-subscriptions/${subscription.id}`)).metadata).toEqual(fiftyKeys("s"))
    await platform.request("DELETE", `/v1/webhook-subscriptions/${subscription.id}`)
  })

  it("names unstorable text in a batch item's metadata by its path, and a bad key by the object holding it", async () => {
    const before = ok(await get("/v1/transfers")).total_count
    const batch = (metadata: unknown) => post("/v1/transfers/batch", { transfers: [transferBody(), { ...transferBody(), metadata }] })
    expectEnvelope(await batch({ line: "2", note: "\u0000" }), 400, { code: "invalid_request", param: "transfers.1.metadata[note]" })
    expectEnvelope(await batch({ line: "2", "\ud800": "v" }), 400, { code: "invalid_request", param: "transfers.1.metadata" })
    // A key elsewhere in a body is checked as text too, and never repeated (param: its object, or null at the top).
    expectEnvelope(await post("/v1/wallets", { holder: { "na\u0000me": "Ada" } }), 400, { code: "invalid_request", param: "holder" })
    const refused = await post("/v1/wallets", { holder: { name: "Ada" }, "\ud800": "x" })
    expectEnvelope(refused, 400, { code: "invalid_request", param: null })
    expect(ok(await get("/v1/transfers")).total_count).toBe(before)
  })

  it("is never a filter", async () => {
    expectEnvelope(await get("/v1/wallets?metadata=x"), 400, { param: "metadata" })
    expectEnvelope(await get("/v1/transfers?metadata%5Binvoice%5D=inv_9"), 400, { param: "metadata[invoice]" })
  })

  it("is set per item of a transfer batch; a bad one fails its item alone, or the atomic batch", async () => {
    const items = [
      { ...transferBody(), metadata: { line: "1" } },
      transferBody(),
      { ...transferBody(), metadata: { line: "3", note: 3 } },
      { ...transferBody(), metadata: { line: "4" } }
    ]
    const batch = ok(await post("/v1/transfers/batch", { transfers: items }))
    expect(batch.data.map((item: any) => item.metadata ?? item.error.param)).toEqual([{ line: "1" }, {}, "metadata[note]", { line: "4" }])
    for (const item of [batch.data[0], batch.data[1], batch.data[3]]) {
      expect(ok(await get(`/v1/transfers/${item.id}`)).metadata).toEqual(item.metadata)
    }
    expect((await eventsAbout("transfer.created", batch.data[3].id)).map((e) => e.data.object.metadata)).toEqual([{ line: "4" }])
    const before = ok(await get("/v1/transfers")).total_count
    expectEnvelope(await post("/v1/transfers/batch", { transfers: items, atomic: true }), 400, { param: "transfers.2.metadata[note]" })
    expect(ok(await get("/v1/transfers")).total_count).toBe(before)
    // Atomic and every item well-formed: each keeps its own.
    const atomic = ok(await post("/v1/transfers/batch", { transfers: [items[0], items[1], items[3]], atomic: true }))
    expect(atomic.data.map((item: any) => item.metadata)).toEqual([{ line: "1" }, {}, { line: "4" }])
    expect(ok(await get(`/v1/transfers/${atomic.data[2].id}`)).metadata).toEqual({ line: "4" })
  })
})
