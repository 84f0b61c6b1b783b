import { bootstrapOrganization, createIssuing, storeFor } from "@issuing/http"
import { describe, expect, it } from "vitest"
import { createTestDatabase, STORE_KINDS } from "../support/databases.js"
import { TEST_VAULT_KEY } from "../support/platform.js"

// README.md#quick-start: on an empty database start-up creates the first organization — once, even when
// several processes start together (each instance here has its own connections, as a process would).
describe.each(STORE_KINDS)("bootstrap on %s", (kind) => {
  it("creates exactly one organization when several instances start on an empty database at once", async () => {
    const database = await createTestDatabase(kind)
    const target = kind === "sqlite" ? { kind, filename: database.filename! } : { kind, url: database.url }
    const instances = await Promise.all(
      [0, 1, 2].map(() => createIssuing({ store: storeFor(target as any), vaultKeys: [TEST_VAULT_KEY], background: false, log: null }))
    )
    try {
      const results = await Promise.all(instances.map((instance) => bootstrapOrganization(instance)))
      expect(results.filter((result) => result !== null)).toHaveLength(1)
      expect(await bootstrapOrganization(instances[0]!)).toBeNull()
    } finally {
      await Promise.all(instances.map((instance) => instance.dispose()))
      await database.drop()
    }
  })

  it("takes a chosen admin key secret only of 32 characters or more, also when embedded", async () => {
    const database = await createTestDatabase(kind)
    const target = kind === "sqlite" ? { kind, filename: database.filename! } : { kind, url: database.url }
    const instance = await createIssuing({ store: storeFor(target as any), vaultKeys: [TEST_VAULT_KEY], background: false, log: null })
    try {
      await expect(bootstrapOrganization(instance, "short-admin-key")).rejects.toThrow(/32 to 256/)
      await expect(bootstrapOrganization(instance, "k".repeat(31))).rejects.toThrow(/32 to 256/)
      const secret = "k".repeat(32)
      expect(await bootstrapOrganization(instance, secret)).toMatchObject({ api_key: secret })
      const listed = await instance.handler(new Request("http://localhost/v1/programs", { headers: { authorization: `Bearer ${secret}` } }))
      expect(listed.status).toBe(200)
    } finally {
      await instance.dispose()
      await database.drop()
    }
  })
})
