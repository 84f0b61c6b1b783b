import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { onDatabase } from "../foundation/fixtures.js"
import { createClient, startOAuthPlatform } from "../oauth/support.js"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope, startPlatform, type TestPlatform } from "../support/platform.js"
import { tokensFor } from "./support.js"

// docs/decisions.md, "Inbound funding": in production an inbound external-rail transfer needs the
// inbound_funding key right (the organization's first admin key holds it); in sandbox any writer.
describe.each(STORE_KINDS)("inbound funding on %s", (kind) => {
  describe("in production", () => {
    let platform: TestPlatform
    let wallet: { id: string; financial_account_id: string }
    beforeAll(async () => {
      platform = await startOAuthPlatform(kind, { environment: "production" })
      const created = await platform.request("POST", "/v1/wallets", { body: { holder: { name: "Ada" } } })
      expect(created.status, created.text).toBe(200)
      wallet = created.body
    })
    afterAll(async () => {
      await platform?.close()
    })

    const newKey = async (fields: Record<string, unknown>, by = platform.org.api_key) =>
      platform.request("POST", "/v1/api-keys", { key: by, program: null, body: { name: "key", ...fields } })
    const inbound = (key: string, rail = "wire", amount = 1_000) =>
      platform.request("POST", "/v1/transfers", {
        key,
        body: { paymentRail: rail, amount, currency: "USD", to_financial_account_id: wallet.financial_account_id }
      })
    const transferCount = () =>
      onDatabase(platform, async (query) => Number((await query("SELECT COUNT(*) AS n FROM issuing_transfers"))[0]!.n))

    it("lets the organization's first admin key record inbound transfers, and shows the right on keys", async () => {
      const listed = await platform.request("GET", "/v1/api-keys", { program: null })
      expect(listed.body.data.map((key: { inbound_funding: boolean }) => key.inbound_funding)).toEqual([true])
      for (const rail of ["wire", "ach_same_day", "fednow_instant"]) {
        const response = await inbound(platform.org.api_key, rail)
        expect(response.status, response.text).toBe(200)
      }
    })

    it("refuses inbound transfers with 403 to keys without the right, admin ones included, and writes nothing", async () => {
      const developer = (await newKey({ role: "developer" })).body
      expect(developer.inbound_funding).toBe(false)
      const admin = (await newKey({ role: "admin" })).body
      const before = await transferCount()
      for (const key of [developer.secret, admin.secret]) {
        for (const rail of ["wire", "ach_same_day", "fednow_instant"]) {
          expectEnvelope(await inbound(key, rail, 10 ** 15), 403, { code: "permission_denied", param: "payment_rail" })
        }
      }
      expect(await transferCount()).toBe(before)
      // Outbound and book transfers stay every writer's.
      const other = (await platform.request("POST", "/v1/wallets", { body: { holder: { name: "Bob" } } })).body
      const book = await platform.request("POST", "/v1/transfers", {
        key: developer.secret,
        body: {
          paymentRail: "book",
          amount: 10,
          currency: "USD",
          from_financial_account_id: wallet.financial_account_id,
          to_financial_account_id: other.financial_account_id
        }
      })
      expect(book.status, book.text).toBe(200)
      const outbound = await platform.request("POST", "/v1/transfers", {
        key: developer.secret,
        body: { paymentRail: "wire", amount: 10, currency: "USD", from_financial_account_id: wallet.financial_account_id }
      })
      expect(outbound.status, outbound.text).toBe(200)
    })

    it("is granted only by an admin key holding it", async () => {
      const admin = (await newKey({ role: "admin" })).body
      expectEnvelope(await newKey({ role: "developer", inbound_funding: true }, admin.secret), 403, {
        code: "permission_denied",
        param: "inbound_funding"
      })
      expectEnvelope(await newKey({ role: "developer", inbound_funding: "yes" }), 400, {
        code: "invalid_request",
        param: "inbound_funding"
      })
      const funder = await newKey({ role: "developer", inbound_funding: true })
      expect(funder.status, funder.text).toBe(200)
      expect(funder.body.inbound_funding).toBe(true)
      expect((await inbound(funder.body.secret)).status).toBe(200)
      // An admin without the right neither lists nor revokes a key holding it.
      const listed = await platform.request("GET", "/v1/api-keys?page_size=100", { key: admin.secret, program: null })
      expect(listed.body.data.some((key: { id: string }) => key.id === funder.body.id)).toBe(false)
      expectEnvelope(await platform.request("DELETE", `/v1/api-keys/${funder.body.id}`, { key: admin.secret, program: null }), 404)
    })

    it("never lets an OAuth token record one, whatever its scopes", async () => {
      const client = await createClient(platform, { scopes: ["read", "write", "pan_reveal"] })
      const tokens = await tokensFor(platform, client, { scopes: ["read", "write", "pan_reveal"] })
      expectEnvelope(await inbound(tokens.access_token), 403, { code: "permission_denied", param: "payment_rail" })
    })

    it("applies the rule to every batch item: the item's 403, or the atomic batch's with nothing written", async () => {
      const developer = (await newKey({ role: "developer" })).body
      const items = [
        { paymentRail: "fednow_instant", amount: 5, currency: "USD", to_financial_account_id: wallet.financial_account_id },
        { paymentRail: "fednow_instant", amount: 5, currency: "USD", from_financial_account_id: wallet.financial_account_id }
      ]
      const before = await transferCount()
      const atomic = await platform.request("POST", "/v1/transfers/batch", {
        key: developer.secret,
        body: { atomic: true, transfers: items }
      })
      expectEnvelope(atomic, 403, { code: "permission_denied", param: "transfers.0.payment_rail" })
      expect(await transferCount()).toBe(before)
      const partial = await platform.request("POST", "/v1/transfers/batch", { key: developer.secret, body: { transfers: items } })
      expect(partial.status, partial.text).toBe(200)
      expect(partial.body.data[0].error).toMatchObject({ code: "permission_denied", param: "payment_rail" })
      expect(partial.body.data[1].object).toBe("transfer")
      expect(await transferCount()).toBe(before + 1)
    })
  })

  describe("in sandbox", () => {
    let platform: TestPlatform
    beforeAll(async () => {
      platform = await startPlatform(kind)
    })
    afterAll(async () => {
      await platform?.close()
    })

    it("lets every key that may write record inbound transfers (tests and demos fund wallets so)", async () => {
      const developer = await platform.request("POST", "/v1/api-keys", { program: null, body: { name: "dev", role: "developer" } })
      expect(developer.body.inbound_funding).toBe(false)
      const wallet = (await platform.request("POST", "/v1/wallets", { body: { holder: { name: "Ada" } } })).body
      const response = await platform.request("POST", "/v1/transfers", {
        key: developer.body.secret,
        body: { paymentRail: "wire", amount: 100, currency: "USD", to_financial_account_id: wallet.financial_account_id }
      })
      expect(response.status, response.text).toBe(200)
    })
  })
})
