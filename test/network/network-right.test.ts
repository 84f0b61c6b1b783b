import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope, startPlatform, type TestPlatform } from "../support/platform.js"

/**
 * The `network` key right (docs/network.md#authentication), over HTTP on both stores: false by
 * default, held by the organization's first admin key, granted only by an admin key holding it,
 * and an admin without it neither lists nor revokes a key that holds it.
 */
describe.each(STORE_KINDS)("the network right on %s", (kind) => {
  let platform: TestPlatform
  beforeAll(async () => {
    platform = await startPlatform(kind, { environment: "production" })
  })
  afterAll(async () => {
    await platform?.close()
  })

  const newKey = (fields: Record<string, unknown>, by = platform.org.api_key) =>
    platform.request("POST", "/v1/api-keys", { key: by, program: null, body: { name: "key", ...fields } })

  it("is held by the organization's first admin key and by no new key unless granted", async () => {
    const listed = await platform.request("GET", "/v1/api-keys", { program: null })
    expect(listed.body.data.map((key: { network: boolean }) => key.network)).toEqual([true])
    for (const role of ["admin", "developer", "viewer"]) {
      const created = await newKey({ role })
      expect(created.status, created.text).toBe(200)
      expect(created.body.network).toBe(false)
    }
  })

  it("is granted only by an admin key holding it", async () => {
    const admin = (await newKey({ role: "admin" })).body
    expectEnvelope(await newKey({ role: "developer", network: true }, admin.secret), 403, {
      code: "permission_denied",
      param: "network"
    })
    expectEnvelope(await newKey({ role: "developer", network: "yes" }), 400, { code: "invalid_request", param: "network" })
    const gateway = await newKey({ role: "developer", network: true })
    expect(gateway.status, gateway.text).toBe(200)
    expect(gateway.body.network).toBe(true)
    // An admin without the right neither lists nor revokes a key holding it.
    const listed = await platform.request("GET", "/v1/api-keys?page_size=100", { key: admin.secret, program: null })
    expect(listed.body.data.some((key: { id: string }) => key.id === gateway.body.id)).toBe(false)
    expectEnvelope(await platform.request("DELETE", `/v1/api-keys/${gateway.body.id}`, { key: admin.secret, program: null }), 404)
  })
})
