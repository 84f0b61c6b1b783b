import { Statement } from "@effect/sql"
import { Ledger } from "@issuing/core"
import Database from "better-sqlite3"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startPlatform, type TestPlatform } from "../support/platform.js"
import { createWallet, fund, transfer } from "./support.js"

/**
 * Regression found by the soak (bench/soak.js, docs/operations.md#fault-tolerance): on SQLite,
 * GET /v1/financial-accounts/{id}/book-transfers reached 0.4 s at p50 after two minutes of traffic
 * and stalled every other request behind it (11 s at 50,000 book transfers). Its account filter
 * was a correlated EXISTS that the planner ran once per book transfer of the program, each run
 * reading all of the account's entries (the by-account index has `book` between the account and
 * the book transfer). The account's entries must be read once: checked on the statements the
 * list really runs, by SQLite's query plan.
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
    for (let i = 0; i < 3; i++) {
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

  it("reads the account's entries once, not once per book transfer of the program", async () => {
    const statements: Array<readonly [string, ReadonlyArray<unknown>]> = []
    const list = (filter: { book?: string }) =>
      platform.instance.runtime.runPromise(
        Effect.flatMap(Ledger, (ledger) =>
          ledger.listAccountBookTransfers(platform.org.program_id, accountId, filter as any, {
            page: 1,
            pageSize: 20,
            orderBy: null,
            ascending: false
          })
        ).pipe(
          Statement.withTransformer((statement) =>
            Effect.sync(() => {
              statements.push(statement.compile())
              return statement
            })
          )
        )
      )
    expect((await list({})).total_count).toBe(4)
    expect((await list({ book: "cash" })).total_count).toBe(4)

    const db = new Database(platform.database.filename!, { readonly: true })
    try {
      const filtered = statements.filter(([text]) => text.includes("issuing_book_transfers") && text.includes("issuing_book_entries e"))
      // The page, for each of the two filters (the total is a maintained count: docs/operations.md#volume).
      expect(filtered).toHaveLength(2)
      for (const [text, params] of filtered) {
        const plan = (db.prepare(`EXPLAIN QUERY PLAN ${text}`).all(...(params as Array<any>)) as Array<{ detail: string }>)
          .map((row) => row.detail)
          .join(" | ")
        expect(plan).toMatch(/SEARCH e USING COVERING INDEX issuing_book_entries_by_account/)
        expect(plan).not.toMatch(/CORRELATED|EXISTS/)
      }
    } finally {
      db.close()
    }
  })
})
