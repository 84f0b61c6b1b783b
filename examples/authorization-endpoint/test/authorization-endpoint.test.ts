import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createWallet, fund, issueCard } from "../../../test/cards/helpers.js"
import { startPlatform, type TestPlatform } from "../../../test/support/platform.js"
import { decide, startAuthorizationEndpoint } from "../server.js"

// The authorization endpoint example against the real platform: the platform asks it, it verifies
// the signature and decides by merchant category and amount.
describe("examples/authorization-endpoint", () => {
  let platform: TestPlatform
  beforeAll(async () => {
    platform = await startPlatform("sqlite")
  })
  afterAll(async () => {
    await platform?.close()
  })

  it("decides by merchant category and amount, partially approving when the merchant can take it", () => {
    const rules = { blockedMccs: ["7995"], ceiling: 1_000 }
    expect(decide({ amount: 10, partial_approval_capable: false, object: { mcc: "7995" } }, rules)).toMatchObject({ approved: false })
    expect(decide({ amount: 1_000, partial_approval_capable: false, object: { mcc: "5411" } }, rules)).toEqual({ approved: true })
    expect(decide({ amount: 1_500, partial_approval_capable: true, object: { mcc: "5411" } }, rules)).toEqual({
      approved: true,
      amount: 1_000
    })
    expect(decide({ amount: 1_500, partial_approval_capable: false, object: { mcc: "5411" } }, rules)).toMatchObject({ approved: false })
  })

  it("is asked by the platform, verifies the request and its answers decide the card transactions", async () => {
    // The endpoint needs the platform's secret and the platform the endpoint's URL: a placeholder first.
    const created = await platform.request("POST", "/v1/authorization-endpoints", { body: { url: "http://127.0.0.1:9/authorize" } })
    expect(created.status, created.text).toBe(200)
    const endpoint = await startAuthorizationEndpoint({ secret: created.body.secret, port: 0, ceiling: 2_000 })
    try {
      const patched = await platform.request("PATCH", `/v1/authorization-endpoints/${created.body.id}`, { body: { url: endpoint.url } })
      expect(patched.status, patched.text).toBe(200)
      const wallet = await createWallet(platform)
      await fund(platform, wallet.financial_account_id, 100_000)
      const card = await issueCard(platform, wallet.id)
      const authorize = async (body: Record<string, unknown>) =>
        (await platform.request("POST", "/v1/simulate/authorizations", { body: { card_id: card.id, ...body } })).body
      expect(await authorize({ amount: 1_500, mcc: "5411" })).toMatchObject({ status: "PENDING", pending_amount: 1_500 })
      expect(await authorize({ amount: 100, mcc: "7995" })).toMatchObject({ status: "DECLINED", decline_reason: "WEBHOOK_DECLINED" })
      expect(await authorize({ amount: 5_000, mcc: "5411", partial_approval_capable: true })).toMatchObject({
        status: "PENDING",
        authorized_amount: 2_000
      })
      expect(await authorize({ amount: 5_000, mcc: "5411" })).toMatchObject({ status: "DECLINED" })
      expect(endpoint.stats).toEqual({ approved: 2, declined: 2, rejected: 0 })
      // A request not signed with the secret is refused before it is read.
      const forged = await fetch(endpoint.url, { method: "POST", body: JSON.stringify({ type: "authorization.request" }) })
      expect(forged.status).toBe(401)
    } finally {
      await endpoint.close()
    }
  })
})
