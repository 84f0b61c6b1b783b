import { describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope, uuid } from "../support/platform.js"
import { useFundedWallet } from "../support/walletPlatform.js"
import { issueCard, reveal } from "./helpers.js"

// Merchant country controls (docs/card-transactions.md#controls): allowed_merchant_countries and
// blocked_merchant_countries at issuance and by PATCH, the decline MERCHANT_COUNTRY_NOT_ALLOWED
// (response code 57 on the network ingress), and 400 with param for a bad list, nothing written.

const merchant = (country: string | null) => ({ acceptor_id: "ACQ-1", name: "Shop", city: "Town", country, mcc: "5411" })

describe.each(STORE_KINDS)("merchant country controls on %s", (kind) => {
  const fixture = useFundedWallet(kind, 100_000)

  const authorize = async (cardId: string, country: string | null) => {
    const response = await fixture.platform.request("POST", "/v1/simulate/authorizations", {
      body: { card_id: cardId, amount: 100, merchant: merchant(country) }
    })
    expect(response.status, response.text).toBe(200)
    return response.body as { status: string; decline_reason: string | null }
  }
  const cardsCount = async () => (await fixture.platform.request("GET", "/v1/cards?page_size=1")).body.total_count

  it("issues with the lists (sorted, without duplicates) and declines merchants outside them", async () => {
    const card = await issueCard(fixture.platform, fixture.wallet.id, { allowed_merchant_countries: ["US", "DE", "US"] })
    expect(card).toMatchObject({ allowed_merchant_countries: ["DE", "US"], blocked_merchant_countries: [] })
    expect((await fixture.platform.request("GET", `/v1/cards/${card.id}`)).body).toEqual(card)
    expect(await authorize(card.id, "US")).toMatchObject({ status: "PENDING", decline_reason: null })
    expect(await authorize(card.id, "FR")).toMatchObject({ status: "DECLINED", decline_reason: "MERCHANT_COUNTRY_NOT_ALLOWED" })
    // An allow list declines a merchant that sent no country.
    expect(await authorize(card.id, null)).toMatchObject({ status: "DECLINED", decline_reason: "MERCHANT_COUNTRY_NOT_ALLOWED" })

    const blocking = await issueCard(fixture.platform, fixture.wallet.id, { blocked_merchant_countries: ["KP"] })
    expect(await authorize(blocking.id, "KP")).toMatchObject({ status: "DECLINED", decline_reason: "MERCHANT_COUNTRY_NOT_ALLOWED" })
    expect(await authorize(blocking.id, "GB")).toMatchObject({ status: "PENDING" })
    expect(await authorize(blocking.id, null)).toMatchObject({ status: "PENDING" })
    const plain = await issueCard(fixture.platform, fixture.wallet.id)
    expect(plain).toMatchObject({ allowed_merchant_countries: [], blocked_merchant_countries: [] })
  })

  it("PATCH sets and clears the lists, effective for the next authorization and emitting card.updated", async () => {
    const card = await issueCard(fixture.platform, fixture.wallet.id)
    expect(await authorize(card.id, "FR")).toMatchObject({ status: "PENDING" })
    const blocked = await fixture.platform.request("PATCH", `/v1/cards/${card.id}`, { body: { blocked_merchant_countries: ["FR"] } })
    expect(blocked.status, blocked.text).toBe(200)
    expect(blocked.body.blocked_merchant_countries).toEqual(["FR"])
    expect(await authorize(card.id, "FR")).toMatchObject({ status: "DECLINED", decline_reason: "MERCHANT_COUNTRY_NOT_ALLOWED" })
    const events = (await fixture.platform.request("GET", "/v1/events?type=card.updated&page_size=100")).body.data.filter(
      (event: any) => event.data.object.id === card.id
    )
    expect(events.map((event: any) => event.data.object)).toEqual([blocked.body])
    const cleared = await fixture.platform.request("PATCH", `/v1/cards/${card.id}`, { body: { blocked_merchant_countries: null } })
    expect(cleared.body.blocked_merchant_countries).toEqual([])
    expect(await authorize(card.id, "FR")).toMatchObject({ status: "PENDING" })
    // Allowing a country the card blocks is refused, naming the list sent.
    await fixture.platform.request("PATCH", `/v1/cards/${card.id}`, { body: { blocked_merchant_countries: ["FR"] } })
    expectEnvelope(await fixture.platform.request("PATCH", `/v1/cards/${card.id}`, { body: { allowed_merchant_countries: ["FR"] } }), 400, {
      param: "allowed_merchant_countries"
    })
    expect((await fixture.platform.request("GET", `/v1/cards/${card.id}`)).body.allowed_merchant_countries).toEqual([])
  })

  it("answers 57 on the network ingress for a merchant country the card does not allow", async () => {
    const card = await issueCard(fixture.platform, fixture.wallet.id, { allowed_merchant_countries: ["US"] })
    const data = await reveal(fixture.platform, card.id)
    const send = (country: string) =>
      fixture.platform.request("POST", "/v1/network/card-messages", {
        program: null,
        body: {
          network_message_id: uuid(),
          type: "AUTHORIZATION",
          network_transaction_id: `ntx-${uuid()}`,
          card: { number: data.pan },
          amount: 100,
          currency: "USD",
          merchant: merchant(country)
        }
      })
    const refused = await send("CA")
    expect(refused.status, refused.text).toBe(200)
    expect(refused.body).toMatchObject({ result: "DECLINED", response_code: "57", decline_reason: "MERCHANT_COUNTRY_NOT_ALLOWED" })
    expect((await send("US")).body).toMatchObject({ result: "APPROVED", response_code: "00" })
  })

  it("refuses a bad list with 400 naming it, writing nothing", async () => {
    const before = await cardsCount()
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ allowed_merchant_countries: ["XX"] }, "allowed_merchant_countries"],
      [{ allowed_merchant_countries: ["us"] }, "allowed_merchant_countries"],
      [{ blocked_merchant_countries: ["USA"] }, "blocked_merchant_countries"],
      [{ blocked_merchant_countries: "US" }, "blocked_merchant_countries"],
      [{ blocked_merchant_countries: [42] }, "blocked_merchant_countries"],
      [{ allowed_merchant_countries: ["US"], blocked_merchant_countries: ["US"] }, "blocked_merchant_countries"]
    ]
    for (const [body, param] of cases) {
      expectEnvelope(
        await fixture.platform.request("POST", "/v1/cards", { body: { wallet_id: fixture.wallet.id, type: "VIRTUAL", ...body } }),
        400,
        {
          code: "invalid_request",
          param
        }
      )
    }
    expect(await cardsCount()).toBe(before)
    const card = await issueCard(fixture.platform, fixture.wallet.id)
    for (const [body, param] of cases.slice(0, 5)) {
      expectEnvelope(await fixture.platform.request("PATCH", `/v1/cards/${card.id}`, { body }), 400, { param })
    }
    expect((await fixture.platform.request("GET", `/v1/cards/${card.id}`)).body).toEqual(card)
  })
})
