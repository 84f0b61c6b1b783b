import { SqlClient } from "@effect/sql"
import { Ledger } from "@issuing/core"
import Database from "better-sqlite3"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { expectListed, inListOrder, type ListedRow } from "../support/lists.js"
import { type Compiled, pgPlan, pgSorts, recording, sqlitePlan } from "../support/plans.js"
import { expectEnvelope, startPlatform, type TestPlatform } from "../support/platform.js"
import { createWallet, fund, transfer } from "./support.js"

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

/**
 * The financial-account list by `updated_at` (the principal balance row's, slot 0's:
 * docs/ledger.md#settlement-slots) is one range of the balance rows' index of the program
 * (migration 0411), the account's filters applied along it: the same accounts in the same order,
 * with the same total, as the program's accounts sorted here by their row's updated_at, by page
 * and by starting_after, and never a sort.
 */
describe.each(STORE_KINDS)("financial accounts by updated_at on %s", (kind) => {
  let platform: TestPlatform
  let wallets: Array<{ id: string; financial_account_id: string }>

  beforeAll(async () => {
    platform = await startPlatform(kind)
    wallets = []
    for (const [name, currency] of [
      ["A", "USD"],
      ["B", "USD"],
      ["C", "EUR"],
      ["D", "USD"],
      ["E", "EUR"],
      ["F", "GBP"]
    ] as const) {
      wallets.push(await createWallet(platform, name, currency))
    }
    // Postings in another order than creation, so updated_at orders the accounts otherwise.
    await fund(platform, wallets[3]!.financial_account_id, 500)
    await fund(platform, wallets[4]!.financial_account_id, 500, "EUR")
    await fund(platform, wallets[0]!.financial_account_id, 500)
    const moved = await transfer(platform, {
      paymentRail: "book",
      amount: 5,
      from_financial_account_id: wallets[3]!.financial_account_id,
      to_financial_account_id: wallets[1]!.financial_account_id
    })
    expect(moved.status, moved.text).toBe(200)
  })
  afterAll(() => platform?.close())

  /** The program's accounts with the updated_at of their principal slot-0 row, read from the table. */
  const accountsWithRowTimes = async (): Promise<Array<ListedRow>> => {
    const listed = (await platform.request("GET", "/v1/financial-accounts?page_size=100")).body.data as Array<ListedRow>
    const times = await platform.instance.runtime.runPromise(
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql<{ id: string; at: unknown }>`SELECT financial_account_id AS id, updated_at AS at FROM issuing_balances
                                                  WHERE book = 'principal' AND slot = 0`
      )
    )
    const at = new Map(times.map((row) => [row.id, row.at instanceof Date ? row.at.toISOString() : String(row.at)]))
    return listed.map((row) => ({ ...row, row_updated_at: at.get(row.id) }))
  }

  it("lists, pages and walks the accounts of each filter by updated_at", async () => {
    const accounts = await accountsWithRowTimes()
    expect(accounts.filter((row) => row.kind === "settlement")).toHaveLength(2)
    for (const filter of [
      "",
      "kind=wallet",
      "kind=settlement",
      "currency=EUR",
      "kind=wallet&currency=USD",
      "kind=wallet&currency=EUR",
      "currency=GBP",
      "kind=settlement&currency=EUR"
    ]) {
      const wanted = new URLSearchParams(filter)
      const rows = accounts.filter((row) => [...wanted].every(([name, value]) => row[name] === value))
      expect(rows.length, filter).toBeGreaterThan(0)
      for (const ascending of [false, true]) {
        const query = [filter, `order_by=updated_at&ascending=${ascending}`].filter((part) => part !== "").join("&")
        await expectListed(platform, "/v1/financial-accounts", query, inListOrder(rows, "row_updated_at", ascending), 2)
      }
    }
    const euro = accounts.find((row) => row.currency === "EUR")!
    expectEnvelope(
      await platform.request("GET", `/v1/financial-accounts?order_by=updated_at&currency=USD&starting_after=${euro.id}`),
      400,
      {
        param: "starting_after"
      }
    )
    const stranger = await platform.createOrganization("Stranger")
    const theirs = { key: stranger.api_key, program: stranger.program_id }
    expectEnvelope(await platform.request("GET", `/v1/financial-accounts?order_by=updated_at&starting_after=${euro.id}`, theirs), 400, {
      param: "starting_after"
    })
    expect((await platform.request("GET", "/v1/financial-accounts?order_by=updated_at", theirs)).body).toEqual({
      data: [],
      total_count: 0,
      has_more: false
    })
  })

  it("reads the balance rows' index per currency in order, merged, never sorting the accounts", async () => {
    const accounts = await accountsWithRowTimes()
    const db = kind === "sqlite" ? new Database(platform.database.filename!, { readonly: true }) : undefined
    try {
      // [filter, ranges]: one per currency the program holds (USD, EUR, GBP), or the currency's one.
      for (const [filter, ranges] of [
        [{}, 3],
        [{ kind: "wallet" }, 3],
        [{ currency: "USD" }, 1],
        [{ kind: "wallet", currency: "EUR" }, 1]
      ] as const) {
        for (const [offset, after] of [
          [0, null],
          [2, null],
          [0, accounts.find((row) => row.kind === "wallet" && row.currency === ((filter as any).currency ?? "USD"))!.id]
        ] as const) {
          const statements: Array<Compiled> = []
          await platform.instance.runtime.runPromise(
            Effect.flatMap(Ledger, (ledger) =>
              ledger.listFinancialAccounts(platform.org.program_id, filter as any, {
                page: offset / 2 + 1,
                pageSize: 2,
                orderBy: "updated_at",
                ascending: false,
                startingAfter: after ?? undefined
              })
            ).pipe((effect) => recording(effect, statements))
          )
          const label = `${JSON.stringify(filter)} from ${offset} after ${after}`
          const listed = statements.filter(([text]) => text.includes("LIMIT"))
          expect(listed, label).toHaveLength(1)
          const currencies = statements.filter(([text]) => text.includes("WITH RECURSIVE"))
          expect(currencies, label).toHaveLength("currency" in filter ? 0 : 1)
          if (db !== undefined) {
            const plan = sqlitePlan(db, listed[0]!)
            // Each range read from the index alone, seeking the program and the currency.
            const searches = plan.match(
              /SEARCH b USING COVERING INDEX issuing_balances_principal_by_currency_update \(program_id=\? AND currency=\?/g
            )
            expect(searches ?? [], `${label}: ${plan}`).toHaveLength(ranges)
            expect(plan, `${label}: ${plan}`).not.toContain("TEMP B-TREE")
            expect(plan, `${label}: ${plan}`).not.toMatch(/SCAN (a|b|issuing)/)
            if (ranges > 1) expect(plan, label).toMatch(/^MERGE \(UNION ALL\)/)
            // The currencies: one seek each along the same index.
            for (const statement of currencies) {
              const read = sqlitePlan(db, statement)
              expect(read, read).toContain("issuing_balances_principal_by_currency_update (program_id=? AND currency>?)")
              expect(read, read).not.toMatch(/SCAN (b|issuing)/)
            }
          } else {
            const plan = await pgPlan(platform.instance.runtime, listed[0]!)
            expect(plan.match(/Index Only Scan Backward using issuing_balances_principal_by_currency_update/g) ?? [], plan).toHaveLength(
              ranges
            )
            expect(pgSorts(plan), `${label}: ${plan}`).toBe(false)
            // No balance row read to be dropped (kind=wallet drops the currency's one settlement account).
            if (!("kind" in filter)) expect(plan, plan).not.toContain("Filter:")
            if (ranges > 1) expect(plan, plan).toMatch(/Merge Append/)
            for (const statement of currencies) {
              const read = await pgPlan(platform.instance.runtime, statement)
              expect(read, read).toContain("Index Only Scan using issuing_balances_principal_by_currency_update")
            }
          }
        }
      }
      // The settlement accounts (one per currency) by updated_at: their kind's range, not a walk of every wallet's row.
      const statements: Array<Compiled> = []
      await platform.instance.runtime.runPromise(
        Effect.flatMap(Ledger, (ledger) =>
          ledger.listFinancialAccounts(platform.org.program_id, { kind: "settlement" } as any, {
            page: 1,
            pageSize: 2,
            orderBy: "updated_at",
            ascending: false
          })
        ).pipe((effect) => recording(effect, statements))
      )
      const settlement = statements.filter(([text]) => text.includes("LIMIT"))
      expect(settlement).toHaveLength(1)
      if (db !== undefined)
        expect(sqlitePlan(db, settlement[0]!)).toMatch(/^SEARCH a USING INDEX issuing_financial_accounts_(by_kind|settlement) /)
      else
        expect(await pgPlan(platform.instance.runtime, settlement[0]!)).toMatch(
          /Index Scan using issuing_financial_accounts_(by_kind|settlement) on issuing_financial_accounts a/
        )
    } finally {
      db?.close()
    }
  })
})
