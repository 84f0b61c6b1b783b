import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createKey } from "../cards/helpers.js"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope, startPlatform, type TestPlatform, uuid } from "../support/platform.js"

// Cardholders (docs/cardholders.md): create, list, get, PATCH, the program's verification, events,
// wallets and cards that name one, and a program that requires VERIFIED cardholders.

const ADA = {
  type: "individual",
  name: "Ada Lovelace",
  email: "ada@example.com",
  phone_number: "+14155550123",
  billing_address: { line1: "1 Main St", city: "San Francisco", state: "CA", postal_code: "94105", country: "US" },
  individual: { first_name: "Ada", last_name: "Lovelace", dob: { day: 10, month: 12, year: 1990 } },
  metadata: { crm: "c_1" }
}

describe.each(STORE_KINDS)("cardholders on %s", (kind) => {
  let platform: TestPlatform

  beforeAll(async () => {
    platform = await startPlatform(kind)
  })
  afterAll(async () => {
    await platform?.close()
  })

  type As = { readonly key?: string; readonly program?: string }
  const create = (body: Record<string, unknown> = {}, as: As = {}) =>
    platform.request("POST", "/v1/cardholders", { body: { ...ADA, ...body }, ...as })
  const created = async (body: Record<string, unknown> = {}, as: As = {}) => {
    const response = await create(body, as)
    expect(response.status, response.text).toBe(200)
    return response.body
  }
  const list = async (query: string, as: As = {}) => {
    const response = await platform.request("GET", `/v1/cardholders?${query}`, as)
    expect(response.status, response.text).toBe(200)
    return response.body as { data: Array<any>; total_count: number }
  }
  const verify = (id: string, body: unknown, as: As = {}) => platform.request("POST", `/v1/cardholders/${id}/verification`, { body, ...as })
  const eventsOf = async (type: string, id: string, as: As = {}) =>
    ((await platform.request("GET", `/v1/events?type=${type}&page_size=100`, as)).body.data as Array<any>).filter(
      (event) => event.data.object.id === id
    )
  /** What a refused request must leave as it was. */
  const snapshot = async (as: As = {}) => ({
    cardholders: (await list("page_size=100", as)).data,
    events: (await platform.request("GET", "/v1/events?page_size=1", as)).body.total_count,
    cards: (await platform.request("GET", "/v1/cards?page_size=1", as)).body.total_count,
    wallets: (await platform.request("GET", "/v1/wallets?page_size=1", as)).body.total_count
  })

  it("creates a cardholder PENDING_VERIFICATION, shows it on every read and emits cardholder.created", async () => {
    const cardholder = await created()
    expect(cardholder).toEqual({
      id: expect.any(String),
      object: "cardholder",
      program_id: platform.org.program_id,
      type: "individual",
      name: "Ada Lovelace",
      email: "ada@example.com",
      phone_number: "+14155550123",
      billing_address: { line1: "1 Main St", line2: null, city: "San Francisco", state: "CA", postal_code: "94105", country: "US" },
      individual: { first_name: "Ada", last_name: "Lovelace", dob: { day: 10, month: 12, year: 1990 } },
      metadata: { crm: "c_1" },
      status: "PENDING_VERIFICATION",
      verification: { status: "PENDING_VERIFICATION", reference: null, updated_at: cardholder.created_at },
      created_at: expect.any(String),
      updated_at: cardholder.created_at
    })
    expect((await platform.request("GET", `/v1/cardholders/${cardholder.id}`)).body).toEqual(cardholder)
    const [event] = await eventsOf("cardholder.created", cardholder.id)
    expect(event.data.object).toEqual(cardholder)
    const business = await created({ type: "business", name: "Acme Ltd", individual: undefined, email: undefined, phone_number: null })
    expect(business).toMatchObject({ type: "business", individual: null, email: null, phone_number: null })
  })

  it("refuses bad input with 400 naming the field, writing nothing", async () => {
    const before = await snapshot()
    const address = ADA.billing_address
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ type: "person" }, "type"],
      [{ name: "  " }, "name"],
      [{ email: "not-an-email" }, "email"],
      [{ phone_number: "555-0123" }, "phone_number"],
      [{ billing_address: undefined }, "billing_address"],
      [{ billing_address: { ...address, country: "XX" } }, "billing_address.country"],
      [{ billing_address: { ...address, country: "us" } }, "billing_address.country"],
      [{ billing_address: { ...address, line1: "" } }, "billing_address.line1"],
      [{ individual: { ...ADA.individual, dob: { day: 31, month: 2, year: 1990 } } }, "individual.dob"],
      [{ individual: { ...ADA.individual, dob: { day: 1, month: 1, year: 2999 } } }, "individual.dob"],
      [{ individual: { ...ADA.individual, dob: { day: 1.5, month: 1, year: 1990 } } }, "individual.dob.day"],
      [{ type: "business", individual: ADA.individual }, "individual"],
      [{ metadata: { ["k".repeat(41)]: "v" } }, "metadata"],
      [{ unknown_field: 1 }, "unknown_field"]
    ]
    for (const [body, param] of cases) {
      expectEnvelope(await create(body), 400, { code: "invalid_request", param })
    }
    expect(await snapshot()).toEqual(before)
  })

  it("lists newest first with exact totals, filtered by status and email, pages by starting_after", async () => {
    const other = await platform.createOrganization("Other")
    const as = { key: other.api_key, program: other.program_id }
    const a = await created({ email: "a@example.com" }, as)
    const b = await created({ email: "b@example.com" }, as)
    const c = await created({ email: "a@example.com" }, as)
    expect((await list("", as)).data.map((h) => h.id)).toEqual([c.id, b.id, a.id])
    expect((await list("", as)).total_count).toBe(3)
    expect((await list("order_by=created_at&ascending=true", as)).data.map((h) => h.id)).toEqual([a.id, b.id, c.id])
    const first = await list("page_size=2", as)
    expect(first).toMatchObject({ total_count: 3 })
    expect((await list(`page_size=2&starting_after=${first.data[1].id}`, as)).data.map((h) => h.id)).toEqual([a.id])
    expect(await list("email=a@example.com", as)).toMatchObject({ total_count: 2 })
    expect((await list("email=a@example.com", as)).data.map((h) => h.id)).toEqual([c.id, a.id])
    expect(await list("status=PENDING_VERIFICATION", as)).toMatchObject({ total_count: 3 })
    expect((await verify(b.id, { status: "VERIFIED" }, as)).status).toBe(200)
    expect((await verify(c.id, { status: "REJECTED" }, as)).status).toBe(200)
    expect(await list("status=PENDING_VERIFICATION", as)).toMatchObject({ total_count: 1 })
    expect((await list("status=VERIFIED", as)).data.map((h) => h.id)).toEqual([b.id])
    expect(await list("status=REJECTED&email=a@example.com", as)).toMatchObject({ total_count: 1 })
    expect(await list("status=VERIFIED&email=a@example.com", as)).toMatchObject({ total_count: 0 })
    // An email change moves the cardholder between the email's counts.
    expect((await platform.request("PATCH", `/v1/cardholders/${a.id}`, { body: { email: "b@example.com" }, ...as })).status).toBe(200)
    expect(await list("email=b@example.com", as)).toMatchObject({ total_count: 2 })
    expect(await list("email=a@example.com", as)).toMatchObject({ total_count: 1 })
    // Another program sees none of them.
    expect((await platform.request("GET", `/v1/cardholders/${a.id}`)).status).toBe(404)
    for (const query of ["status=UNKNOWN", "email=nope", "order_by=name"]) {
      expectEnvelope(await platform.request("GET", `/v1/cardholders?${query}`, as), 400, { param: query.split("=")[0] })
    }
  })

  it("PATCH replaces the fields sent, merges metadata, keeps the verification, emits cardholder.updated unless nothing changed", async () => {
    const cardholder = await created()
    const response = await platform.request("PATCH", `/v1/cardholders/${cardholder.id}`, {
      body: {
        name: "Ada King",
        phone_number: null,
        billing_address: { line1: "2 Side St", city: "Oakland", postal_code: "94607", country: "GB" },
        metadata: { crm: "", tier: "gold" }
      }
    })
    expect(response.status, response.text).toBe(200)
    expect(response.body).toMatchObject({
      name: "Ada King",
      email: "ada@example.com",
      phone_number: null,
      billing_address: { line1: "2 Side St", line2: null, city: "Oakland", state: null, postal_code: "94607", country: "GB" },
      metadata: { tier: "gold" },
      status: "PENDING_VERIFICATION",
      verification: cardholder.verification
    })
    expect(response.body.updated_at >= cardholder.updated_at).toBe(true)
    const events = await eventsOf("cardholder.updated", cardholder.id)
    expect(events.map((event) => event.data.object)).toEqual([response.body])
    const same = await platform.request("PATCH", `/v1/cardholders/${cardholder.id}`, { body: { name: "Ada King" } })
    expect(same.body).toEqual(response.body)
    expect(await eventsOf("cardholder.updated", cardholder.id)).toHaveLength(1)
    expectEnvelope(
      await platform.request("PATCH", `/v1/cardholders/${cardholder.id}`, { body: { individual: { first_name: "x" } } }),
      400,
      {
        param: "individual.last_name"
      }
    )
    expectEnvelope(await platform.request("PATCH", `/v1/cardholders/${uuid()}`, { body: { name: "x" } }), 404, { param: "cardholder_id" })
  })

  it("records the program's verification (admin or developer keys, never viewers) with its reference", async () => {
    const cardholder = await created()
    const viewer = await createKey(platform, { role: "viewer" })
    const developer = await createKey(platform, { role: "developer" })
    expectEnvelope(await verify(cardholder.id, { status: "VERIFIED" }, { key: viewer.secret }), 403, { code: "permission_denied" })
    expectEnvelope(await verify(cardholder.id, { status: "PENDING_VERIFICATION" }), 400, { param: "status" })
    expectEnvelope(await verify(uuid(), { status: "VERIFIED" }), 404, { param: "cardholder_id" })
    const verified = await verify(cardholder.id, { status: "VERIFIED", reference: "kyc_1" }, { key: developer.secret })
    expect(verified.status, verified.text).toBe(200)
    expect(verified.body).toMatchObject({ status: "VERIFIED", verification: { status: "VERIFIED", reference: "kyc_1" } })
    expect(verified.body.verification.updated_at).toBe(verified.body.updated_at)
    const rejected = (await verify(cardholder.id, { status: "REJECTED" })).body
    expect(rejected).toMatchObject({ status: "REJECTED", verification: { status: "REJECTED", reference: "kyc_1" } })
    const events = await eventsOf("cardholder.updated", cardholder.id)
    expect(events.map((event) => event.data.object.status).reverse()).toEqual(["VERIFIED", "REJECTED"])
    expect((await platform.request("GET", `/v1/cardholders/${cardholder.id}`)).body).toEqual(rejected)
  })

  it("wallets and cards take a cardholder of the program (a card inherits its wallet's), 404 param cardholder_id otherwise", async () => {
    const cardholder = await created()
    const other = await platform.createOrganization("Elsewhere")
    const foreign = await created({}, { key: other.api_key, program: other.program_id })
    const before = await snapshot()
    for (const id of [foreign.id, uuid(), "not-a-uuid"]) {
      const wallet = await platform.request("POST", "/v1/wallets", { body: { holder: { name: "A" }, cardholder_id: id } })
      if (id === "not-a-uuid") expectEnvelope(wallet, 400, { param: "cardholder_id" })
      else expectEnvelope(wallet, 404, { code: "not_found", param: "cardholder_id" })
    }
    expect(await snapshot()).toEqual(before)
    const wallet = await platform.request("POST", "/v1/wallets", { body: { holder: { name: "A" }, cardholder_id: cardholder.id } })
    expect(wallet.status, wallet.text).toBe(200)
    expect(wallet.body.cardholder_id).toBe(cardholder.id)
    const bare = (await platform.request("POST", "/v1/wallets", { body: { holder: { name: "B" } } })).body
    expect(bare.cardholder_id).toBeNull()
    const inherited = await platform.request("POST", "/v1/cards", { body: { wallet_id: wallet.body.id, type: "VIRTUAL" } })
    expect(inherited.body.cardholder_id).toBe(cardholder.id)
    const second = await created({ name: "Second" })
    const own = await platform.request("POST", "/v1/cards", { body: { wallet_id: bare.id, type: "VIRTUAL", cardholder_id: second.id } })
    expect(own.status, own.text).toBe(200)
    expect(own.body.cardholder_id).toBe(second.id)
    expect((await platform.request("GET", `/v1/cards/${own.body.id}`)).body.cardholder_id).toBe(second.id)
    const none = await platform.request("POST", "/v1/cards", { body: { wallet_id: bare.id, type: "VIRTUAL" } })
    expect(none.body.cardholder_id).toBeNull()
    const cardsBefore = await snapshot()
    expectEnvelope(
      await platform.request("POST", "/v1/cards", { body: { wallet_id: bare.id, type: "VIRTUAL", cardholder_id: foreign.id } }),
      404,
      { param: "cardholder_id" }
    )
    expect(await snapshot()).toEqual(cardsBefore)
  })

  it("a program with require_verified_cardholder refuses a card without a VERIFIED cardholder: 422 cardholder_not_verified", async () => {
    const org = await platform.createOrganization("Strict")
    const as = { key: org.api_key, program: org.program_id }
    const programPatch = (body: unknown, key = org.api_key) =>
      platform.request("PATCH", `/v1/programs/${org.program_id}`, { body, key, program: null })
    const developer = (
      await platform.request("POST", "/v1/api-keys", { key: org.api_key, program: null, body: { name: "d", role: "developer" } })
    ).body.secret
    expectEnvelope(await programPatch({ require_verified_cardholder: true }, developer), 403, { code: "permission_denied" })
    expectEnvelope(await programPatch({ require_verified_cardholder: "yes" }), 400, { param: "require_verified_cardholder" })
    expectEnvelope(
      await platform.request("PATCH", `/v1/programs/${platform.org.program_id}`, { key: org.api_key, program: null, body: {} }),
      404,
      {
        param: "program_id"
      }
    )
    const strict = await programPatch({ require_verified_cardholder: true })
    expect(strict.status, strict.text).toBe(200)
    expect(strict.body).toMatchObject({ id: org.program_id, object: "program", require_verified_cardholder: true })
    expect(
      (await platform.request("GET", `/v1/programs/${org.program_id}`, { key: org.api_key, program: null })).body
        .require_verified_cardholder
    ).toBe(true)

    const pending = await created({}, as)
    const wallet = (await platform.request("POST", "/v1/wallets", { body: { holder: { name: "A" } }, ...as })).body
    const issue = (body: Record<string, unknown>) =>
      platform.request("POST", "/v1/cards", { body: { wallet_id: wallet.id, type: "VIRTUAL", ...body }, ...as })
    const before = await snapshot(as)
    expectEnvelope(await issue({}), 422, { code: "cardholder_not_verified", param: "cardholder_id" })
    expectEnvelope(await issue({ cardholder_id: pending.id }), 422, { code: "cardholder_not_verified", param: "cardholder_id" })
    expect((await verify(pending.id, { status: "REJECTED" }, as)).status).toBe(200)
    expectEnvelope(await issue({ cardholder_id: pending.id }), 422, { code: "cardholder_not_verified", param: "cardholder_id" })
    const after = await snapshot(as)
    expect({ ...after, events: before.events }).toEqual({ ...before, cardholders: after.cardholders })
    expect(after.cards).toBe(before.cards)
    expect((await verify(pending.id, { status: "VERIFIED" }, as)).status).toBe(200)
    const card = await issue({ cardholder_id: pending.id })
    expect(card.status, card.text).toBe(200)
    expect(card.body.cardholder_id).toBe(pending.id)
    // Switched off, a card needs no cardholder again.
    expect((await programPatch({ require_verified_cardholder: false })).body.require_verified_cardholder).toBe(false)
    expect((await issue({})).status).toBe(200)
  })

  it("events about a cardholder carry the tags of its wallets", async () => {
    const cardholder = await created()
    const wallet = await platform.request("POST", "/v1/wallets", {
      body: { holder: { name: "A" }, tag: "customer_ch", cardholder_id: cardholder.id }
    })
    expect(wallet.status, wallet.text).toBe(200)
    expect((await verify(cardholder.id, { status: "VERIFIED" })).status).toBe(200)
    const [event] = await eventsOf("cardholder.updated", cardholder.id)
    expect(event.tags).toEqual(["customer_ch"])
    const [createdEvent] = await eventsOf("cardholder.created", cardholder.id)
    expect(createdEvent.tags).toEqual([])
  })
})
