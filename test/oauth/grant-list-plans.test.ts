import { OAuthStore } from "@issuing/core"
import Database from "better-sqlite3"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { type Compiled, pgPlan, pgSorts, recording, sqlitePlan } from "../support/plans.js"
import { startPlatform, type TestPlatform } from "../support/platform.js"

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
      expect(counted).toEqual({ data: [], total_count: 0 })
    } finally {
      db?.close()
    }
  })
})
