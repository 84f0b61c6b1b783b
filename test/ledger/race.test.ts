import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope, startPlatform, type TestPlatform, uuid } from "../support/platform.js"
import { balanceOf, createWallet, fund, transfer } from "./support.js"

/**
 * insufficient_funds under concurrency: 200 concurrent transfers of 1 out of an account funded
 * for exactly 100 → exactly 100 succeed, the rest are 422 insufficient_funds, the balance ends at 0.
 */
describe.each(STORE_KINDS)("transfer race on %s", (kind) => {
  let platform: TestPlatform
  beforeAll(async () => {
    platform = await startPlatform(kind)
  })
  afterAll(async () => {
    await platform?.close()
  })

  it("lets exactly 100 of 200 concurrent transfers through an account funded for 100", async () => {
    const source = await createWallet(platform, "Source")
    const targets = await Promise.all([createWallet(platform, "T1"), createWallet(platform, "T2")])
    await fund(platform, source.financial_account_id, 100)

    const responses = await Promise.all(
      Array.from({ length: 200 }, (_, index) =>
        // Mix book transfers to two wallets and outbound ACH so several rows contend.
        index % 3 === 2
          ? transfer(platform, { paymentRail: "ach_same_day", amount: 1, from_financial_account_id: source.financial_account_id })
          : transfer(platform, {
              paymentRail: "book",
              amount: 1,
              from_financial_account_id: source.financial_account_id,
              to_financial_account_id: targets[index % 2]!.financial_account_id
            })
      )
    )
    const succeeded = responses.filter((response) => response.status === 200)
    const refused = responses.filter((response) => response.status !== 200)
    expect(succeeded.length).toBe(100)
    expect(refused.length).toBe(100)
    for (const response of refused) expectEnvelope(response, 422, { code: "insufficient_funds", param: "amount" })
    expect(await balanceOf(platform, source.financial_account_id)).toBe(0)

    const toTargets = await Promise.all(targets.map((target) => balanceOf(platform, target.financial_account_id)))
    const outbound = succeeded.filter((response) => response.body.payment_rail === "ach_same_day").length
    expect(toTargets[0]! + toTargets[1]! + outbound).toBe(100)
    const transfers = await platform.request("GET", `/v1/transfers?financial_account_id=${source.financial_account_id}&page_size=1`)
    expect(transfers.body.total_count).toBe(101)
  })

  it("gives each of many concurrent transfers its own balance.updated: the account as that transfer left it", async () => {
    // On PostgreSQL concurrent transfers are written in coalesced batches
    // (docs/ledger.md#coalesced-postings-on-postgresql); the events must be those of one after another.
    const source = await createWallet(platform, "Source")
    const target = await createWallet(platform, "Target")
    await fund(platform, source.financial_account_id, 5_000)
    // 30 of 10 and 10 of 900 over 5,000: in any order all the 10s and exactly five 900s post.
    const amounts = Array.from({ length: 40 }, (_, i) => (i % 4 === 3 ? 900 : 10))
    const responses = await Promise.all(
      amounts.map((amount) =>
        transfer(platform, {
          paymentRail: "book",
          amount,
          from_financial_account_id: source.financial_account_id,
          to_financial_account_id: target.financial_account_id
        })
      )
    )
    const posted = amounts.filter((_, i) => responses[i]!.status === 200)
    expect(posted).toHaveLength(35)
    expect(posted.reduce((sum, n) => sum + n, 0)).toBe(4_800)

    const balances = new Map<string, Array<number>>()
    let after: string | undefined
    for (;;) {
      const page = await platform.request(
        "GET",
        `/v1/events?type=balance.updated&page_size=100${after === undefined ? "" : `&starting_after=${after}`}`
      )
      expect(page.status, page.text).toBe(200)
      for (const event of page.body.data) {
        const account = event.data.object as { id: string; balance: { amount: number } }
        balances.set(account.id, [...(balances.get(account.id) ?? []), account.balance.amount])
      }
      if (!page.body.has_more) break
      after = page.body.data.at(-1).id
    }
    /** The steps between an account's balances in the order they were reached (each event one transfer). */
    const steps = (shown: ReadonlyArray<number>, from: number, down: boolean) => {
      const ordered = [...shown].sort((a, b) => (down ? b - a : a - b))
      return ordered.map((balance, i) => Math.abs(balance - (i === 0 ? from : ordered[i - 1]!))).sort((a, b) => a - b)
    }
    const postedSorted = [...posted].sort((a, b) => a - b)
    // The source: its funding's event (5,000), then one per posted transfer, each 10 or 900 below the one before.
    const atSource = balances.get(source.financial_account_id)!
    expect(atSource).toHaveLength(36)
    expect(
      steps(
        atSource.filter((b) => b !== 5_000),
        5_000,
        true
      )
    ).toEqual(postedSorted)
    expect(Math.min(...atSource)).toBe(200)
    const atTarget = balances.get(target.financial_account_id)!
    expect(atTarget).toHaveLength(35)
    expect(steps(atTarget, 0, false)).toEqual(postedSorted)
    expect(Math.max(...atTarget)).toBe(4_800)
  })

  it("holds with each transfer in its own concurrent transaction (Idempotency-Key, no group commit)", async () => {
    // An idempotent request runs in its own transaction, so on PostgreSQL these contend on the
    // balance rows' locks across pool connections instead of sharing a group commit.
    const source = await createWallet(platform, "Source")
    const target = await createWallet(platform, "Target")
    await fund(platform, source.financial_account_id, 100)
    const responses = await Promise.all(
      Array.from({ length: 200 }, (_, index) =>
        platform.request("POST", "/v1/transfers", {
          idempotencyKey: uuid(),
          body:
            index % 2 === 0
              ? {
                  paymentRail: "book",
                  amount: 1,
                  currency: "USD",
                  from_financial_account_id: source.financial_account_id,
                  to_financial_account_id: target.financial_account_id
                }
              : // Outbound wires contend on the source row and the settlement account row.
                { paymentRail: "wire", amount: 1, currency: "USD", from_financial_account_id: source.financial_account_id }
        })
      )
    )
    expect(responses.filter((response) => response.status === 200).length).toBe(100)
    for (const response of responses.filter((response) => response.status !== 200)) {
      expectEnvelope(response, 422, { code: "insufficient_funds", param: "amount" })
    }
    expect(await balanceOf(platform, source.financial_account_id)).toBe(0)
  })

  it("never deadlocks into a failure when transfers cross in both directions", async () => {
    const a = await createWallet(platform, "A")
    const b = await createWallet(platform, "B")
    await fund(platform, a.financial_account_id, 1_000)
    await fund(platform, b.financial_account_id, 1_000)
    const responses = await Promise.all(
      Array.from({ length: 100 }, (_, index) =>
        platform.request("POST", "/v1/transfers", {
          idempotencyKey: uuid(),
          body: {
            paymentRail: "book",
            amount: 3,
            currency: "USD",
            from_financial_account_id: index % 2 === 0 ? a.financial_account_id : b.financial_account_id,
            to_financial_account_id: index % 2 === 0 ? b.financial_account_id : a.financial_account_id
          }
        })
      )
    )
    for (const response of responses) expect(response.status, response.text).toBe(200)
    expect((await balanceOf(platform, a.financial_account_id)) + (await balanceOf(platform, b.financial_account_id))).toBe(2_000)
  })
})
