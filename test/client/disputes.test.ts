import { BusinessRuleError, ConflictError, type Dispute, IssuingClient, PermissionError } from "@issuing/client"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { startPlatform, type TestPlatform } from "../support/platform.js"

// Disputes through the Promise client (docs/disputes.md, docs/client.md), on both stores: create
// with the default amount and a typed BusinessRuleError beyond it, list by transaction and status,
// retrieve, resolve by the sandbox's simulation and by the network's route (a key without the
// `network` right gets PermissionError), and a ConflictError for a second resolution.

describe.each(STORE_KINDS)("@issuing/client disputes on %s", (kind) => {
  let platform: TestPlatform
  let client: IssuingClient

  beforeAll(async () => {
    platform = await startPlatform(kind)
    client = new IssuingClient({ apiKey: platform.org.api_key, baseUrl: platform.baseUrl, programId: platform.org.program_id })
  })
  afterAll(async () => {
    await platform?.close()
  })

  it("creates, lists, retrieves and resolves disputes, with typed errors", async () => {
    const wallet = await client.wallets.create({ holder: { name: "Grace Hopper" } })
    await client.transfers.create({
      paymentRail: "fednow_instant",
      amount: 5_000,
      currency: "USD",
      to_financial_account_id: wallet.financial_account_id
    })
    const card = await client.cards.create({ wallet_id: wallet.id, type: "VIRTUAL" })
    const charge = await client.simulate.authorization({ card_id: card.id, amount: 1_500, mcc: "5411", kind: "FINANCIAL_AUTHORIZATION" })

    const first: Dispute = await client.disputes.create({ transaction_id: charge.id, amount: 500, reason: "DUPLICATE" })
    expect(first).toMatchObject({ object: "dispute", amount: 500, status: "SUBMITTED", reason: "DUPLICATE" })
    const rest = await client.disputes.create({ transaction_id: charge.id, reason: "FRAUD" })
    expect(rest.amount).toBe(1_000)
    expect(await client.transactions.retrieve(charge.id)).toMatchObject({ settled_amount: 1_500, disputed_amount: 1_500 })
    const over = await client.disputes.create({ transaction_id: charge.id, reason: "FRAUD", amount: 1 }).catch((error: unknown) => error)
    expect(over).toBeInstanceOf(BusinessRuleError)
    expect(over).toMatchObject({ status: 422, code: "amount_exceeds_disputable", param: "amount" })

    const page = await client.disputes.list({ transaction_id: charge.id })
    expect(page.data.map((d) => d.id)).toEqual([rest.id, first.id])
    expect(page.total_count).toBe(2)

    expect(await client.simulate.resolveDispute(first.id, { outcome: "WON" })).toMatchObject({ status: "WON" })
    const viewer = await client.apiKeys.create({ name: "no network", role: "developer" })
    const withoutRight = new IssuingClient({ apiKey: viewer.secret, baseUrl: platform.baseUrl, programId: platform.org.program_id })
    await expect(withoutRight.network.resolveDispute(rest.id, { outcome: "LOST" })).rejects.toBeInstanceOf(PermissionError)
    const lost = await client.network.resolveDispute(rest.id, { outcome: "LOST" })
    expect(lost).toMatchObject({ status: "LOST", reversal_transfer_id: expect.any(String) })
    await expect(client.network.resolveDispute(rest.id, { outcome: "WON" })).rejects.toBeInstanceOf(ConflictError)
    expect(await client.disputes.retrieve(rest.id)).toEqual(lost)
    expect((await client.disputes.list({ status: "LOST", transaction_id: charge.id })).data.map((d) => d.id)).toEqual([rest.id])
    const account = await client.financialAccounts.retrieve(wallet.financial_account_id)
    expect(account.balance.amount).toBe(5_000 - 1_500 + 500)
  })
})
