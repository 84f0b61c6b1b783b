import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { startPlatform, type TestPlatform } from "../support/platform.js"
import { expectBooksBalance } from "./support.js"

/**
 * A settlement account's balance in slots (docs/ledger.md#settlement-slots): concurrent postings
 * of one program into its settlement account — external-rail funding and returns, single-message
 * approvals and clearings, each on wallets of their own — leave the account's balance, its books
 * and every total exact over HTTP, the balance rows the sums of their entries, and on PostgreSQL
 * the postings spread over more than one slot (only the settlement account's rows leave slot 0).
 */
describe.each(STORE_KINDS)("settlement slots on %s", (kind) => {
  let platform: TestPlatform
  beforeAll(async () => {
    platform = await startPlatform(kind)
  })
  afterAll(async () => {
    await platform?.close()
  })

  it("keeps the settlement account exact under concurrent postings of one program", async () => {
    const org = await platform.createOrganization("slots")
    const as = { key: org.api_key, program: org.program_id }
    const request = (method: string, path: string, body?: unknown) => platform.request(method, path, { ...as, body })
    const ok = async (method: string, path: string, body?: unknown) => {
      const response = await request(method, path, body)
      expect(response.status, response.text).toBe(200)
      return response.body
    }
    const wallets: Array<{ id: string; account: string; card: string }> = []
    for (let i = 0; i < 8; i++) {
      const wallet = await ok("POST", "/v1/wallets", { holder: { name: `Holder ${i}` } })
      const card = await ok("POST", "/v1/cards", { wallet_id: wallet.id, type: "VIRTUAL" })
      wallets.push({ id: wallet.id, account: wallet.financial_account_id, card: card.id })
    }
    // Funding in: 8 × 4 concurrent fednow transfers of 1,000.
    await Promise.all(
      wallets.flatMap((w) =>
        Array.from({ length: 4 }, () =>
          ok("POST", "/v1/transfers", {
            payment_rail: "fednow_instant",
            amount: 1_000,
            currency: "USD",
            to_financial_account_id: w.account
          })
        )
      )
    )
    // Then at once: a return out of each wallet, two single-message approvals and a hold cleared on each card.
    const holds = await Promise.all(
      wallets.map((w) => ok("POST", "/v1/simulate/authorizations", { card_id: w.card, amount: 150, mcc: "5411" }))
    )
    await Promise.all([
      ...wallets.map((w) =>
        ok("POST", "/v1/transfers", { payment_rail: "fednow_instant", amount: 70, currency: "USD", from_financial_account_id: w.account })
      ),
      ...wallets.flatMap((w) =>
        Array.from({ length: 2 }, () =>
          ok("POST", "/v1/simulate/authorizations", { card_id: w.card, amount: 25, mcc: "5411", kind: "FINANCIAL_AUTHORIZATION" })
        )
      ),
      ...holds.map((hold) => ok("POST", `/v1/simulate/transactions/${hold.id}/clearing`, { amount: 100 }))
    ])
    // Into settlement: 8 × (70 + 2 × 25 + 100) = 1,760; out of it: 32,000.
    const perWallet = 4_000 - 70 - 50 - 100
    for (const w of wallets) {
      expect((await ok("GET", `/v1/financial-accounts/${w.account}`)).balance.amount).toBe(perWallet)
    }
    const [settlement] = (await ok("GET", "/v1/financial-accounts?kind=settlement&currency=USD")).data
    expect(settlement.balance.amount).toBe(-32_000 + 1_760)
    expect(settlement.available_balance.amount).toBe(-32_000 + 1_760)
    expect((await ok("GET", `/v1/financial-accounts/${settlement.id}`)).balance.amount).toBe(-32_000 + 1_760)
    const books = (await ok("GET", `/v1/financial-accounts/${settlement.id}/balances`)).data
    expect(books.map((b: any) => [b.book, b.debits.amount, b.credits.amount])).toEqual([
      ["principal", 32_000, 1_760],
      ["cash", 1_760, 32_000]
    ])
    await expectBooksBalance(platform)
    const slots = await platform.instance.runtime.runPromise(
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql<{ slot: number }>`SELECT DISTINCT slot FROM issuing_balances WHERE financial_account_id = ${settlement.id}`
      )
    )
    if (kind === "postgres") expect(slots.length).toBeGreaterThan(1)
    else expect(slots.map((row) => Number(row.slot))).toEqual([0])
  }, 120_000)
})
