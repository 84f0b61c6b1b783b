import { SqlClient } from "@effect/sql"
import { MAX_TOTAL_MINOR, toInt } from "@issuing/core"
import { Effect } from "effect"
import { expect } from "vitest"
import type { TestPlatform } from "../support/platform.js"

/** Creates a wallet over HTTP and returns it. */
export const createWallet = async (platform: TestPlatform, name = "Ada Lovelace", currency?: string, program?: string) => {
  const response = await platform.request("POST", "/v1/wallets", {
    body: { holder: { name, email: "ada@example.com" }, ...(currency ? { currency } : {}) },
    ...(program ? { program } : {})
  })
  expect(response.status, response.text).toBe(200)
  return response.body as { id: string; financial_account_id: string }
}

/** Posts a transfer over HTTP. */
export const transfer = (platform: TestPlatform, body: Record<string, unknown>, program?: string) =>
  platform.request("POST", "/v1/transfers", { body: { currency: "USD", ...body }, ...(program ? { program } : {}) })

/** Funds an account by an inbound fednow_instant transfer (settled at once). */
export const fund = async (platform: TestPlatform, accountId: string, amount: number, currency = "USD") => {
  const response = await transfer(platform, { paymentRail: "fednow_instant", amount, currency, to_financial_account_id: accountId })
  expect(response.status, response.text).toBe(200)
  return response.body as { id: string; transaction_id: string }
}

/** The principal balance of an account. */
export const balanceOf = async (platform: TestPlatform, accountId: string): Promise<number> => {
  const response = await platform.request("GET", `/v1/financial-accounts/${accountId}`)
  expect(response.status, response.text).toBe(200)
  return response.body.balance.amount
}

/**
 * The ledger's invariants over everything the platform's database holds (docs/ledger.md): every
 * book transfer balances per currency, every transfer has its book transfer, every entry carries
 * its book transfer's posted_at and amount and every account of a book transfer has one entry in
 * each book (what an account's list reads and orders by: docs/ledger.md#an-accounts-book-transfers),
 * and every balance row is the sum of its entries, with
 * no running total past 2^53 − 1 (read as exact bigints).
 */
export const expectBooksBalance = (platform: TestPlatform) =>
  platform.instance.runtime.runPromise(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const unbalanced = yield* sql`SELECT book_transfer_id, currency,
          SUM(CASE WHEN entry_type = 'DEBIT' THEN amount_minor ELSE -amount_minor END) AS net
        FROM issuing_book_entries GROUP BY book_transfer_id, currency
        HAVING SUM(CASE WHEN entry_type = 'DEBIT' THEN amount_minor ELSE -amount_minor END) <> 0`
      expect(unbalanced).toEqual([])
      const orphans = yield* sql`SELECT t.id FROM issuing_transfers t
        LEFT JOIN issuing_book_transfers bt ON bt.transfer_id = t.id WHERE bt.id IS NULL`
      expect(orphans).toEqual([])
      const unlike = yield* sql`SELECT e.book_transfer_id, e.position FROM issuing_book_entries e
        JOIN issuing_book_transfers bt ON bt.id = e.book_transfer_id
        WHERE e.posted_at <> bt.posted_at OR e.amount_minor <> bt.amount_minor`
      expect(unlike).toEqual([])
      // Every account a book transfer moves has exactly one entry in each book: an account's book
      // transfers are its principal entries, whatever the book asked for (docs/ledger.md#an-accounts-book-transfers).
      const lopsided = yield* sql`SELECT book_transfer_id, financial_account_id FROM issuing_book_entries
        GROUP BY book_transfer_id, financial_account_id
        HAVING SUM(CASE WHEN book = 'principal' THEN 1 ELSE 0 END) <> 1 OR SUM(CASE WHEN book = 'cash' THEN 1 ELSE 0 END) <> 1
          OR COUNT(*) <> 2`
      expect(lopsided).toEqual([])
      const entrySums = yield* sql`SELECT financial_account_id, book,
          SUM(CASE WHEN entry_type = 'DEBIT' THEN amount_minor ELSE 0 END) AS debits,
          SUM(CASE WHEN entry_type = 'CREDIT' THEN amount_minor ELSE 0 END) AS credits
        FROM issuing_book_entries GROUP BY financial_account_id, book`
      const sums = new Map(entrySums.map((row: any) => [`${row.financial_account_id}/${row.book}`, row]))
      // Each (account, book) summed over its slots (docs/ledger.md#settlement-slots); only a
      // settlement account's rows may leave slot 0.
      const strays = yield* sql`SELECT b.financial_account_id FROM issuing_balances b
        JOIN issuing_financial_accounts a ON a.id = b.financial_account_id WHERE b.slot <> 0 AND a.kind <> 'settlement'`
      expect(strays).toEqual([])
      const balances = yield* sql`SELECT b.financial_account_id, b.book, SUM(b.debits_minor) AS debits_minor,
          SUM(b.credits_minor) AS credits_minor
        FROM issuing_balances b GROUP BY b.financial_account_id, b.book`
      for (const row of balances as ReadonlyArray<any>) {
        expect(BigInt(row.debits_minor) <= BigInt(MAX_TOTAL_MINOR) && BigInt(row.credits_minor) <= BigInt(MAX_TOTAL_MINOR)).toBe(true)
        const sum: any = sums.get(`${row.financial_account_id}/${row.book}`)
        expect(toInt(row.debits_minor)).toBe(sum === undefined ? 0 : toInt(sum.debits))
        expect(toInt(row.credits_minor)).toBe(sum === undefined ? 0 : toInt(sum.credits))
      }
    }) as Effect.Effect<void, unknown, never>
  )
