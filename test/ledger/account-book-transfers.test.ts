import { Ledger } from "@issuing/core"
import Database from "better-sqlite3"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { type Compiled, pgPlan, pgSorts, recording, sqlitePlan } from "../support/plans.js"
import { startPlatform, type TestPlatform } from "../support/platform.js"
import { createWallet, fund, transfer } from "./support.js"

/**
 * Regression found by the soak (bench/soak.js, docs/operations.md#fault-tolerance): on SQLite,
 * GET /v1/financial-accounts/{id}/book-transfers reached 0.4 s at p50 after two minutes of traffic
 * and stalled every other request behind it (11 s at 50,000 book transfers). Its account filter
 * was a correlated EXISTS that the planner ran once per book transfer of the program, each run
 * reading all of the account's entries. Since migration 0360 an account's book transfers are its
 * principal entries, indexed by (account, posted_at, book transfer) and by (account, amount, book
 * transfer) (docs/ledger.md#an-accounts-book-transfers): every page, in every order, with or
 * without `book`, is one range of one of them read in order — never a sort, never all the
 * account's entries — and a cursor's book transfer is checked through its own entries. Checked on
 * the statements the list really runs: SQLite's query plan, and PostgreSQL's with sorts and scans
 * of whole tables priced out (a plan that still sorts has no index in the page's order).
 */
describe.each(STORE_KINDS)("an account's book transfers on %s", (kind) => {
  let platform: TestPlatform
  let accountId: string
  beforeAll(async () => {
    platform = await startPlatform(kind)
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

  it("reads every page through one index range in its order, never all the account's entries", async () => {
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
    for (const orderBy of [null, "posted_at"]) {
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

    const ranges = statements.filter(([text]) => text.includes("FROM issuing_book_entries") && text.includes("LIMIT"))
    // One statement per page: page 1, page 2 and the page after a cursor, per order, direction and book filter.
    expect(ranges).toHaveLength(24)
    const cursors = statements.filter(([text]) => text.includes("EXISTS (SELECT 1 FROM issuing_book_entries e"))
    expect(cursors).toHaveLength(8)
    const byId = statements.filter(([text]) => /FROM issuing_book_transfers bt\s+WHERE bt.id IN/.test(text))
    expect(byId).toHaveLength(24)
    if (kind === "postgres") {
      for (const statement of ranges) {
        const plan = await pgPlan(platform.instance.runtime, statement)
        const index = "posted_at"
        expect(plan, plan).toMatch(
          new RegExp(`Index Only Scan (Backward )?using issuing_book_entries_principal_by_${index} on issuing_book_entries`)
        )
        expect(pgSorts(plan), plan).toBe(false)
      }
      for (const statement of cursors) {
        expect(await pgPlan(platform.instance.runtime, statement)).toContain("using issuing_book_entries_pkey on issuing_book_entries e")
      }
      return
    }
    const db = new Database(platform.database.filename!, { readonly: true })
    try {
      for (const [text, params] of ranges) {
        const plan = sqlitePlan(db, [text, params])
        const index = "posted_at"
        // One range of the principal entries' index of the page's order, the index alone (covering),
        // in order: never sorted, never the program's rows.
        expect(plan, plan).toMatch(
          new RegExp(
            `^SEARCH issuing_book_entries USING COVERING INDEX issuing_book_entries_principal_by_${index} \\(financial_account_id=\\?`
          )
        )
        expect(plan).not.toMatch(/TEMP B-TREE|SCAN issuing_book|issuing_book_transfers_by_program|CORRELATED/)
      }
      // A cursor's book transfer: its own few entries by primary key, never the account's entries
      // searched for it (69 ms at 1,000,000 transfers, growing with the account).
      for (const statement of cursors) {
        expect(sqlitePlan(db, statement)).toContain("SEARCH e EXISTS USING PRIMARY KEY (book_transfer_id=?)")
      }
      // Then the page's book transfers by primary key: never a walk of the program's index, which
      // also serves the order (SQLite chose it for 3 ids or more while the program was a plain
      // condition: 130 ms at 150,000 book transfers).
      for (const [text, params] of byId) {
        const plan = sqlitePlan(db, [text, params])
        expect(plan).toMatch(/SEARCH bt USING PRIMARY KEY \(id=\?\)/)
      }
    } finally {
      db.close()
    }
  })
})
