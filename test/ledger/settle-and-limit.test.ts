import { MAX_AMOUNT_MINOR, MAX_TOTAL_MINOR } from "@issuing/core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope, startPlatform, type TestPlatform } from "../support/platform.js"

/**
 * Two edges of docs/ledger.md over HTTP: concurrent settles of one pending transfer (exactly one
 * settles it, the others get 409), and the 2^53 − 1 bound on running totals inside a batch, per
 * item and atomic.
 */
describe.each(STORE_KINDS)("settle races and the total bound on %s", (kind) => {
  let platform: TestPlatform
  beforeAll(async () => {
    platform = await startPlatform(kind)
  })
  afterAll(async () => {
    await platform?.close()
  })

  /** A program of its own, so its settlement account's totals start at zero. */
  const newProgram = async () => {
    const org = await platform.createOrganization("edges")
    const as = { key: org.api_key, program: org.program_id }
    const request = (method: string, path: string, body?: unknown) => platform.request(method, path, { ...as, body })
    const wallet = async () => {
      const response = await request("POST", "/v1/wallets", { holder: { name: "Holder" } })
      expect(response.status, response.text).toBe(200)
      return response.body.financial_account_id as string
    }
    const books = async (accountId: string) => {
      const response = await request("GET", `/v1/financial-accounts/${accountId}/balances`)
      expect(response.status, response.text).toBe(200)
      const principal = response.body.data[0]
      return { debits: principal.debits.amount, credits: principal.credits.amount, balance: principal.balance.amount }
    }
    const settlement = async () => (await request("GET", "/v1/financial-accounts?kind=settlement&currency=USD")).body.data[0].id as string
    return { request, wallet, books, settlement }
  }

  it.each(["inbound", "outbound"] as const)(
    "settles a pending %s ACH transfer once under concurrent settles: one 200, the others 409, one transfer.settled",
    async (direction) => {
      const { books, request, wallet } = await newProgram()
      const account = await wallet()
      const funded = await request("POST", "/v1/transfers", {
        payment_rail: "fednow_instant",
        amount: 1_000,
        currency: "USD",
        to_financial_account_id: account
      })
      expect(funded.status, funded.text).toBe(200)
      const pending = await request("POST", "/v1/transfers", {
        payment_rail: "ach_same_day",
        amount: 300,
        currency: "USD",
        [direction === "inbound" ? "to_financial_account_id" : "from_financial_account_id"]: account
      })
      expect(pending.body).toMatchObject({ status: "PENDING" })
      const expected = direction === "inbound" ? 1_300 : 700
      // The book transfer was posted when the transfer was created (docs/ledger.md, rails).
      expect((await books(account)).balance).toBe(expected)

      const answers = await Promise.all(
        Array.from({ length: 5 }, () => request("POST", `/v1/simulate/transfers/${pending.body.id}/settle`))
      )
      const won = answers.filter((response) => response.status === 200)
      expect(won, answers.map((response) => response.text).join("\n")).toHaveLength(1)
      expect(won[0]!.body).toMatchObject({ id: pending.body.id, status: "SETTLED" })
      for (const lost of answers.filter((response) => response.status !== 200)) expectEnvelope(lost, 409, { code: "conflict" })

      // Settling posts nothing: the balance is exactly what the creation left.
      expect(await books(account)).toEqual(
        direction === "inbound" ? { debits: 0, credits: 1_300, balance: 1_300 } : { debits: 300, credits: 1_000, balance: 700 }
      )
      expect((await request("GET", `/v1/transfers/${pending.body.id}`)).body.status).toBe("SETTLED")
      expect((await request("GET", `/v1/transactions/${pending.body.transaction_id}`)).body.status).toBe("SETTLED")
      const settledEvents = (await request("GET", "/v1/events?type=transfer.settled&page_size=100")).body.data.filter(
        (event: any) => event.data.object.id === pending.body.id
      )
      expect(settledEvents).toHaveLength(1)
      // The transaction was announced when created (PENDING) and once when it became SETTLED.
      const transactionEvents = (await request("GET", "/v1/events?type=transaction.updated&page_size=100")).body.data.filter(
        (event: any) => event.data.object.id === pending.body.transaction_id
      )
      expect(transactionEvents.map((event: any) => event.data.object.status).sort()).toEqual(["PENDING", "SETTLED"])
    }
  )

  // Nine inbound transfers at the cap take the wallet's credits and the settlement account's debits
  // to 9 × 10^15; REST is what is left below 2^53 − 1.
  const REST = MAX_TOTAL_MINOR - 9 * MAX_AMOUNT_MINOR
  const inbound = (to: string, amount: number) => ({ payment_rail: "fednow_instant", amount, currency: "USD", to_financial_account_id: to })

  it("refuses, item by item, what would take a total past 2^53 − 1, and posts up to it exactly", async () => {
    const { books, request, settlement, wallet } = await newProgram()
    const a = await wallet()
    const b = await wallet()
    const response = await request("POST", "/v1/transfers/batch", {
      transfers: [
        ...Array.from({ length: 9 }, () => inbound(a, MAX_AMOUNT_MINOR)),
        inbound(a, MAX_AMOUNT_MINOR), // 10^16 > 2^53 − 1
        inbound(a, REST + 1), // one past
        inbound(a, REST), // exactly to the bound
        inbound(a, 1), // the wallet's credits are at the bound
        inbound(b, 1), // so are the settlement account's debits
        { payment_rail: "book", amount: 5, currency: "USD", from_financial_account_id: a, to_financial_account_id: b }
      ]
    })
    expect(response.status, response.text).toBe(200)
    const items = response.body.data
    for (const item of items.slice(0, 9)) expect(item).toMatchObject({ object: "transfer", status: "SETTLED" })
    for (const index of [9, 10, 12, 13]) {
      expect(items[index].error, `item ${index}`).toMatchObject({
        type: "invalid_request_error",
        code: "balance_limit_exceeded",
        param: "amount"
      })
    }
    expect(items[11]).toMatchObject({ object: "transfer", amount: REST })
    expect(items[14]).toMatchObject({ object: "transfer", amount: 5 })
    // Every figure exact, at the bound itself.
    expect(await books(a)).toEqual({ debits: 5, credits: MAX_TOTAL_MINOR, balance: MAX_TOTAL_MINOR - 5 })
    expect(await books(b)).toEqual({ debits: 0, credits: 5, balance: 5 })
    expect(await books(await settlement())).toEqual({ debits: MAX_TOTAL_MINOR, credits: 0, balance: -MAX_TOTAL_MINOR })
    // A single transfer is refused the same way.
    expectEnvelope(await request("POST", "/v1/transfers", inbound(b, 1)), 422, { code: "balance_limit_exceeded", param: "amount" })
  })

  it("atomic: an item past the bound fails the batch, naming it, and nothing of the batch is written", async () => {
    const { books, request, wallet } = await newProgram()
    const a = await wallet()
    const b = await wallet()
    const seed = await request("POST", "/v1/transfers/batch", {
      atomic: true,
      transfers: Array.from({ length: 9 }, () => inbound(a, MAX_AMOUNT_MINOR))
    })
    expect(seed.status, seed.text).toBe(200)
    const before = await books(a)
    const refused = await request("POST", "/v1/transfers/batch", {
      atomic: true,
      transfers: [
        { payment_rail: "book", amount: 5, currency: "USD", from_financial_account_id: a, to_financial_account_id: b },
        inbound(a, REST),
        inbound(b, 1) // the settlement account's debits would pass the bound
      ]
    })
    expectEnvelope(refused, 422, { type: "invalid_request_error", code: "balance_limit_exceeded", param: "transfers.2.amount" })
    expect(await books(a)).toEqual(before)
    expect(await books(b)).toEqual({ debits: 0, credits: 0, balance: 0 })
    expect((await request("GET", `/v1/transfers?financial_account_id=${b}`)).body.total_count).toBe(0)
    // Without the last item the same batch posts, every figure exact.
    const posted = await request("POST", "/v1/transfers/batch", {
      atomic: true,
      transfers: [
        { payment_rail: "book", amount: 5, currency: "USD", from_financial_account_id: a, to_financial_account_id: b },
        inbound(a, REST)
      ]
    })
    expect(posted.status, posted.text).toBe(200)
    expect(await books(a)).toEqual({ debits: 5, credits: MAX_TOTAL_MINOR, balance: MAX_TOTAL_MINOR - 5 })
  })
})
