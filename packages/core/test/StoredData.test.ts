import { describe, expect, it } from "vitest"
import { eventDataText, eventObject, storedEventData } from "../src/events/StoredData.js"

const PROGRAM = "01a226e5-49f7-70ce-8b3b-632504948038"
const AT = "2026-11-29T10:41:54.442Z"

const transfer = (fields: Record<string, unknown> = {}) => ({
  id: "01a226e5-a70a-761c-ba2a-a6a586dec964",
  object: "transfer",
  program_id: PROGRAM,
  transaction_id: "01a226e5-a70a-761c-ba2a-a11fbfa511be",
  payment_rail: "book",
  amount: 82,
  currency: "USD",
  from_financial_account_id: "01a226e5-548d-709d-b91d-a71cf298749c",
  to_financial_account_id: "01a226e5-4aae-77fd-a125-3881a1640ca1",
  status: "SETTLED",
  description: null,
  metadata: {},
  return_code: null,
  return_reason: null,
  created_at: AT,
  updated_at: AT,
  ...fields
})

/** What every reader gets back from what was stored: the object's JSON, exactly. */
const readBack = (object: unknown, program = PROGRAM, at = AT) => {
  const stored = storedEventData(object, program, at)
  return { stored, text: eventDataText(stored, program, at), object: eventObject(stored, program, at) }
}

describe("an event's stored data", () => {
  it("keeps a transfer's entries a reader cannot restore, and reads back its exact JSON", () => {
    const object = transfer()
    const { stored, text } = readBack(object)
    expect(JSON.parse(stored)).toEqual({
      "": 3,
      id: object.id,
      transaction_id: object.transaction_id,
      amount: 82,
      from_financial_account_id: object.from_financial_account_id,
      to_financial_account_id: object.to_financial_account_id
    })
    expect(stored.length).toBeLessThan(JSON.stringify(object).length * 0.5)
    expect(text).toBe(JSON.stringify(object))
  })

  it("keeps a value other than its shape's default", () => {
    const object = transfer({ payment_rail: "ach", currency: "EUR", status: "PENDING", metadata: { order: "42" } })
    const { stored, text } = readBack(object)
    expect(JSON.parse(stored)).toMatchObject({ "": 3, payment_rail: "ach", currency: "EUR", status: "PENDING", metadata: { order: "42" } })
    expect(text).toBe(JSON.stringify(object))
    // A transaction's empty lists are its shape's defaults; a card's are kept.
    const transaction = {
      id: "t",
      object: "transaction",
      program_id: PROGRAM,
      status: "PENDING",
      amount: 300,
      currency: "USD",
      card_id: "c",
      financial_account_id: "a",
      decline_reason: null,
      mcc: "5411",
      merchant_name: "Grocer",
      merchant: null,
      network_transaction_id: null,
      authorized_amount: 300,
      pending_amount: 300,
      settled_amount: 0,
      disputed_amount: 0,
      expires_at: "2026-12-06T10:41:54.442Z",
      card_events: [{ id: "e", type: "AUTHORIZATION" }],
      request_history: [],
      created_at: AT,
      updated_at: AT
    }
    const card = readBack(transaction)
    expect(Object.keys(JSON.parse(card.stored))).toContain("card_events")
    expect(Object.keys(JSON.parse(card.stored))).not.toContain("request_history")
    expect(card.text).toBe(JSON.stringify(transaction))
  })

  it("reads rows of every earlier shape, which stay readable", () => {
    const object = transfer()
    const { id, transaction_id, from_financial_account_id, to_financial_account_id } = object
    const shape1 = JSON.stringify({
      "": 1,
      id,
      transaction_id,
      payment_rail: "book",
      amount: 82,
      currency: "USD",
      from_financial_account_id,
      to_financial_account_id,
      status: "SETTLED",
      metadata: {}
    })
    expect(eventDataText(shape1, PROGRAM, AT)).toBe(JSON.stringify(object))
  })

  it("keeps a value that differs from what a reader would restore, null included", () => {
    // Another program's id, other times, and a null where the event's time would be restored.
    const object = transfer({ program_id: "other", created_at: null, updated_at: "2026-11-30T00:00:00.000Z", description: "rent" })
    const { stored, text } = readBack(object)
    expect(JSON.parse(stored)).toMatchObject({ program_id: "other", created_at: null, updated_at: "2026-11-30T00:00:00.000Z" })
    expect(text).toBe(JSON.stringify(object))
  })

  it("stores anything without a shape as its JSON text, and reads that text as it is", () => {
    const reordered = { object: "transfer", ...transfer() }
    const extra = transfer({ extra: 1 })
    const undefinedEntry = transfer({ description: undefined })
    const account = { id: "a", object: "financial_account", program_id: PROGRAM }
    for (const object of [reordered, extra, undefinedEntry, account, transfer({ object: "card" }), null, [1]]) {
      const { stored, text } = readBack(object)
      expect(stored).toBe(JSON.stringify(object))
      expect(text).toBe(stored)
    }
    // A row written before (or by a function, with its own spacing) is delivered byte for byte.
    const spaced = '{"id" : "a", "object" : "financial_account"}'
    expect(eventDataText(spaced, PROGRAM, AT)).toBe(spaced)
    expect(eventObject(spaced, PROGRAM, AT)).toEqual({ id: "a", object: "financial_account" })
  })

  it("writes what JSON.stringify writes of the entries kept, escapes included", () => {
    const object = transfer({ description: 'rent "May"\n\u00e9\u2028', metadata: { 'a"b': "\u0000", n: 1 } })
    const { stored, text } = readBack(object)
    expect(stored).toBe(JSON.stringify(JSON.parse(stored)))
    expect(text).toBe(JSON.stringify(object))
  })

  it("stores an object whose entry JSON leaves out as its JSON text", () => {
    // A value whose toJSON answers undefined: JSON drops the entry, which a reader would restore as null.
    const object = transfer({ description: { toJSON: () => undefined } })
    const { stored, text } = readBack(object)
    expect(stored).toBe(JSON.stringify(object))
    expect(text).toBe(stored)
  })

  it("refuses a shape this release does not know", () => {
    expect(() => eventObject('{"":999,"id":"x"}', PROGRAM, AT)).toThrow(/shape 999/)
  })
})
