import { IssuingClient } from "@issuing/client"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createKey, createWallet, fund, issueCard, reveal } from "../cards/helpers.js"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope, servePlatform, startPlatform, TEST_VAULT_KEY, type TestPlatform, uuid } from "../support/platform.js"

/**
 * Settlement totals (docs/network.md#reconciliation), over HTTP on both stores: a program's UTC day
 * and currency as its card messages posted them — clearings (a late presentment included), force
 * posts, returns (linked and unlinked) and the net — exact, and nothing of another day, currency or
 * program, nor of a message refused.
 */
describe.each(STORE_KINDS)("settlement reports on %s", (kind) => {
  let platform: TestPlatform

  beforeAll(async () => {
    platform = await startPlatform(kind)
  })
  afterAll(async () => {
    await platform?.close()
  })

  /** The platform as another organization's first admin key sees it (its own program). */
  const as = (org: TestPlatform["org"]): TestPlatform => ({
    ...platform,
    org,
    request: (method, path, options = {}) =>
      platform.request(method, path, {
        ...options,
        key: options.key ?? org.api_key,
        program: options.program === null ? null : (options.program ?? org.program_id)
      })
  })
  const send = async (p: TestPlatform, type: string, fields: Record<string, unknown>) => {
    const response = await p.request("POST", "/v1/network/card-messages", {
      program: null,
      body: { network_message_id: uuid(), type, currency: "USD", ...fields }
    })
    expect(response.status, response.text).toBe(200)
    return response.body
  }
  const approved = async (p: TestPlatform, type: string, fields: Record<string, unknown>) => {
    const answer = await send(p, type, fields)
    expect(answer.result, JSON.stringify(answer)).not.toBe("DECLINED")
    return answer
  }
  const setup = async (p: TestPlatform, funds: number) => {
    const wallet = await createWallet(p)
    await fund(p, wallet.financial_account_id, funds)
    const issued = await issueCard(p, wallet.id)
    const data = await reveal(p, issued.id)
    return { number: data.pan, exp_month: data.exp_month, exp_year: data.exp_year, cvv: data.cvv }
  }
  const report = async (p: TestPlatform, date: string, currency = "USD") => {
    const response = await p.request("GET", `/v1/settlement-reports?date=${date}&currency=${currency}`)
    expect(response.status, response.text).toBe(200)
    return response.body
  }
  const empty = (date: string, currency = "USD") => ({
    object: "settlement_report",
    date,
    currency,
    clearings: { count: 0, amount: 0 },
    returns: { count: 0, amount: 0 },
    force_posts: { count: 0, amount: 0 },
    net_amount: 0
  })

  it("totals a day's clearings, force posts and returns exactly, and nothing of another day, currency or program", async () => {
    const card = await setup(platform, 20_000)
    const ntx = () => `ntx-${uuid()}`
    // A purchase cleared as authorized, one cleared above its hold (a tip).
    const a = ntx()
    await approved(platform, "AUTHORIZATION", { network_transaction_id: a, card, amount: 3_000 })
    const first = await approved(platform, "CLEARING", { network_transaction_id: a, amount: 3_000 })
    const day = (first.created_at as string).slice(0, 10)
    const b = ntx()
    await approved(platform, "AUTHORIZATION", { network_transaction_id: b, card, amount: 2_000 })
    await approved(platform, "CLEARING", { network_transaction_id: b, amount: 2_500 })
    // A late presentment: a clearing after the hold expired counts as a clearing.
    const c = ntx()
    const held = await approved(platform, "AUTHORIZATION", { network_transaction_id: c, card, amount: 1_000 })
    expect((await platform.request("POST", `/v1/transactions/${held.transaction_id}/expire`)).status).toBe(200)
    await approved(platform, "CLEARING", { network_transaction_id: c, amount: 1_000 })
    // A force post, a linked return and an unlinked refund.
    await approved(platform, "FORCE_POST", { network_transaction_id: ntx(), card, amount: 700 })
    await approved(platform, "RETURN", { network_transaction_id: a, card, amount: 500 })
    await approved(platform, "RETURN", { network_transaction_id: ntx(), card, amount: 400 })
    // Refused: a return above what settled, and below a clearing the network sent malformed.
    const refusedReturn = await platform.request("POST", "/v1/network/card-messages", {
      program: null,
      body: { network_message_id: uuid(), type: "RETURN", currency: "USD", network_transaction_id: a, card, amount: 10_000 }
    })
    expect(refusedReturn.status === 200 ? refusedReturn.body.result : refusedReturn.status).not.toBe("APPROVED")
    // A clearing in another currency than its authorization's: a format error (30), nothing posted.
    const e = ntx()
    await approved(platform, "AUTHORIZATION", { network_transaction_id: e, card, amount: 800 })
    const refusedClearing = await platform.request("POST", "/v1/network/card-messages", {
      program: null,
      body: { network_message_id: uuid(), type: "CLEARING", currency: "EUR", network_transaction_id: e, amount: 800 }
    })
    expect(refusedClearing.status === 200 ? refusedClearing.body.result : refusedClearing.status).not.toBe("APPROVED")

    const expected = {
      object: "settlement_report",
      date: day,
      currency: "USD",
      clearings: { count: 3, amount: 6_500 },
      returns: { count: 2, amount: 900 },
      force_posts: { count: 1, amount: 700 },
      net_amount: 6_300
    }
    expect(await report(platform, day)).toEqual(expected)
    // Any key that may read gets it.
    const viewer = await createKey(platform, { role: "viewer" })
    const seen = await platform.request("GET", `/v1/settlement-reports?date=${day}&currency=USD`, { key: viewer.secret })
    expect([seen.status, seen.body]).toEqual([200, expected])
    // The client's method reads the same report.
    const client = new IssuingClient({ apiKey: viewer.secret, baseUrl: platform.baseUrl, programId: platform.org.program_id })
    expect(await client.settlementReports.get({ date: day, currency: "USD" })).toEqual(expected)

    // Another currency, another day: nothing.
    expect(await report(platform, day, "EUR")).toEqual(empty(day, "EUR"))
    const next = new Date(Date.parse(`${day}T00:00:00Z`) + 2 * 86_400_000).toISOString().slice(0, 10)
    expect(await report(platform, next)).toEqual(empty(next))

    // A force post two days later (a platform whose clock runs ahead) counts on its own UTC day.
    const ahead = await servePlatform(platform.database, [TEST_VAULT_KEY], {}, { clockOffsetMs: 2 * 86_400_000 })
    try {
      const response = await fetch(`${ahead.baseUrl}/v1/network/card-messages`, {
        method: "POST",
        headers: { authorization: `Bearer ${platform.org.api_key}`, "content-type": "application/json" },
        body: JSON.stringify({
          network_message_id: uuid(),
          type: "FORCE_POST",
          currency: "USD",
          network_transaction_id: ntx(),
          card,
          amount: 300
        })
      })
      const later = await response.json()
      expect([response.status, later.result]).toEqual([200, "ACKNOWLEDGED"])
      const laterDay = (later.created_at as string).slice(0, 10)
      expect(laterDay).toBe(next)
      expect(await report(platform, laterDay)).toEqual({ ...empty(laterDay), force_posts: { count: 1, amount: 300 }, net_amount: 300 })
    } finally {
      await ahead.close()
    }
    expect(await report(platform, day)).toEqual(expected)

    // Another program's clearing is its own.
    const other = as(await platform.createOrganization("Other organization"))
    const otherCard = await setup(other, 5_000)
    await approved(other, "FORCE_POST", { network_transaction_id: ntx(), card: otherCard, amount: 999 })
    expect(await report(other, day)).toEqual({ ...empty(day), force_posts: { count: 1, amount: 999 }, net_amount: 999 })
    expect(await report(platform, day)).toEqual(expected)
  })

  it("refuses a missing or malformed date or currency with 400 and its param", async () => {
    const get = (query: string) => platform.request("GET", `/v1/settlement-reports${query}`)
    for (const query of ["?currency=USD", "?date=2026-13-01&currency=USD", "?date=2026-02-30&currency=USD", "?date=20260101&currency=USD"])
      expectEnvelope(await get(query), 400, { code: "invalid_request", param: "date" })
    for (const query of [
      "?date=2026-01-01",
      "?date=2026-01-01&currency=usd",
      "?date=2026-01-01&currency=XYZ",
      "?date=2026-01-01&currency=US"
    ])
      expectEnvelope(await get(query), 400, { code: "invalid_request", param: "currency" })
    expect((await get("?date=2026-01-01&currency=USD")).body).toEqual(empty("2026-01-01"))
  })
})
