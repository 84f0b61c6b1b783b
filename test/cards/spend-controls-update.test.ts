import { describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope, uuid } from "../support/platform.js"
import { useFundedWallet } from "../support/walletPlatform.js"
import { issueCard } from "./helpers.js"

// PATCH /v1/cards/{card_id}: spend controls after issuance (docs/card-data.md#spend-controls).
describe.each(STORE_KINDS)("changing a card's spend controls on %s", (kind) => {
  const fixture = useFundedWallet(kind, 1_000_000)

  const patch = (cardId: string, body: unknown) => fixture.platform.request("PATCH", `/v1/cards/${cardId}`, { body })
  const authorize = (cardId: string, amount: number, mcc: string) =>
    fixture.platform.request("POST", "/v1/simulate/authorizations", { body: { card_id: cardId, amount, mcc } })
  const updates = async (cardId: string) =>
    ((await fixture.platform.request("GET", "/v1/events?type=card.updated&page_size=100")).body.data as Array<any>).filter(
      (event) => event.data.object.id === cardId
    )

  it("replaces what is sent, keeps what is not, clears with null, emits card.updated with the new controls", async () => {
    const card = await issueCard(fixture.platform, fixture.wallet.id, {
      allowedMccCodes: ["5411"],
      spendingPeriod: { interval: "DAILY", amount: 5_000 }
    })
    const blocked = await patch(card.id, { blocked_mcc_codes: ["7995", "5812", "7995"] })
    expect(blocked.status, blocked.text).toBe(200)
    expect(blocked.body).toMatchObject({
      id: card.id,
      allowed_mcc_codes: ["5411"],
      blocked_mcc_codes: ["5812", "7995"],
      spending_period: { interval: "DAILY", amount: 5_000 }
    })
    expect(blocked.body.updated_at >= card.updated_at).toBe(true)
    const cleared = await patch(card.id, { allowedMccCodes: null, spendingPeriod: { interval: "MONTHLY", amount: 9_000 } })
    expect(cleared.body).toMatchObject({
      allowed_mcc_codes: [],
      blocked_mcc_codes: ["5812", "7995"],
      spending_period: { interval: "MONTHLY", amount: 9_000 }
    })
    expect((await fixture.platform.request("GET", `/v1/cards/${card.id}`)).body).toEqual(cleared.body)
    const events = await updates(card.id)
    expect(events.map((event) => event.data.object.blocked_mcc_codes)).toEqual([
      ["5812", "7995"],
      ["5812", "7995"]
    ])
    expect(events.map((event) => event.data.object.spending_period?.interval).sort()).toEqual(["DAILY", "MONTHLY"])
    // Nothing changed: the card, and no event.
    expect((await patch(card.id, { blockedMccCodes: ["7995", "5812"] })).body).toEqual(cleared.body)
    expect((await patch(card.id, {})).body).toEqual(cleared.body)
    expect(await updates(card.id)).toHaveLength(2)
  })

  it("decides the next authorization with the new controls", async () => {
    const card = await issueCard(fixture.platform, fixture.wallet.id)
    expect((await authorize(card.id, 100, "5812")).body.status).toBe("PENDING")
    await patch(card.id, { allowedMccCodes: ["5411"] })
    expect((await authorize(card.id, 100, "5812")).body).toMatchObject({ status: "DECLINED", decline_reason: "MCC_NOT_ALLOWED" })
    expect((await authorize(card.id, 100, "5411")).body.status).toBe("PENDING")
    // The limit counts what the window already approved (200 here): 250 more is over 400.
    await patch(card.id, { allowedMccCodes: null, spending_period: { interval: "DAILY", amount: 400 } })
    expect((await authorize(card.id, 250, "5812")).body).toMatchObject({ status: "DECLINED", decline_reason: "SPENDING_LIMIT_EXCEEDED" })
    expect((await authorize(card.id, 200, "5812")).body.status).toBe("PENDING")
    await patch(card.id, { spendingPeriod: null })
    expect((await authorize(card.id, 250, "5812")).body.status).toBe("PENDING")
  })

  it("validates as issuance does, and writes nothing on a refusal", async () => {
    const card = await issueCard(fixture.platform, fixture.wallet.id, { blockedMccCodes: ["7995"] })
    const before = (await fixture.platform.request("GET", `/v1/cards/${card.id}`)).body
    expectEnvelope(await patch(card.id, { allowedMccCodes: ["7995"] }), 400, { code: "invalid_request", param: "allowedMccCodes" })
    expectEnvelope(await patch(card.id, { allowedMccCodes: ["1"] }), 400, { code: "invalid_request", param: "allowedMccCodes" })
    expectEnvelope(await patch(card.id, { allowed_mcc_codes: ["5411"], allowedMccCodes: ["5812"] }), 400, {
      code: "invalid_request",
      param: "allowedMccCodes"
    })
    expectEnvelope(await patch(card.id, { spendingPeriod: { interval: "HOURLY", amount: 1 } }), 400, {
      code: "invalid_request",
      param: "spendingPeriod.interval"
    })
    expectEnvelope(await patch(card.id, { spending_period: { interval: "DAILY", amount: 0 } }), 400, {
      code: "invalid_request",
      param: "spendingPeriod.amount"
    })
    expectEnvelope(await patch(card.id, { allowedMccCodes: ["5411"], blockedMccCodes: ["5411"] }), 400, {
      code: "invalid_request",
      param: "blockedMccCodes"
    })
    expect((await fixture.platform.request("GET", `/v1/cards/${card.id}`)).body).toEqual(before)
    expect(await updates(card.id)).toHaveLength(0)
    expectEnvelope(await patch(uuid(), { blockedMccCodes: [] }), 404, { code: "not_found", param: "card_id" })
    expectEnvelope(await patch("not-a-card", { blockedMccCodes: [] }), 404, { code: "not_found", param: "card_id" })
  })

  it("refuses a closed card with 409, and a frozen card's controls can change", async () => {
    const card = await issueCard(fixture.platform, fixture.wallet.id)
    expect((await fixture.platform.request("POST", `/v1/cards/${card.id}/freeze`)).status).toBe(200)
    expect((await patch(card.id, { blockedMccCodes: ["5812"] })).body).toMatchObject({ state: "FROZEN", blocked_mcc_codes: ["5812"] })
    expect((await fixture.platform.request("POST", `/v1/cards/${card.id}/close`)).status).toBe(200)
    expectEnvelope(await patch(card.id, { blockedMccCodes: [] }), 409, { code: "conflict" })
  })
})
