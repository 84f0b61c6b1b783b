import { Ledger } from "@issuing/core"
import Database from "better-sqlite3"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { type Compiled, pgPlan, pgSorts, recording, sqlitePlan } from "../support/plans.js"
import { expectEnvelope, startPlatform, type TestPlatform } from "../support/platform.js"
import { createWallet, fund, transfer } from "./support.js"

interface Listed {
  readonly id: string
  readonly status: string
  readonly payment_rail: string
  readonly from_financial_account_id: string | null
  readonly to_financial_account_id: string | null
}

/**
 * `GET /v1/transfers?financial_account_id=` newest or oldest first is the merge of the account's
 * two sides' index ranges (docs/operations.md#volume): the same rows, in the same order, with the
 * same total as the program's list filtered by hand, by page and by starting_after, with status and
 * rail filters; a starting_after outside the list is a 400.
 */
describe.each(STORE_KINDS)("an account's transfers on %s", (kind) => {
  let platform: TestPlatform
  let a: string
  let b: string
  let c: string

  beforeAll(async () => {
    platform = await startPlatform(kind)
    a = (await createWallet(platform, "A")).financial_account_id
    b = (await createWallet(platform, "B")).financial_account_id
    c = (await createWallet(platform, "C")).financial_account_id
    await fund(platform, a, 100_000)
    await fund(platform, b, 100_000)
    for (let index = 0; index < 6; index += 1) {
      const [from, to] = [
        [a, b],
        [b, a],
        [b, c],
        [a, c],
        [c, a],
        [b, c]
      ][index]!
      const moved = await transfer(platform, {
        paymentRail: "book",
        amount: 10 + index,
        from_financial_account_id: from,
        to_financial_account_id: to
      })
      expect(moved.status, moved.text).toBe(200)
      // Outbound wires stay PENDING: a status and a rail to filter on.
      const wired = await transfer(platform, { paymentRail: "wire", amount: 5, from_financial_account_id: index % 2 === 0 ? a : b })
      expect(wired.status, wired.text).toBe(200)
    }
  })
  afterAll(async () => {
    await platform?.close()
  })

  const get = async (query: string) => {
    const response = await platform.request("GET", `/v1/transfers?${query}`)
    expect(response.status, `${query}: ${response.text}`).toBe(200)
    return response.body as { data: Array<Listed>; total_count: number }
  }

  const filters = ["", "status=SETTLED", "status=PENDING", "payment_rail=book", "payment_rail=wire&status=PENDING"]

  it("lists, pages and walks exactly the program's transfers of the account, in order", async () => {
    for (const ascending of [false, true]) {
      const everything = (await get(`page_size=100&ascending=${ascending}`)).data
      expect(everything).toHaveLength(14)
      for (const filter of filters) {
        const wanted = new URLSearchParams(filter)
        const expected = everything
          .filter((row) => row.from_financial_account_id === a || row.to_financial_account_id === a)
          .filter((row) => (wanted.get("status") ?? row.status) === row.status)
          .filter((row) => (wanted.get("payment_rail") ?? row.payment_rail) === row.payment_rail)
          .map((row) => row.id)
        expect(expected.length, filter).toBeGreaterThan(0)
        const query = `financial_account_id=${a}&ascending=${ascending}${filter === "" ? "" : `&${filter}`}`
        const whole = await get(`${query}&page_size=100`)
        expect(
          whole.data.map((row) => row.id),
          query
        ).toEqual(expected)
        expect(whole.total_count, query).toBe(expected.length)
        const paged: Array<string> = []
        for (let page = 1; page <= Math.ceil(expected.length / 3); page += 1) {
          paged.push(...(await get(`${query}&page_size=3&page=${page}`)).data.map((row) => row.id))
        }
        expect(paged, query).toEqual(expected)
        const walked: Array<string> = []
        let after: string | undefined
        for (let guard = 0; guard < 50; guard += 1) {
          const page = await get(`${query}&page_size=3${after === undefined ? "" : `&starting_after=${after}`}`)
          walked.push(...page.data.map((row) => row.id))
          if (page.data.length < 3) break
          after = page.data.at(-1)!.id
        }
        expect(walked, query).toEqual(expected)
      }
    }
  })

  it("refuses a starting_after that is not one of the account's transfers with these filters", async () => {
    const all = (await get("page_size=100")).data
    const notA = all.find((row) => row.from_financial_account_id !== a && row.to_financial_account_id !== a)!
    const wire = all.find((row) => row.payment_rail === "wire" && row.from_financial_account_id === a)!
    for (const query of [
      `financial_account_id=${a}&starting_after=${notA.id}`,
      `financial_account_id=${a}&payment_rail=book&starting_after=${wire.id}`,
      `financial_account_id=${a}&starting_after=00000000-0000-7000-8000-000000000000`
    ]) {
      expectEnvelope(await platform.request("GET", `/v1/transfers?${query}`), 400, { param: "starting_after" })
    }
  })

  it("lists none of an account's transfers to another program, on any page", async () => {
    const stranger = await platform.createOrganization("Stranger")
    for (const query of [
      `financial_account_id=${a}`,
      `financial_account_id=${a}&page=2&page_size=2`,
      `financial_account_id=${a}&ascending=true`
    ]) {
      const response = await platform.request("GET", `/v1/transfers?${query}`, { key: stranger.api_key, program: stranger.program_id })
      expect(response.status, response.text).toBe(200)
      expect(response.body).toEqual({ data: [], total_count: 0, has_more: false })
    }
    const ours = (await get(`financial_account_id=${a}&page_size=1`)).data[0]!
    expectEnvelope(
      await platform.request("GET", `/v1/transfers?financial_account_id=${a}&starting_after=${ours.id}`, {
        key: stranger.api_key,
        program: stranger.program_id
      }),
      400,
      { param: "starting_after" }
    )
  })

  it("reads each side's range through its own index in order, never the program's, never sorted", async () => {
    const statements: Array<Compiled> = []
    const list = (filter: Record<string, string>, page: number) =>
      platform.instance.runtime.runPromise(
        Effect.flatMap(Ledger, (ledger) =>
          ledger.listTransfers(platform.org.program_id, filter as any, { page, pageSize: 3, orderBy: null, ascending: false })
        ).pipe((effect) => recording(effect, statements))
      )
    for (const filter of [{}, { status: "SETTLED" }, { payment_rail: "book" }]) {
      await list({ ...filter, financial_account_id: a }, 1)
      await list({ ...filter, financial_account_id: a }, 2)
    }
    await list({ payment_rail: "wire" }, 1)
    // The ranges merged (without a rail, the ones a probe found holding transfers: migration 0450).
    const ranges = statements.filter(
      ([text]) => text.includes("UNION ALL") && text.includes("from_financial_account_id =") && !text.includes("WHERE EXISTS")
    )
    expect(ranges).toHaveLength(6)
    const byId = statements.filter(([text]) => /FROM issuing_transfers WHERE id IN/.test(text))
    expect(byId).toHaveLength(7)
    if (kind === "postgres") {
      // Each side a range of its index in the page's order, cut at the page's depth, and the two
      // merged (Merge Append): no sort of the account's transfers.
      for (const statement of ranges) {
        const plan = await pgPlan(platform.instance.runtime, statement)
        expect(plan, plan).toMatch(/^Limit \| -> +Merge Append/)
        expect(plan).toMatch(/Index Only Scan Backward using issuing_transfers_by_from_status_rail /)
        expect(plan).toMatch(/Index Only Scan Backward using issuing_transfers_by_to_status_rail /)
        expect(plan, plan).not.toContain("Filter:")
        expect(pgSorts(plan), plan).toBe(false)
      }
      return
    }
    const db = new Database(platform.database.filename!, { readonly: true })
    const planOf = (statement: Compiled) => sqlitePlan(db, statement)
    try {
      for (const statement of ranges) {
        const plan = planOf(statement)
        // With or without status or rail, each side's ranges read from its index alone (covering),
        // seeking the status and the rail (migration 0450): the rows OFFSET skips are counted off
        // the indexes, and no row is read to be dropped.
        const side = (name: string) =>
          `USING COVERING INDEX issuing_transfers_by_${name}_status_rail (${name}_financial_account_id=? AND status=? AND payment_rail=?)`
        expect(plan).toContain(side("from"))
        expect(plan).toContain(side("to"))
        expect(plan).not.toMatch(/USING INDEX/)
        // The two ranges merged as they are read: the page and what OFFSET skips, never sorted.
        expect(plan).toMatch(/^MERGE \(UNION ALL\)/)
        expect(plan).not.toContain("TEMP B-TREE")
      }
      for (const statement of byId) expect(planOf(statement)).not.toMatch(/issuing_transfers_by_(program|status|update|amount)/)
      // The program's transfers of a rail: one range per status a wire transfer can have (PENDING,
      // SETTLED, RETURNED; migration 0400), merged.
      const rail = statements.filter(
        ([text]) => text.includes("payment_rail = ") && text.includes("program_id = ") && text.includes("LIMIT")
      )
      expect(rail.length).toBeGreaterThan(0)
      for (const statement of rail) {
        expect(planOf(statement).split("issuing_transfers_by_status_rail (program_id=? AND status=? AND payment_rail=?)")).toHaveLength(4)
      }
    } finally {
      db.close()
    }
  })
})
