import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope, startPlatform, type TestPlatform, uuid } from "../support/platform.js"

/**
 * The authorization endpoint API (docs/card-transactions.md#real-time-decisions): one endpoint per
 * program, its secret shown on create and rotate only, validated fields, program-scoped like webhook
 * subscriptions. A sandbox platform accepts loopback URLs; nothing is asked here (see
 * authorization-decisions.test.ts).
 */
describe.each(STORE_KINDS)("authorization endpoints on %s", (kind) => {
  let platform: TestPlatform
  beforeAll(async () => {
    platform = await startPlatform(kind)
  })
  afterAll(async () => {
    await platform?.close()
  })

  const URL_A = "http://127.0.0.1:9/decide"
  const URL_B = "http://127.0.0.1:9/other"

  it("creates one endpoint per program with its defaults and secret; a second is 409; list, get, update, rotate, delete", async () => {
    const org = await platform.createOrganization("endpoints")
    const as = { key: org.api_key, program: org.program_id }
    const created = await platform.request("POST", "/v1/authorization-endpoints", { ...as, body: { url: URL_A } })
    expect(created.status, created.text).toBe(200)
    const endpoint = created.body
    expect(endpoint).toMatchObject({
      object: "authorization_endpoint",
      program_id: org.program_id,
      url: URL_A,
      timeout_ms: 2000,
      timeout_decision: "DECLINE",
      disabled: false
    })
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(endpoint.created_at).toBe(endpoint.updated_at)

    expectEnvelope(await platform.request("POST", "/v1/authorization-endpoints", { ...as, body: { url: URL_B } }), 409, {
      code: "conflict",
      param: null
    })

    const listed = await platform.request("GET", "/v1/authorization-endpoints", as)
    expect(listed.status, listed.text).toBe(200)
    const { secret, ...shown } = endpoint
    expect(listed.body).toEqual({ data: [shown], total_count: 1, has_more: false })
    expect(listed.body.data[0].secret).toBeUndefined()
    const after = await platform.request("GET", `/v1/authorization-endpoints?starting_after=${endpoint.id}`, as)
    expect(after.body).toMatchObject({ data: [], total_count: 1 })
    expect((await platform.request("GET", `/v1/authorization-endpoints/${endpoint.id}`, as)).body).toEqual(shown)

    const patched = await platform.request("PATCH", `/v1/authorization-endpoints/${endpoint.id}`, {
      ...as,
      body: { url: URL_B, timeout_ms: 100, timeout_decision: "APPROVE", disabled: true }
    })
    expect(patched.status, patched.text).toBe(200)
    expect(patched.body).toMatchObject({ id: endpoint.id, url: URL_B, timeout_ms: 100, timeout_decision: "APPROVE", disabled: true })
    expect(patched.body.secret).toBeUndefined()
    // Only what is sent changes.
    const partly = await platform.request("PATCH", `/v1/authorization-endpoints/${endpoint.id}`, { ...as, body: { disabled: false } })
    expect(partly.body).toMatchObject({ url: URL_B, timeout_ms: 100, timeout_decision: "APPROVE", disabled: false })

    const rotated = await platform.request("POST", `/v1/authorization-endpoints/${endpoint.id}/rotate-secret`, as)
    expect(rotated.status, rotated.text).toBe(200)
    expect(rotated.body.secret).toMatch(/^whsec_/)
    expect(rotated.body.secret).not.toBe(secret)
    expect((await platform.request("GET", `/v1/authorization-endpoints/${endpoint.id}`, as)).body.secret).toBeUndefined()

    const deleted = await platform.request("DELETE", `/v1/authorization-endpoints/${endpoint.id}`, as)
    expect(deleted.status, deleted.text).toBe(200)
    expect(deleted.body.id).toBe(endpoint.id)
    expectEnvelope(await platform.request("GET", `/v1/authorization-endpoints/${endpoint.id}`, as), 404, {
      param: "authorization_endpoint_id"
    })
    expect((await platform.request("GET", "/v1/authorization-endpoints", as)).body).toMatchObject({ data: [], total_count: 0 })
    // The program may have one again.
    expect((await platform.request("POST", "/v1/authorization-endpoints", { ...as, body: { url: URL_A } })).status).toBe(200)
  })

  it("refuses bad fields with 400 naming them", async () => {
    const org = await platform.createOrganization("validation")
    const as = { key: org.api_key, program: org.program_id }
    const create = (body: unknown) => platform.request("POST", "/v1/authorization-endpoints", { ...as, body })
    for (const timeout_ms of [99, 5001, 150.5, "200", null, -1]) {
      expectEnvelope(await create({ url: URL_A, timeout_ms }), 400, { type: "invalid_request_error", param: "timeout_ms" })
    }
    for (const timeout_decision of ["MAYBE", "decline", 1, null]) {
      expectEnvelope(await create({ url: URL_A, timeout_decision }), 400, { param: "timeout_decision" })
    }
    for (const url of [undefined, "", "ftp://example.com/", "not a url", "http://user:pw@example.com/"]) {
      expectEnvelope(await create({ url }), 400, { param: "url" })
    }
    // The webhook address guard: metadata addresses are refused in every environment.
    expectEnvelope(await create({ url: "http://169.254.169.254/latest" }), 400, { param: "url" })
    // The bounds themselves are accepted.
    const made = await create({ url: URL_A, timeout_ms: 5000, timeout_decision: "APPROVE" })
    expect(made.status, made.text).toBe(200)
    expect(made.body).toMatchObject({ timeout_ms: 5000, timeout_decision: "APPROVE" })
    const patch = (body: unknown) => platform.request("PATCH", `/v1/authorization-endpoints/${made.body.id}`, { ...as, body })
    expectEnvelope(await patch({ timeout_ms: 5001 }), 400, { param: "timeout_ms" })
    expectEnvelope(await patch({ timeout_decision: "NO" }), 400, { param: "timeout_decision" })
    expectEnvelope(await patch({ disabled: "yes" }), 400, { param: "disabled" })
    expectEnvelope(await patch({ url: "http://169.254.169.254/" }), 400, { param: "url" })
    expect((await patch({ timeout_ms: 100 })).body.timeout_ms).toBe(100)
  })

  it("is program-scoped: viewers read, developers write, other programs see nothing", async () => {
    const org = await platform.createOrganization("scoping")
    const as = { key: org.api_key, program: org.program_id }
    const endpoint = (await platform.request("POST", "/v1/authorization-endpoints", { ...as, body: { url: URL_A } })).body
    const keyOf = async (role: "viewer" | "developer") => {
      const response = await platform.request("POST", "/v1/api-keys", { key: org.api_key, program: null, body: { name: role, role } })
      expect(response.status, response.text).toBe(200)
      return response.body as { secret: string }
    }
    const viewer = await keyOf("viewer")
    const developer = await keyOf("developer")
    const asViewer = { key: viewer.secret, program: org.program_id }
    expect((await platform.request("GET", `/v1/authorization-endpoints/${endpoint.id}`, asViewer)).status).toBe(200)
    expect((await platform.request("GET", "/v1/authorization-endpoints", asViewer)).body.total_count).toBe(1)
    expectEnvelope(
      await platform.request("PATCH", `/v1/authorization-endpoints/${endpoint.id}`, { ...asViewer, body: { disabled: true } }),
      403
    )
    expectEnvelope(await platform.request("POST", `/v1/authorization-endpoints/${endpoint.id}/rotate-secret`, asViewer), 403)
    const asDeveloper = { key: developer.secret, program: org.program_id }
    const patched = await platform.request("PATCH", `/v1/authorization-endpoints/${endpoint.id}`, {
      ...asDeveloper,
      body: { disabled: true }
    })
    expect(patched.status, patched.text).toBe(200)

    const other = await platform.createOrganization("someone else")
    const asOther = { key: other.api_key, program: other.program_id }
    expectEnvelope(await platform.request("GET", `/v1/authorization-endpoints/${endpoint.id}`, asOther), 404, {
      param: "authorization_endpoint_id"
    })
    expectEnvelope(await platform.request("DELETE", `/v1/authorization-endpoints/${endpoint.id}`, asOther), 404)
    expect((await platform.request("GET", "/v1/authorization-endpoints", asOther)).body.total_count).toBe(0)
    // Its own endpoint is its own: the other program's does not count.
    expect((await platform.request("POST", "/v1/authorization-endpoints", { ...asOther, body: { url: URL_A } })).status).toBe(200)
    expectEnvelope(await platform.request("GET", `/v1/authorization-endpoints/${uuid()}`, as), 404, { param: "authorization_endpoint_id" })
    expectEnvelope(await platform.request("GET", "/v1/authorization-endpoints/not-an-id", as), 404, { param: "authorization_endpoint_id" })
    expectEnvelope(await platform.request("GET", "/v1/authorization-endpoints", { key: org.api_key, program: null }), 400, {
      param: "X-Program-ID"
    })
  })

  it("lets two concurrent creations for one program make exactly one endpoint", async () => {
    const org = await platform.createOrganization("race")
    const as = { key: org.api_key, program: org.program_id }
    const responses = await Promise.all(
      [1, 2, 3, 4].map(() => platform.request("POST", "/v1/authorization-endpoints", { ...as, body: { url: URL_A } }))
    )
    expect(responses.map((response) => response.status).sort()).toEqual([200, 409, 409, 409])
    for (const response of responses.filter((response) => response.status === 409)) expectEnvelope(response, 409, { code: "conflict" })
    expect((await platform.request("GET", "/v1/authorization-endpoints", as)).body.total_count).toBe(1)
  })
})
