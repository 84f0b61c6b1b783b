import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope, startPlatform, type TestPlatform, uuid } from "../support/platform.js"
import { balanceOf, createWallet, expectBooksBalance, fund } from "./support.js"

/**
 * The references PostgreSQL no longer checks on a posting's rows (store-pg migration 0440,
 * docs/ledger.md#foreign-keys-a-posting-does-not-check) are kept by what runs before the write:
 * every bad id is refused over HTTP and writes nothing, and every row written names rows that exist.
 */
describe.each(STORE_KINDS)("a posting's references on %s", (kind) => {
  let platform: TestPlatform
  beforeAll(async () => {
    platform = await startPlatform(kind)
  })
  afterAll(async () => {
    await platform?.close()
  })

  /** Rows whose parent (book transfer, transfer, transaction, program) does not exist: none may. */
  const danglingReferences = () =>
    platform.instance.runtime.runPromise(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{ dangling: string }>`
          SELECT 'entry ' || e.book_transfer_id AS dangling FROM issuing_book_entries e
            WHERE NOT EXISTS (SELECT 1 FROM issuing_book_transfers bt WHERE bt.id = e.book_transfer_id)
          UNION ALL SELECT 'book transfer ' || bt.id FROM issuing_book_transfers bt
            WHERE NOT EXISTS (SELECT 1 FROM issuing_transfers t WHERE t.id = bt.transfer_id AND t.transaction_id = bt.transaction_id
                                AND t.program_id = bt.program_id)
          UNION ALL SELECT 'transfer ' || t.id FROM issuing_transfers t
            WHERE NOT EXISTS (SELECT 1 FROM issuing_transactions x WHERE x.id = t.transaction_id AND x.program_id = t.program_id)
               OR NOT EXISTS (SELECT 1 FROM issuing_financial_accounts a
                              WHERE a.id = t.from_financial_account_id AND a.program_id = t.program_id)
               OR NOT EXISTS (SELECT 1 FROM issuing_financial_accounts a
                              WHERE a.id = t.to_financial_account_id AND a.program_id = t.program_id)
          UNION ALL SELECT 'transaction ' || x.id FROM issuing_transactions x
            WHERE NOT EXISTS (SELECT 1 FROM issuing_programs p WHERE p.id = x.program_id)
          UNION ALL SELECT 'event ' || v.id FROM issuing_events v
            WHERE NOT EXISTS (SELECT 1 FROM issuing_programs p WHERE p.id = v.program_id)`
      })
    )

  it("refuses every bad id before writing anything, and every row written names rows that exist", async () => {
    const org = await platform.createOrganization("References")
    const as = { key: org.api_key, program: org.program_id }
    const wallet = async (name: string) => {
      const response = await platform.request("POST", "/v1/wallets", { ...as, body: { holder: { name } } })
      expect(response.status, response.text).toBe(200)
      return response.body as { id: string; financial_account_id: string }
    }
    const [a, b] = [await wallet("A"), await wallet("B")]
    const other = await createWallet(platform, "Elsewhere")
    const theirs = await fund(platform, other.financial_account_id, 5)
    const post = (body: Record<string, unknown>, options: { key?: string; program?: string } = as) =>
      platform.request("POST", "/v1/transfers", { ...options, body: { currency: "USD", ...body } })
    expect((await post({ paymentRail: "fednow_instant", amount: 100, to_financial_account_id: a.financial_account_id })).status).toBe(200)
    // Many at once: on PostgreSQL most are coalesced into batches (issuing_write_postings).
    const concurrent = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        post({
          paymentRail: "book",
          amount: 1,
          from_financial_account_id: a.financial_account_id,
          to_financial_account_id: b.financial_account_id,
          description: `n${i}`
        })
      )
    )
    expect(concurrent.map((response) => response.status)).toEqual(concurrent.map(() => 200))

    const totals = async () => ({
      transfers: (await platform.request("GET", "/v1/transfers", as)).body.total_count,
      transactions: (await platform.request("GET", "/v1/transactions", as)).body.total_count,
      events: (await platform.request("GET", "/v1/events", as)).body.total_count,
      bookTransfers: (await platform.request("GET", `/v1/financial-accounts/${a.financial_account_id}/book-transfers`, as)).body
        .total_count,
      a: await balanceOf(platform, a.financial_account_id).catch(() => undefined),
      theirs: (await platform.request("GET", `/v1/transactions/${theirs.transaction_id}`)).body.status
    })
    const before = await totals()
    expect(before).toMatchObject({ transfers: 25, transactions: 25 })
    const book = {
      paymentRail: "book",
      amount: 1,
      from_financial_account_id: a.financial_account_id,
      to_financial_account_id: b.financial_account_id
    }

    // A transaction to attach to: unknown, of another program, malformed.
    expectEnvelope(await post({ ...book, transaction_id: uuid() }), 404, { param: "transaction_id" })
    expectEnvelope(await post({ ...book, transaction_id: theirs.transaction_id }), 404, { param: "transaction_id" })
    expectEnvelope(await post({ ...book, transaction_id: "txn_1" }), 400, { param: "transaction_id" })
    // Accounts: unknown, of another program, malformed.
    expectEnvelope(await post({ ...book, from_financial_account_id: uuid() }), 404, { param: "from_financial_account_id" })
    expectEnvelope(await post({ ...book, to_financial_account_id: other.financial_account_id }), 404, { param: "to_financial_account_id" })
    expectEnvelope(await post({ ...book, to_financial_account_id: "fa_1" }), 400, { param: "to_financial_account_id" })
    // The program: unknown, another organization's, malformed.
    expectEnvelope(await post(book, { key: org.api_key, program: uuid() }), 403, { param: "X-Program-ID" })
    expectEnvelope(await post(book, { key: org.api_key, program: platform.org.program_id }), 403, { param: "X-Program-ID" })
    expectEnvelope(await post(book, { key: org.api_key, program: "program_1" }), 400, { param: "X-Program-ID" })

    expect(await totals()).toEqual(before)
    expect(await danglingReferences()).toEqual([])
    await expectBooksBalance(platform)
  })
})
