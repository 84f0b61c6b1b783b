import { OAuthStore } from "@issuing/core"
import Database from "better-sqlite3"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { type Compiled, pgPlan, pgSorts, recording, sqlitePlan } from "../support/plans.js"
import { expectEnvelope, startPlatform, type TestPlatform } from "../support/platform.js"
import { expectListed, inListOrder, type ListedRow } from "../support/lists.js"
import { createClient } from "./support.js"

/**
 * An organization's grants list shows live grants only: page 1, a deep page and the page after a
 * grant are one range of the partial index of live grants (migration 0412), never a walk past the
 * revoked ones or a sort (docs/operations.md#volume). The list's behaviour is test/security/grants.test.ts's.
 */
describe.each(STORE_KINDS)("the OAuth grants list on %s", (kind) => {
  let platform: TestPlatform
  beforeAll(async () => {
    platform = await startPlatform(kind)
  })
  afterAll(() => platform?.close())

  it("reads the organization's live grants through their partial index in order", async () => {
    const db = kind === "sqlite" ? new Database(platform.database.filename!, { readonly: true }) : undefined
    try {
      for (const offset of [0, 20]) {
        const statements: Array<Compiled> = []
        await platform.instance.runtime.runPromise(
          Effect.flatMap(OAuthStore, (store) =>
            store.listGrants(platform.org.organization_id, { orderBy: "created_at", descending: true, limit: 10, offset })
          ).pipe((effect) => recording(effect, statements))
        )
        const listed = statements.filter(([text]) => text.includes("LIMIT"))
        expect(listed).toHaveLength(1)
        if (db !== undefined) {
          const plan = sqlitePlan(db, listed[0]!)
          expect(plan).toContain("INDEX issuing_oauth_grants_live (organization_id=?)")
          // A deep page sorts only the page's rows it reads by id (pageRows).
          expect(plan.split("TEMP B-TREE").length - 1, plan).toBe(offset === 0 ? 0 : 1)
        } else {
          const plan = await pgPlan(platform.instance.runtime, listed[0]!)
          expect(plan).toContain("using issuing_oauth_grants_live")
          expect(pgSorts(offset === 0 ? plan : plan.split(" | ").slice(1).join(" | ")), plan).toBe(false)
        }
      }
      const counted = (await platform.request("GET", "/v1/oauth/grants", { program: null })).body
      expect(counted).toEqual({ data: [], total_count: 0, has_more: false })
    } finally {
      db?.close()
    }
  })
})

/**
 * An organization's OAuth clients list shows live clients only: one range of a partial index of
 * live clients by created_at or by name (migration 0450), never a walk past the deleted ones or a
 * sort; the same clients in the same order, with the exact total, by page and by starting_after.
 */
describe.each(STORE_KINDS)("the OAuth clients list on %s", (kind) => {
  let platform: TestPlatform
  let live: Array<ListedRow>
  let deleted: Array<string>
  beforeAll(async () => {
    platform = await startPlatform(kind)
    const created: Array<ListedRow> = []
    // Names that repeat (ties broken by id) and do not follow creation.
    for (const name of ["Payroll", "Expense tool", "Ledger sync", "Expense tool", "Audit", "Payroll", "Zapier", "Books"]) {
      const client = await createClient(platform, { name })
      created.push(client as unknown as ListedRow)
    }
    deleted = [created[1]!.id, created[2]!.id, created[6]!.id]
    for (const id of deleted) {
      const response = await platform.request("DELETE", `/v1/oauth-clients/${id}`, { program: null })
      expect(response.status, response.text).toBe(200)
    }
    const listed = await platform.request("GET", "/v1/oauth-clients?page_size=100", { program: null })
    expect(listed.status, listed.text).toBe(200)
    live = listed.body.data
    expect(live.map((row) => row.id).sort()).toEqual(
      created
        .map((row) => row.id)
        .filter((id) => !deleted.includes(id))
        .sort()
    )
  })
  afterAll(() => platform?.close())

  it("lists, pages and walks exactly the live clients, by created_at and by name", async () => {
    const get = (path: string) => platform.request("GET", path, { program: null })
    // An organization's list: no X-Program-ID.
    const organizationScoped: TestPlatform = {
      ...platform,
      request: (method, path, options) => platform.request(method, path, { program: null, ...options })
    }
    for (const field of ["created_at", "name"]) {
      for (const ascending of [false, true]) {
        const query = `order_by=${field}&ascending=${ascending}`
        await expectListed(organizationScoped, "/v1/oauth-clients", query, inListOrder(live, field, ascending), 2)
      }
    }
    expectEnvelope(await get(`/v1/oauth-clients?starting_after=${deleted[0]}`), 400, { param: "starting_after" })
    const stranger = await platform.createOrganization("Stranger")
    const theirs = await platform.request("GET", "/v1/oauth-clients", { key: stranger.api_key, program: null })
    expect(theirs.body).toEqual({ data: [], total_count: 0, has_more: false })
  })

  it("reads the organization's live clients through their partial indexes in order", async () => {
    const db = kind === "sqlite" ? new Database(platform.database.filename!, { readonly: true }) : undefined
    try {
      for (const [orderBy, index] of [
        ["created_at", "issuing_oauth_clients_live"],
        ["name", "issuing_oauth_clients_live_by_name"]
      ] as const) {
        for (const [offset, after] of [
          [0, null],
          [2, null],
          [0, live[0]!.id]
        ] as const) {
          const statements: Array<Compiled> = []
          await platform.instance.runtime.runPromise(
            Effect.flatMap(OAuthStore, (store) =>
              store.listClients(platform.org.organization_id, { orderBy, descending: true, limit: 2, offset, after })
            ).pipe((effect) => recording(effect, statements))
          )
          const label = `${orderBy} from ${offset} after ${after}`
          const listed = statements.filter(([text]) => text.includes("LIMIT"))
          expect(listed, label).toHaveLength(1)
          if (db !== undefined) {
            const plan = sqlitePlan(db, listed[0]!)
            expect(plan, label).toContain(`INDEX ${index} (organization_id=?`)
            // A deep page sorts only the page's rows it reads by id (pageRows).
            expect(plan.split("TEMP B-TREE").length - 1, `${label}: ${plan}`).toBe(offset === 0 ? 0 : 1)
          } else {
            const plan = await pgPlan(platform.instance.runtime, listed[0]!)
            expect(plan, label).toContain(`using ${index} `)
            expect(plan, label).not.toContain("Filter:")
            expect(pgSorts(offset === 0 ? plan : plan.split(" | ").slice(1).join(" | ")), `${label}: ${plan}`).toBe(false)
          }
        }
      }
    } finally {
      db?.close()
    }
  })
})
