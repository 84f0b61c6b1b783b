import { IssuingClient, type NetworkCardMessage, PermissionError, type SendCardMessageParams } from "@issuing/client"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { startPlatform, type TestPlatform, uuid } from "../support/platform.js"

// The network's door through the Promise client (docs/network.md, docs/client.md): a gateway's
// key holding the `network` right sends an authorization and its clearing by the card's number,
// with no X-Program-ID, on both stores; a key without the right gets PermissionError.

describe.each(STORE_KINDS)("@issuing/client network card messages on %s", (kind) => {
  let platform: TestPlatform
  let client: IssuingClient

  beforeAll(async () => {
    platform = await startPlatform(kind)
    client = new IssuingClient({ apiKey: platform.org.api_key, baseUrl: platform.baseUrl, programId: platform.org.program_id })
  })
  afterAll(async () => {
    await platform?.close()
  })

  const MERCHANT = { acceptor_id: "ACQ-000777", name: "Harbor Cafe", city: "Portland", country: "US", mcc: "5812" }

  it("sends an authorization and a clearing above the hold (a tip) with a network key: ISO answers, the merchant kept", async () => {
    const wallet = await client.wallets.create({ holder: { name: "Grace Hopper" } })
    await client.transfers.create({
      paymentRail: "fednow_instant",
      amount: 10_000,
      currency: "USD",
      to_financial_account_id: wallet.financial_account_id
    })
    const card = await client.cards.create({ wallet_id: wallet.id, type: "VIRTUAL" })
    const data = await client.cards.reveal(card.id)

    // A gateway's own key: a developer key given the network right by the first admin key.
    const gatewayKey = await client.apiKeys.create({ name: "gateway", role: "developer", network: true })
    expect(gatewayKey.network).toBe(true)
    const gateway = new IssuingClient({ apiKey: gatewayKey.secret, baseUrl: platform.baseUrl })

    const ntid = `ntx-${uuid()}`
    const authorization: SendCardMessageParams = {
      network_message_id: uuid(),
      type: "AUTHORIZATION",
      network_transaction_id: ntid,
      card: { number: data.pan, exp_month: data.exp_month, exp_year: data.exp_year, cvv: data.cvv },
      amount: 2_000,
      currency: "USD",
      merchant: MERCHANT
    }
    const approved: NetworkCardMessage = await gateway.network.sendCardMessage(authorization)
    expect(approved).toEqual({
      object: "network_card_message",
      network_message_id: authorization.network_message_id,
      type: "AUTHORIZATION",
      transaction_id: expect.any(String),
      result: "APPROVED",
      approved_amount: 2_000,
      response_code: "00",
      authorization_code: expect.stringMatching(/^[0-9A-Z]{6}$/),
      decline_reason: null,
      created_at: expect.any(String)
    })
    const held = await client.transactions.retrieve(approved.transaction_id!)
    expect(held).toMatchObject({ status: "PENDING", pending_amount: 2_000, card_id: card.id, merchant: MERCHANT })

    // The clearing names the transaction by the network's id only: 2,400 with the tip.
    const cleared = await gateway.network.sendCardMessage({
      network_message_id: uuid(),
      type: "CLEARING",
      network_transaction_id: ntid,
      amount: 2_400,
      currency: "USD"
    })
    expect(cleared).toMatchObject({
      transaction_id: approved.transaction_id,
      result: "ACKNOWLEDGED",
      approved_amount: 2_400,
      response_code: "00"
    })
    const settled = await client.transactions.retrieve(approved.transaction_id!)
    expect(settled).toMatchObject({ status: "SETTLED", settled_amount: 2_400, pending_amount: 0 })
    expect(settled.card_events.map((event) => event.type)).toEqual(["AUTHORIZATION", "CLEARING"])
    const account = await client.financialAccounts.retrieve(wallet.financial_account_id)
    expect(account.balance.amount).toBe(7_600)

    // The same message again answers the first answer, and moves nothing twice.
    expect(await gateway.network.sendCardMessage(authorization)).toEqual(approved)
    expect((await client.financialAccounts.retrieve(wallet.financial_account_id)).balance.amount).toBe(7_600)
  })

  it("a key without the network right gets PermissionError (403), nothing written", async () => {
    const developer = await client.apiKeys.create({ name: "no network", role: "developer" })
    const plain = new IssuingClient({ apiKey: developer.secret, baseUrl: platform.baseUrl })
    const refused = await plain.network
      .sendCardMessage({
        network_message_id: uuid(),
        type: "CLEARING",
        network_transaction_id: `ntx-${uuid()}`,
        amount: 100,
        currency: "USD"
      })
      .catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(PermissionError)
    expect(refused).toMatchObject({ status: 403, type: "permission_error" })
  })
})
