import { LedgerStore, type PageWindow } from "@issuing/core"
import Database from "better-sqlite3"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { type Compiled, pgPlan, recording, sqlitePlan } from "../support/plans.js"
import { expectEnvelope, startPlatform, type TestPlatform } from "../support/platform.js"

// Finding a holder's wallets (docs/ledger.md#finding-a-wallet): GET /v1/wallets?holder_name= and
// ?holder_email=, the whole name or email, letter case aside, as a range of an index of the matches.

describe.each(STORE_KINDS)("wallet search by holder on %s", (kind) => {
  let platform: TestPlatform

  beforeAll(async () => {
    platform = await startPlatform(kind)
  })
  afterAll(async () => {
    await platform?.close()
  })

  type As = { readonly key?: string; readonly program?: string }
  const created = async (name: string, email: string | null, as: As = {}) => {
    const response = await platform.request("POST", "/v1/wallets", { body: { holder: { name, email } }, ...as })
    expect(response.status, response.text).toBe(200)
    return response.body as { id: string }
  }
  const found = async (query: string, as: As = {}) => {
    const response = await platform.request("GET", `/v1/wallets?${query}`, as)
    expect(response.status, response.text).toBe(200)
    return { ids: (response.body.data as Array<{ id: string }>).map((wallet) => wallet.id), total: response.body.total_count }
  }

  it("finds a holder's wallets by the whole name or email, letter case aside, newest first, with the exact count", async () => {
    const org = await platform.createOrganization("Search")
    const as = { key: org.api_key, program: org.program_id }
    const first = await created("Grace Hopper", "grace@example.com", as)
    await created("Grace Hopperson", "grace.h@example.com", as)
    await created("Ada Lovelace", "ada@example.com", as)
    const second = await created("grace hopper", "GRACE@example.com", as)
    expect(await found("holder_name=GRACE%20HOPPER", as)).toEqual({ ids: [second.id, first.id], total: 2 })
    expect(await found("holder_name=%20Grace%20Hopper%20", as)).toEqual({ ids: [second.id, first.id], total: 2 })
    expect(await found("holder_email=grace@EXAMPLE.com&order_by=created_at&ascending=true", as)).toEqual({
      ids: [first.id, second.id],
      total: 2
    })
    // Not a prefix or a part: the whole of it.
    expect(await found("holder_name=Grace", as)).toEqual({ ids: [], total: 0 })
    // Both at once, and paged after a row.
    expect(await found("holder_name=grace%20hopper&holder_email=grace@example.com&page_size=1", as)).toEqual({
      ids: [second.id],
      total: 2
    })
    expect(await found(`holder_email=grace@example.com&starting_after=${second.id}`, as)).toEqual({ ids: [first.id], total: 2 })
    // Another program's wallets are never found.
    expect(await found("holder_name=Grace%20Hopper")).toEqual({ ids: [], total: 0 })
  })

  it("refuses an empty or too long search with 400 naming it", async () => {
    for (const [query, param] of [
      ["holder_name=", "holder_name"],
      ["holder_name=%20%20", "holder_name"],
      [`holder_name=${"n".repeat(201)}`, "holder_name"],
      ["holder_email=", "holder_email"],
      ["holder=Ada", "holder"]
    ] as const) {
      expectEnvelope(await platform.request("GET", `/v1/wallets?${query}`), 400, { param })
    }
  })

  it("reads a search as a range of its index, in its order, never a scan of the program", async () => {
    const org = await platform.createOrganization("Search plans")
    const as = { key: org.api_key, program: org.program_id }
    for (let index = 0; index < 6; index += 1)
      await created(index % 2 === 0 ? "Mary Jackson" : `Holder ${index}`, `m${index % 2}@example.com`, as)
    const run = async (filter: { holder_name?: string; holder_email?: string }, window: PageWindow<"created_at" | "updated_at">) => {
      const statements: Array<Compiled> = []
      const listed = await platform.instance.runtime.runPromise(
        recording(
          Effect.flatMap(LedgerStore, (store) => store.listWallets(org.program_id, filter, window)),
          statements
        )
      )
      expect(listed.total).toBe(3)
      return statements.filter(([text]) => /FROM issuing_wallets/.test(text))
    }
    const db = kind === "sqlite" ? new Database(platform.database.filename!, { readonly: true }) : undefined
    try {
      for (const [filter, index] of [
        [{ holder_name: "mary jackson" }, "issuing_wallets_by_holder_name"],
        [{ holder_email: "M0@example.com" }, "issuing_wallets_by_holder_email"]
      ] as const) {
        // The page and its count both read the index.
        for (const statement of await run(filter, { orderBy: "created_at", descending: true, limit: 2, offset: 0, after: null })) {
          if (db !== undefined) {
            const plan = sqlitePlan(db, statement)
            expect(plan, JSON.stringify(filter)).toMatch(new RegExp(`USING (COVERING )?INDEX ${index} `))
            expect(plan, plan).not.toMatch(/SCAN issuing/)
          } else {
            const plan = await pgPlan(platform.instance.runtime, statement)
            expect(plan, plan).toMatch(new RegExp(` using ${index} `))
            expect(plan, plan).not.toMatch(/Seq Scan/)
          }
        }
      }
    } finally {
      db?.close()
    }
  })
})
