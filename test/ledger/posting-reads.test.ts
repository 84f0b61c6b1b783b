import { LedgerStore } from "@issuing/core"
import Database from "better-sqlite3"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Compiled, recording, sqlitePlan } from "../support/plans.js"
import { startPlatform, type TestPlatform } from "../support/platform.js"
import { createWallet, fund } from "./support.js"

/**
 * The read of a posting's accounts (the two wallets and the program's settlement account in the
 * currency) is a write path: its cost must not grow with the number of the program's accounts
 * (docs/operations.md#volume). As one `a.id IN (…) OR (kind = 'settlement' AND currency = …)`,
 * SQLite served two or more ids by walking the program's index; checked by SQLite's query plan
 * of the statement the store really runs.
 */
describe("a posting's read of its accounts on sqlite", () => {
  let platform: TestPlatform
  let a: string
  let b: string
  beforeAll(async () => {
    platform = await startPlatform("sqlite")
    a = (await createWallet(platform, "A")).financial_account_id
    b = (await createWallet(platform, "B")).financial_account_id
    await fund(platform, a, 100)
  })
  afterAll(() => platform?.close())

  it("reads the accounts by primary key and the settlement account by its own index, each once", async () => {
    const statements: Array<Compiled> = []
    const read = (ids: ReadonlyArray<string>) =>
      platform.instance.runtime.runPromise(
        Effect.flatMap(LedgerStore, (store) => store.findPostingAccounts(platform.org.program_id, ids, "USD")).pipe((effect) =>
          recording(effect, statements)
        )
      )
    const accounts = await read([a, b])
    expect(accounts.map((account) => account.kind).sort()).toEqual(["settlement", "wallet", "wallet"])
    const settlement = accounts.find((account) => account.kind === "settlement")!
    expect(
      accounts
        .filter((account) => account.kind === "wallet")
        .map((account) => account.id)
        .sort()
    ).toEqual([a, b].sort())
    // The settlement account named among the ids is returned once.
    expect((await read([a, settlement.id])).map((account) => account.id).sort()).toEqual([a, settlement.id].sort())

    const db = new Database(platform.database.filename!, { readonly: true })
    try {
      expect(statements).toHaveLength(2)
      for (const [text, params] of statements) {
        const plan = sqlitePlan(db, [text, params])
        expect(plan).toContain("SEARCH a USING INDEX sqlite_autoindex_issuing_financial_accounts_1 (id=?)")
        expect(plan).toContain("SEARCH a USING INDEX issuing_financial_accounts_settlement (program_id=? AND currency=?)")
        expect(plan).not.toContain("issuing_financial_accounts_by_program")
      }
    } finally {
      db.close()
    }
  })
})
