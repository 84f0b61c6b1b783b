import { Ledger } from "@issuing/core"
import Database from "better-sqlite3"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Compiled, recording, sqlitePlan } from "../support/plans.js"
import { startPlatform, type TestPlatform } from "../support/platform.js"
import { createWallet, fund } from "./support.js"

/**
 * A program has a financial account per wallet, so the account list's filters must be index
 * ranges, not a walk of the program's accounts (docs/operations.md#volume): checked on the
 * statements the list really runs, by SQLite's query plan, with the rows each filter selects.
 */
describe("the financial-account list's filters on sqlite", () => {
  let platform: TestPlatform
  let wallet: { id: string; financial_account_id: string }
  beforeAll(async () => {
    platform = await startPlatform("sqlite")
    wallet = await createWallet(platform, "A")
    await createWallet(platform, "B")
    await createWallet(platform, "C", "EUR")
    await fund(platform, wallet.financial_account_id, 100)
  })
  afterAll(() => platform?.close())

  it("reads each filter's rows through its own index", async () => {
    const cases: ReadonlyArray<readonly [Record<string, string>, string, number]> = [
      [{ wallet_id: "" }, "issuing_financial_accounts_by_wallet (wallet_id=?)", 1],
      [{ kind: "settlement" }, "issuing_financial_accounts_by_kind (program_id=? AND kind=?)", 1],
      [{ kind: "wallet" }, "issuing_financial_accounts_by_kind (program_id=? AND kind=?)", 3],
      [{ currency: "EUR" }, "issuing_financial_accounts_by_currency (program_id=? AND currency=?)", 1],
      // `kind` with `currency`: the currency's range past at most its one settlement account, or that
      // account through the unique settlement index.
      [{ kind: "wallet", currency: "EUR" }, "issuing_financial_accounts_by_currency (program_id=? AND currency=?)", 1],
      [{ kind: "wallet", currency: "USD" }, "issuing_financial_accounts_by_currency (program_id=? AND currency=?)", 2],
      [{ kind: "settlement", currency: "USD" }, "issuing_financial_accounts_settlement (program_id=? AND currency=?)", 1],
      [{ kind: "settlement", currency: "EUR" }, "issuing_financial_accounts_settlement (program_id=? AND currency=?)", 0]
    ]
    const db = new Database(platform.database.filename!, { readonly: true })
    try {
      for (const [given, index, rows] of cases) {
        const filter = given.wallet_id === undefined ? given : { wallet_id: wallet.id }
        const statements: Array<Compiled> = []
        const page = await platform.instance.runtime.runPromise(
          Effect.flatMap(Ledger, (ledger) =>
            ledger.listFinancialAccounts(platform.org.program_id, filter as any, { page: 1, pageSize: 10, orderBy: null, ascending: false })
          ).pipe((effect) => recording(effect, statements))
        )
        expect(page.data, JSON.stringify(filter)).toHaveLength(rows)
        expect(page.total_count, JSON.stringify(filter)).toBe(rows)
        const listed = statements.filter(([text]) => text.includes("LIMIT"))
        expect(listed).toHaveLength(1)
        const plan = sqlitePlan(db, listed[0]!)
        expect(plan, JSON.stringify(filter)).toContain(`SEARCH a USING INDEX ${index}`)
      }
    } finally {
      db.close()
    }
  })
})
