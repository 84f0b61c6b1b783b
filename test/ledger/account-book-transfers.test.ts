import { Ledger } from "@issuing/core"
import Database from "better-sqlite3"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Compiled, recording, sqlitePlan } from "../support/plans.js"
import { startPlatform, type TestPlatform } from "../support/platform.js"
import { createWallet, fund, transfer } from "./support.js"

/**
 * Regression found by the soak (bench/soak.js, docs/operations.md#fault-tolerance): on SQLite,
 * GET /v1/financial-accounts/{id}/book-transfers reached 0.4 s at p50 after two minutes of traffic
 * and stalled every other request behind it (11 s at 50,000 book transfers). Its account filter
 * was a correlated EXISTS that the planner ran once per book transfer of the program, each run
 * reading all of the account's entries (the by-account index has `book` between the account and
 * the book transfer). Since migration 0310 every entry carries its book transfer's posted_at and
 * the by-account index is (account, book, posted_at, book transfer): a page newest or oldest first
 * reads one range of it per book, in index order, never all the account's entries
 * (docs/ledger.md#an-accounts-book-transfers). Checked on the statements the list really runs, by
 * SQLite's query plan, for both books and each one, page 1, a deep page and after a cursor.
 */
describe("an account's book transfers on sqlite", () => {
  let platform: TestPlatform
  let accountId: string
  beforeAll(async () => {
    platform = await startPlatform("sqlite")
    const a = await createWallet(platform, "A")
    const b = await createWallet(platform, "B")
    accountId = a.financial_account_id
    await fund(platform, accountId, 1000)
    for (let i = 0; i < 7; i++) {
      const posted = await transfer(platform, {
        paymentRail: "book",
        amount: 10,
        from_financial_account_id: accountId,
        to_financial_account_id: b.financial_account_id
      })
      expect(posted.status, posted.text).toBe(200)
    }
  })
  afterAll(() => platform?.close())

  it("reads a page through one index range per book, never all the account's entries", async () => {
    const statements: Array<Compiled> = []
    const list = (filter: { book?: string }, orderBy: string | null, page: number, ascending: boolean, startingAfter?: string) =>
      platform.instance.runtime.runPromise(
        Effect.flatMap(Ledger, (ledger) =>
          ledger.listAccountBookTransfers(platform.org.program_id, accountId, filter as any, {
            page,
            pageSize: 3,
            orderBy: orderBy as any,
            ascending,
            startingAfter
          })
        ).pipe((effect) => recording(effect, statements))
      )
    for (const orderBy of [null, "amount"]) {
      for (const ascending of [false, true]) {
        for (const book of [undefined, "cash"]) {
          const filter = book === undefined ? {} : { book }
          const first = await list(filter, orderBy, 1, ascending)
          expect(first.total_count).toBe(8)
          expect(first.data).toHaveLength(3)
          const second = (await list(filter, orderBy, 2, ascending)).data.map((row) => row.id)
          expect(second).toHaveLength(3)
          expect(second).not.toContain(first.data[0]!.id)
          expect((await list(filter, orderBy, 1, ascending, first.data[2]!.id)).data.map((row) => row.id)).toEqual(second)
        }
      }
    }

    const db = new Database(platform.database.filename!, { readonly: true })
    try {
      const ranges = statements.filter(([text]) => text.includes("FROM issuing_book_entries") && text.includes("LIMIT"))
      // One statement per page (the ranges of both books in it without a book): page 1, page 2 and
      // the page after a cursor, per order, direction and book filter.
      expect(ranges).toHaveLength(24)
      for (const [text, params] of ranges) {
        const plan = sqlitePlan(db, [text, params])
        // By posted_at the index alone answers; by amount its range's rows are read for their amount.
        const covering = text.includes("posted_at AS k") ? "COVERING " : ""
        expect(plan, plan).toContain(
          `SEARCH issuing_book_entries USING ${covering}INDEX issuing_book_entries_by_account (financial_account_id=? AND book=?`
        )
        // Each book's range of the account's entries (by posted_at in index order and cut at the page's
        // depth; by amount sorted), then merged: never the program's rows.
        expect(plan).not.toMatch(/SCAN issuing_book|issuing_book_transfers_by_program|CORRELATED/)
      }
      // Then the page's book transfers by primary key: never a walk of the program's index, which
      // also serves the order (SQLite chose it for 3 ids or more while the program was a plain
      // condition: 130 ms at 150,000 book transfers).
      const byId = statements.filter(([text]) => /FROM issuing_book_transfers bt\s+WHERE bt.id IN/.test(text))
      expect(byId).toHaveLength(24)
      for (const [text, params] of byId) {
        const plan = sqlitePlan(db, [text, params])
        expect(plan).toMatch(/SEARCH bt USING INDEX sqlite_autoindex_issuing_book_transfers_1 \(id=\?\)/)
      }
    } finally {
      db.close()
    }
  })
})
