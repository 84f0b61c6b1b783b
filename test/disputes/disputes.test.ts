import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createWallet, fund, issueCard, reveal } from "../cards/helpers.js"
import { onDatabase } from "../foundation/fixtures.js"
import { expectBooksBalance } from "../ledger/support.js"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope, startPlatform, type TestPlatform, uuid } from "../support/platform.js"

/**
 * Disputes of card transactions (docs/disputes.md), over HTTP on both stores: a submission credits
 * the disputed amount provisionally (settlement → wallet) with the dispute, the transaction's
 * disputed_amount and the events in one transaction; WON keeps the credit, LOST takes it back
 * (possibly below zero); a resolved dispute is not resolved again; the network's route needs the
 * `network` right and the simulation is sandbox-only; every refusal writes nothing; concurrent
 * submissions never claim more than is disputable.
 */
describe.each(STORE_KINDS)("disputes on %s", (kind) => {
  let platform: TestPlatform
  beforeAll(async () => {
    platform = await startPlatform(kind)
  })
  afterAll(async () => {
    await platform?.close()
  })

  const dispute = (body: Record<string, unknown>, options: { key?: string; idempotencyKey?: string } = {}) =>
    platform.request("POST", "/v1/disputes", { body, ...options })
  const created = async (body: Record<string, unknown>) => {
    const response = await dispute({ reason: "FRAUD", ...body })
    expect(response.status, response.text).toBe(200)
    return response.body
  }
  const simulate = (id: string, outcome: unknown) => platform.request("POST", `/v1/simulate/disputes/${id}/resolve`, { body: { outcome } })
  const account = async (id: string) => {
    const body = (await platform.request("GET", `/v1/financial-accounts/${id}`)).body
    return { balance: body.balance.amount, pending: body.pending_balance.amount, available: body.available_balance.amount }
  }
  const transaction = async (id: string) => (await platform.request("GET", `/v1/transactions/${id}`)).body
  const transfer = async (id: string) => (await platform.request("GET", `/v1/transfers/${id}`)).body
  const eventsOf = async (type: string, id: string) =>
    ((await platform.request("GET", `/v1/events?type=${type}&page_size=100`)).body.data as Array<any>).filter(
      (event) => event.data.object.id === id
    )
  /** A funded wallet (optionally tagged), a card on it, and a card transaction that settled `amount` at once. */
  const settled = async (funds: number, amount: number, tag?: string) => {
    const wallet = await createWallet(platform)
    if (tag !== undefined) {
      const tagged = await platform.request("PATCH", `/v1/wallets/${wallet.id}`, { body: { tag } })
      expect(tagged.status, tagged.text).toBe(200)
    }
    if (funds > 0) await fund(platform, wallet.financial_account_id, funds)
    const card = await issueCard(platform, wallet.id)
    const response = await platform.request("POST", "/v1/simulate/authorizations", {
      body: { card_id: card.id, amount, mcc: "5411", kind: "FINANCIAL_AUTHORIZATION" }
    })
    expect(response.status, response.text).toBe(200)
    expect(response.body).toMatchObject({ status: "SETTLED", settled_amount: amount, disputed_amount: 0 })
    return { wallet, card, accountId: wallet.financial_account_id as string, transaction: response.body }
  }
  /** Everything a refusal must leave as it was. */
  const snapshot = () =>
    onDatabase(platform, async (query) => {
      const count = async (table: string) => Number((await query(`SELECT COUNT(*) AS n FROM ${table}`))[0]!.n)
      return {
        disputes: await count("issuing_disputes"),
        transfers: await count("issuing_transfers"),
        events: await count("issuing_events"),
        disputed: await query("SELECT id, disputed_minor, updated_at FROM issuing_transactions ORDER BY id").then((rows) =>
          rows.map((row) => JSON.stringify(Object.values(row).map(String)))
        ),
        counts: await query("SELECT key, SUM(n) AS n FROM issuing_list_counts WHERE list = 'disputes' GROUP BY key ORDER BY key").then(
          (rows) => rows.map((row) => `${row.key}:${row.n}`)
        )
      }
    })

  it("credits the disputed amount provisionally with the dispute, the transaction's disputed_amount and the events", async () => {
    const { accountId, transaction: txn } = await settled(10_000, 3_000, "customer_7")
    expect(await account(accountId)).toEqual({ balance: 7_000, pending: 0, available: 7_000 })
    const first = await created({ transaction_id: txn.id, amount: 1_200, reason: "NOT_RECEIVED", explanation: "Never arrived" })
    expect(first).toMatchObject({
      object: "dispute",
      program_id: platform.org.program_id,
      transaction_id: txn.id,
      amount: 1_200,
      currency: "USD",
      reason: "NOT_RECEIVED",
      explanation: "Never arrived",
      status: "SUBMITTED",
      reversal_transfer_id: null
    })
    expect(first.created_at).toBe(first.updated_at)
    expect(await account(accountId)).toEqual({ balance: 8_200, pending: 0, available: 8_200 })
    const credit = await transfer(first.provisional_credit_transfer_id)
    expect(credit).toMatchObject({
      transaction_id: txn.id,
      amount: 1_200,
      status: "SETTLED",
      to_financial_account_id: accountId,
      payment_rail: "book"
    })
    expect(await transaction(txn.id)).toMatchObject({ status: "SETTLED", settled_amount: 3_000, disputed_amount: 1_200 })
    // Without an amount: all that is still disputable.
    const rest = await created({ transaction_id: txn.id })
    expect(rest).toMatchObject({ amount: 1_800, reason: "FRAUD", explanation: null })
    expect(await transaction(txn.id)).toMatchObject({ disputed_amount: 3_000 })
    expect(await account(accountId)).toEqual({ balance: 10_000, pending: 0, available: 10_000 })
    // The events, tagged with the card's wallet's tag, and the transaction's update.
    const [event] = await eventsOf("dispute.created", first.id)
    expect(event).toMatchObject({ tags: ["customer_7"], data: { object: first } })
    // Both types are subscribable, by the customer's tag too.
    const subscription = await platform.request("POST", "/v1/webhook-subscriptions", {
      body: { url: "https://example.com/hooks", event_types: ["dispute.created", "dispute.updated"], tag: "customer_7" }
    })
    expect(subscription.status, subscription.text).toBe(200)
    expect((await simulate(rest.id, "WON")).status).toBe(200)
    const [updated] = await eventsOf("dispute.updated", rest.id)
    expect(updated).toMatchObject({ tags: ["customer_7"], data: { object: { id: rest.id, status: "WON" } } })
    const updates = (await eventsOf("transaction.updated", txn.id)).map((e: any) => e.data.object.disputed_amount)
    expect(updates).toEqual(expect.arrayContaining([1_200, 3_000]))
    expect(await eventsOf("transfer.created", credit.id)).toHaveLength(1)
    // Nothing is left: another dispute is refused and writes nothing.
    const before = await snapshot()
    expectEnvelope(await dispute({ transaction_id: txn.id, reason: "FRAUD" }), 422, { code: "amount_exceeds_disputable", param: "amount" })
    expectEnvelope(await dispute({ transaction_id: txn.id, reason: "FRAUD", amount: 1 }), 422, {
      code: "amount_exceeds_disputable",
      param: "amount"
    })
    expect(await snapshot()).toEqual(before)
    await expectBooksBalance(platform)
  })

  it("WON keeps the credit, LOST takes it back (below zero if need be); neither can be resolved again", async () => {
    const { accountId, transaction: txn } = await settled(1_000, 1_000)
    const won = await created({ transaction_id: txn.id, amount: 400 })
    const lost = await created({ transaction_id: txn.id, amount: 600 })
    expect(await account(accountId)).toEqual({ balance: 1_000, pending: 0, available: 1_000 })
    // Spend everything the credits gave, so the reversal has to go below zero.
    const other = await createWallet(platform)
    const spent = await platform.request("POST", "/v1/transfers", {
      body: {
        payment_rail: "book",
        amount: 1_000,
        currency: "USD",
        from_financial_account_id: accountId,
        to_financial_account_id: other.financial_account_id
      }
    })
    expect(spent.status, spent.text).toBe(200)

    const wonResponse = await simulate(won.id, "WON")
    expect(wonResponse.status, wonResponse.text).toBe(200)
    expect(wonResponse.body).toMatchObject({ id: won.id, status: "WON", reversal_transfer_id: null, amount: 400 })
    expect(await account(accountId)).toEqual({ balance: 0, pending: 0, available: 0 })

    const network = await platform.request("POST", `/v1/network/disputes/${lost.id}/resolve`, { body: { outcome: "LOST" } })
    expect(network.status, network.text).toBe(200)
    expect(network.body).toMatchObject({ id: lost.id, status: "LOST", amount: 600 })
    expect(await account(accountId)).toEqual({ balance: -600, pending: 0, available: -600 })
    const reversal = await transfer(network.body.reversal_transfer_id)
    expect(reversal).toMatchObject({ from_financial_account_id: accountId, amount: 600, status: "SETTLED", transaction_id: txn.id })
    // A lost dispute's amount stays disputed: nothing is disputable again.
    expect(await transaction(txn.id)).toMatchObject({ disputed_amount: 1_000 })
    expect((await eventsOf("dispute.updated", lost.id)).map((e: any) => e.data.object.status)).toEqual(["LOST"])
    expect((await eventsOf("dispute.updated", won.id)).map((e: any) => e.data.object.status)).toEqual(["WON"])

    const before = await snapshot()
    for (const [id, outcome] of [
      [won.id, "LOST"],
      [lost.id, "WON"],
      [lost.id, "LOST"]
    ] as const) {
      expectEnvelope(await simulate(id, outcome), 409, { code: "conflict" })
      expectEnvelope(await platform.request("POST", `/v1/network/disputes/${id}/resolve`, { body: { outcome } }), 409)
    }
    expectEnvelope(await dispute({ transaction_id: txn.id, reason: "OTHER", amount: 1 }), 422, { code: "amount_exceeds_disputable" })
    expectEnvelope(await simulate(won.id, "DRAW"), 400, { param: "outcome" })
    expectEnvelope(await simulate(uuid(), "WON"), 404, { param: "dispute_id" })
    expect(await snapshot()).toEqual(before)

    const got = await platform.request("GET", `/v1/disputes/${lost.id}`)
    expect(got.body).toEqual(network.body)
    await expectBooksBalance(platform)
  })

  it("lists disputes in time order, filtered by transaction and status, with exact totals and keyset paging", async () => {
    const a = await settled(500, 500)
    const b = await settled(500, 500)
    const one = await created({ transaction_id: a.transaction.id, amount: 100 })
    const two = await created({ transaction_id: a.transaction.id, amount: 100 })
    const three = await created({ transaction_id: b.transaction.id, amount: 100 })
    // The first created is the last changed.
    expect((await simulate(one.id, "LOST")).status).toBe(200)
    const list = async (query: string) => {
      const response = await platform.request("GET", `/v1/disputes?${query}`)
      expect(response.status, response.text).toBe(200)
      return { ids: response.body.data.map((d: any) => d.id), total: response.body.total_count }
    }
    const ofA = `transaction_id=${a.transaction.id}`
    expect(await list(ofA)).toEqual({ ids: [two.id, one.id], total: 2 })
    expect(await list(`${ofA}&order_by=created_at&ascending=true`)).toEqual({ ids: [one.id, two.id], total: 2 })
    expect(await list(`${ofA}&order_by=updated_at&ascending=false`)).toEqual({ ids: [one.id, two.id], total: 2 })
    expect(await list(`${ofA}&status=LOST`)).toEqual({ ids: [one.id], total: 1 })
    expect(await list(`${ofA}&status=SUBMITTED`)).toEqual({ ids: [two.id], total: 1 })
    expect(await list(`transaction_id=${b.transaction.id}`)).toEqual({ ids: [three.id], total: 1 })
    const page = await list(`${ofA}&page_size=1&starting_after=${two.id}`)
    expect(page).toEqual({ ids: [one.id], total: 2 })
    const lostTotal = (await list("status=LOST")).total
    const all = await list("page_size=100")
    expect(all.ids).toEqual(expect.arrayContaining([one.id, two.id, three.id]))
    expect(all.total).toBe(all.ids.length)
    expect(lostTotal).toBeGreaterThanOrEqual(1)
    expectEnvelope(await platform.request("GET", "/v1/disputes?status=OPEN"), 400, { param: "status" })
    expectEnvelope(await platform.request("GET", "/v1/disputes?transaction_id=nope"), 400, { param: "transaction_id" })
    expectEnvelope(await platform.request("GET", "/v1/disputes?order_by=amount"), 400, { param: "order_by" })
    expectEnvelope(await platform.request("GET", `/v1/disputes/${uuid()}`), 404, { param: "dispute_id" })
    // Another program sees none of them.
    const other = await platform.createOrganization("elsewhere")
    const theirs = await platform.request("GET", `/v1/disputes/${one.id}`, { key: other.api_key, program: other.program_id })
    expectEnvelope(theirs, 404, { param: "dispute_id" })
  })

  it("refuses bad input with its param and writes nothing", async () => {
    const { card, transaction: txn, wallet } = await settled(1_000, 300)
    const held = await platform.request("POST", "/v1/simulate/authorizations", { body: { card_id: card.id, amount: 200, mcc: "5411" } })
    expect(held.body).toMatchObject({ status: "PENDING", settled_amount: 0 })
    const frozen = await issueCard(platform, wallet.id)
    expect((await platform.request("POST", `/v1/cards/${frozen.id}/freeze`)).status).toBe(200)
    const declined = await platform.request("POST", "/v1/simulate/authorizations", {
      body: { card_id: frozen.id, amount: 50, mcc: "5411" }
    })
    expect(declined.body).toMatchObject({ status: "DECLINED" })
    const funding = await fund(platform, wallet.financial_account_id, 100)
    const before = await snapshot()
    const cases: Array<[Record<string, unknown>, number, string, string?]> = [
      [{ transaction_id: uuid(), reason: "FRAUD" }, 404, "transaction_id"],
      [{ transaction_id: "not-an-id", reason: "FRAUD" }, 400, "transaction_id"],
      [{ reason: "FRAUD" }, 400, "transaction_id"],
      [{ transaction_id: txn.id }, 400, "reason"],
      [{ transaction_id: txn.id, reason: "BORED" }, 400, "reason"],
      [{ transaction_id: txn.id, reason: "FRAUD", amount: 0 }, 400, "amount"],
      [{ transaction_id: txn.id, reason: "FRAUD", amount: -5 }, 400, "amount"],
      [{ transaction_id: txn.id, reason: "FRAUD", amount: 1.5 }, 400, "amount"],
      [{ transaction_id: txn.id, reason: "FRAUD", amount: "100" }, 400, "amount"],
      [{ transaction_id: txn.id, reason: "FRAUD", explanation: "x".repeat(1001) }, 400, "explanation"],
      [{ transaction_id: txn.id, reason: "FRAUD", surprise: true }, 400, "surprise"],
      [{ transaction_id: txn.id, reason: "FRAUD", amount: 301 }, 422, "amount", "amount_exceeds_disputable"],
      [{ transaction_id: held.body.id, reason: "FRAUD" }, 422, "amount", "amount_exceeds_disputable"],
      [{ transaction_id: declined.body.id, reason: "FRAUD" }, 422, "transaction_id", "transaction_not_disputable"],
      [{ transaction_id: funding.transaction_id, reason: "FRAUD", amount: 10 }, 422, "transaction_id", "transaction_not_disputable"]
    ]
    for (const [body, status, param, code] of cases) {
      expectEnvelope(await dispute(body), status, { param, ...(code === undefined ? {} : { code }) })
    }
    expect(await snapshot()).toEqual(before)
  })

  it("answers a repeated Idempotency-Key with the first dispute, never a second credit", async () => {
    const { accountId, transaction: txn } = await settled(800, 800)
    const key = uuid()
    const first = await dispute({ transaction_id: txn.id, amount: 300, reason: "DUPLICATE" }, { idempotencyKey: key })
    expect(first.status, first.text).toBe(200)
    const again = await dispute({ transaction_id: txn.id, amount: 300, reason: "DUPLICATE" }, { idempotencyKey: key })
    expect(again.status, again.text).toBe(200)
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    expect(again.body).toEqual(first.body)
    expect(await transaction(txn.id)).toMatchObject({ disputed_amount: 300 })
    expect((await account(accountId)).balance).toBe(300)
  })

  it("never claims more than is disputable under concurrent submissions", async () => {
    const { accountId, transaction: txn } = await settled(1_000, 1_000)
    const responses = await Promise.all(Array.from({ length: 16 }, () => dispute({ transaction_id: txn.id, amount: 150, reason: "FRAUD" })))
    const statuses = responses.map((response) => response.status)
    expect(statuses.filter((status) => status === 200)).toHaveLength(6)
    for (const response of responses.filter((r) => r.status !== 200)) {
      expectEnvelope(response, 422, { code: "amount_exceeds_disputable", param: "amount" })
    }
    // The rest (100), claimed by many at once without an amount: exactly one gets it.
    const rest = await Promise.all(Array.from({ length: 8 }, () => dispute({ transaction_id: txn.id, reason: "OTHER" })))
    expect(rest.filter((response) => response.status === 200).map((response) => response.body.amount)).toEqual([100])
    expect(await transaction(txn.id)).toMatchObject({ disputed_amount: 1_000 })
    const listed = (await platform.request("GET", `/v1/disputes?transaction_id=${txn.id}&page_size=100`)).body
    expect(listed.total_count).toBe(7)
    expect(listed.data.reduce((sum: number, d: any) => sum + d.amount, 0)).toBe(1_000)
    expect((await account(accountId)).balance).toBe(1_000)
    await expectBooksBalance(platform)
  })
})

describe.each(STORE_KINDS)("dispute resolution's doors on %s", (kind) => {
  it("the network's route needs the network right; the simulation is unknown in production", async () => {
    const platform = await startPlatform(kind, { environment: "production" })
    try {
      const developer = await platform.request("POST", "/v1/api-keys", { program: null, body: { name: "dev", role: "developer" } })
      expect(developer.status, developer.text).toBe(200)
      expect(developer.body.network).toBe(false)
      const id = uuid()
      const refused = await platform.request("POST", `/v1/network/disputes/${id}/resolve`, {
        key: developer.body.secret,
        body: { outcome: "WON" }
      })
      expectEnvelope(refused, 403, { code: "permission_denied" })
      // The organization's first admin key holds the right: the dispute itself is then looked up.
      expectEnvelope(await platform.request("POST", `/v1/network/disputes/${id}/resolve`, { body: { outcome: "WON" } }), 404, {
        param: "dispute_id"
      })
      const simulated = await platform.request("POST", `/v1/simulate/disputes/${id}/resolve`, { body: { outcome: "WON" } })
      expect(simulated.status).toBe(404)
      expect(simulated.body.error.param ?? null).toBeNull()

      // In production a charge comes from the network; its dispute is decided by the network's route.
      const wallet = await createWallet(platform)
      await fund(platform, wallet.financial_account_id, 2_000)
      const card = await issueCard(platform, wallet.id)
      const data = await reveal(platform, card.id)
      const message = await platform.request("POST", "/v1/network/card-messages", {
        program: null,
        body: {
          network_message_id: uuid(),
          type: "FINANCIAL_AUTHORIZATION",
          network_transaction_id: `ntx-${uuid()}`,
          card: { number: data.pan, exp_month: data.exp_month, exp_year: data.exp_year, cvv: data.cvv },
          amount: 1_200,
          currency: "USD"
        }
      })
      expect(message.status, message.text).toBe(200)
      expect(message.body).toMatchObject({ result: "APPROVED", response_code: "00" })
      const created = await platform.request("POST", "/v1/disputes", {
        body: { transaction_id: message.body.transaction_id, reason: "FRAUD" }
      })
      expect(created.status, created.text).toBe(200)
      expect(created.body).toMatchObject({ amount: 1_200, status: "SUBMITTED" })
      const path = `/v1/network/disputes/${created.body.id}/resolve`
      expectEnvelope(await platform.request("POST", path, { key: developer.body.secret, body: { outcome: "LOST" } }), 403)
      const lost = await platform.request("POST", path, { body: { outcome: "LOST" } })
      expect(lost.status, lost.text).toBe(200)
      expect(lost.body).toMatchObject({ status: "LOST" })
      const account = await platform.request("GET", `/v1/financial-accounts/${wallet.financial_account_id}`)
      expect(account.body.balance.amount).toBe(2_000 - 1_200)
      expectEnvelope(await platform.request("POST", path, { body: { outcome: "WON" } }), 409)
    } finally {
      await platform.close()
    }
  })
})
