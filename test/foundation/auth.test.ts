import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope, startPlatform, type TestPlatform, uuid } from "../support/platform.js"
import { createKey, createProgram, emitEvent } from "./fixtures.js"

// docs/api.md#authentication-and-roles and #scoping: who is turned away with 401, 403 or 404, on both stores.
describe.each(STORE_KINDS)("authentication and authorization on %s", (kind) => {
  let platform: TestPlatform
  beforeAll(async () => {
    platform = await startPlatform(kind)
  })
  afterAll(async () => {
    await platform?.close()
  })

  const unauthenticated = { type: "authentication_error", code: "authentication_error", param: null }

  describe("401 authentication_error", () => {
    it("when the key is missing", async () => {
      expectEnvelope(await platform.request("GET", "/v1/programs", { key: undefined }), 401, unauthenticated)
      expectEnvelope(await platform.request("GET", "/v1/events", { key: undefined }), 401, unauthenticated)
      expectEnvelope(await platform.request("POST", "/v1/programs", { key: undefined, body: { name: "x" } }), 401, unauthenticated)
    })

    it("when the Authorization header is malformed", async () => {
      for (const authorization of [
        "Basic dXNlcjpwYXNz",
        "Bearer",
        "Bearer ",
        `Bearer ${platform.org.api_key} extra`,
        platform.org.api_key,
        "Bearer short"
      ]) {
        const response = await platform.request("GET", "/v1/programs", { key: undefined, headers: { authorization } })
        expectEnvelope(response, 401, unauthenticated)
      }
    })

    it("when the key is unknown", async () => {
      const response = await platform.request("GET", "/v1/programs", { key: `sk_sandbox_${"x".repeat(32)}` })
      expectEnvelope(response, 401, unauthenticated)
    })

    it("when the key was revoked, at once", async () => {
      const key = await createKey(platform, { role: "developer" })
      expect((await platform.request("GET", "/v1/programs", { key: key.secret })).status).toBe(200)
      const revoked = await platform.request("DELETE", `/v1/api-keys/${key.id}`)
      expect(revoked.status).toBe(200)
      expect(revoked.body.id).toBe(key.id)
      expect(typeof revoked.body.revoked_at).toBe("string")
      expect(revoked.body.secret).toBeUndefined()
      expectEnvelope(await platform.request("GET", "/v1/programs", { key: key.secret }), 401, unauthenticated)
      expectEnvelope(await platform.request("GET", "/v1/events", { key: key.secret }), 401, unauthenticated)
      // Revoking twice: the key no longer exists as an active key.
      expectEnvelope(await platform.request("DELETE", `/v1/api-keys/${key.id}`), 404, { code: "not_found", param: "api_key_id" })
    })
  })

  describe("403 permission_denied", () => {
    it("for a viewer key on anything but GET", async () => {
      const viewer = await createKey(platform, { role: "viewer" })
      expect((await platform.request("GET", "/v1/programs", { key: viewer.secret })).status).toBe(200)
      expect((await platform.request("GET", "/v1/events", { key: viewer.secret })).status).toBe(200)
      const denied = { type: "permission_error", code: "permission_denied" }
      expectEnvelope(await platform.request("POST", "/v1/programs", { key: viewer.secret, body: { name: "x" } }), 403, denied)
      expectEnvelope(await platform.request("DELETE", `/v1/api-keys/${viewer.id}`, { key: viewer.secret }), 403, denied)
    })

    it("for a developer key on the admin-only programs and api-keys operations", async () => {
      const developer = await createKey(platform, { role: "developer" })
      const denied = { type: "permission_error", code: "permission_denied", param: null }
      expect((await platform.request("GET", "/v1/programs", { key: developer.secret })).status).toBe(200)
      expect((await platform.request("GET", `/v1/programs/${platform.org.program_id}`, { key: developer.secret })).status).toBe(200)
      expectEnvelope(await platform.request("POST", "/v1/programs", { key: developer.secret, body: { name: "x" } }), 403, denied)
      expectEnvelope(await platform.request("GET", "/v1/api-keys", { key: developer.secret }), 403, denied)
      expectEnvelope(
        await platform.request("POST", "/v1/api-keys", { key: developer.secret, body: { name: "k", role: "admin" } }),
        403,
        denied
      )
      expectEnvelope(await platform.request("DELETE", `/v1/api-keys/${developer.id}`, { key: developer.secret }), 403, denied)
    })

    it("for a key limited by program_ids acting on another program (param X-Program-ID)", async () => {
      const second = await createProgram(platform, "Second")
      const limited = await createKey(platform, { role: "developer", program_ids: [second.id] })
      expect(limited.program_ids).toEqual([second.id])
      expect((await platform.request("GET", "/v1/events", { key: limited.secret, program: second.id })).status).toBe(200)
      expectEnvelope(await platform.request("GET", "/v1/events", { key: limited.secret, program: platform.org.program_id }), 403, {
        code: "permission_denied",
        param: "X-Program-ID"
      })
      // Programs it cannot use are invisible in the organization-scoped reads.
      const listed = await platform.request("GET", "/v1/programs", { key: limited.secret })
      expect(listed.body.data.map((program: { id: string }) => program.id)).toEqual([second.id])
      expect(listed.body.total_count).toBe(1)
      expectEnvelope(await platform.request("GET", `/v1/programs/${platform.org.program_id}`, { key: limited.secret }), 404, {
        code: "not_found",
        param: "program_id"
      })
    })

    it("for a key handing out more than it has (programs, PAN reveal)", async () => {
      const second = await createProgram(platform, "Scoped admin's program")
      const scopedAdmin = await createKey(platform, { role: "admin", program_ids: [second.id], pan_reveal: false })
      const attempt = (body: Record<string, unknown>) =>
        platform.request("POST", "/v1/api-keys", { key: scopedAdmin.secret, body: { name: "escalated", role: "developer", ...body } })
      expectEnvelope(await attempt({}), 403, { code: "permission_denied", param: "program_ids" })
      expectEnvelope(await attempt({ program_ids: null }), 403, { code: "permission_denied", param: "program_ids" })
      expectEnvelope(await attempt({ program_ids: [platform.org.program_id] }), 403, { param: "program_ids" })
      expectEnvelope(await attempt({ program_ids: [second.id], pan_reveal: true }), 403, { param: "pan_reveal" })
      const within = await attempt({ program_ids: [second.id] })
      expect(within.status).toBe(200)
      expect(within.body.program_ids).toEqual([second.id])
      expectEnvelope(await platform.request("POST", "/v1/api-keys", { body: { name: "none", role: "viewer", program_ids: [] } }), 400, {
        code: "invalid_request",
        param: "program_ids"
      })
    })

    it("for a program-limited admin key: it governs only keys within its programs and rights, and creates no program", async () => {
      const second = await createProgram(platform, "Governed program")
      const third = await createProgram(platform, "Other program")
      const scopedAdmin = await createKey(platform, { role: "admin", program_ids: [second.id], pan_reveal: false })
      const withinIt = await createKey(platform, { role: "developer", program_ids: [second.id] })
      const revealing = await createKey(platform, { role: "developer", program_ids: [second.id], pan_reveal: true })
      const wider = await createKey(platform, { role: "viewer", program_ids: [second.id, third.id] })
      const unlimited = await createKey(platform, { role: "viewer" })
      const all = await platform.request("GET", "/v1/api-keys?page_size=100", { program: null })
      const bootstrap = all.body.data.find((key: { name: string }) => key.name === "Admin key") as { id: string }
      expect(bootstrap).toBeDefined()

      const listed = await platform.request("GET", "/v1/api-keys?page_size=100", { key: scopedAdmin.secret, program: null })
      expect(listed.status).toBe(200)
      expect(listed.body.data.map((key: { id: string }) => key.id).sort()).toEqual([scopedAdmin.id, withinIt.id].sort())
      expect(listed.body.total_count).toBe(2)

      // Keys outside its scope do not exist for it (404 as for another organization's keys) and stay valid.
      for (const hidden of [bootstrap.id, revealing.id, wider.id, unlimited.id]) {
        expectEnvelope(await platform.request("DELETE", `/v1/api-keys/${hidden}`, { key: scopedAdmin.secret, program: null }), 404, {
          code: "not_found",
          param: "api_key_id"
        })
      }
      for (const secret of [platform.org.api_key, revealing.secret, unlimited.secret]) {
        expect((await platform.request("GET", "/v1/programs", { key: secret, program: null })).status).toBe(200)
      }
      const revoked = await platform.request("DELETE", `/v1/api-keys/${withinIt.id}`, { key: scopedAdmin.secret, program: null })
      expect(revoked.status).toBe(200)
      expectEnvelope(await platform.request("GET", "/v1/programs", { key: withinIt.secret, program: null }), 401, unauthenticated)

      expectEnvelope(
        await platform.request("POST", "/v1/programs", { key: scopedAdmin.secret, program: null, body: { name: "Mine" } }),
        403,
        { code: "permission_denied", param: null }
      )
      expect(
        (await platform.request("GET", "/v1/programs?page_size=100", { program: null })).body.data.some(
          (program: { name: string }) => program.name === "Mine"
        )
      ).toBe(false)
    })

    it("for an admin key without pan_reveal on keys that have it (hidden from its list, 404 on revoke)", async () => {
      const plainAdmin = await createKey(platform, { role: "admin", pan_reveal: false })
      const revealing = await createKey(platform, { role: "viewer", pan_reveal: true })
      const plain = await createKey(platform, { role: "viewer", pan_reveal: false })
      const listed = await platform.request("GET", "/v1/api-keys?page_size=100", { key: plainAdmin.secret, program: null })
      const ids = listed.body.data.map((key: { id: string }) => key.id)
      expect(ids).toContain(plain.id)
      expect(ids).not.toContain(revealing.id)
      expect(listed.body.data.every((key: { pan_reveal: boolean }) => !key.pan_reveal)).toBe(true)
      expectEnvelope(await platform.request("DELETE", `/v1/api-keys/${revealing.id}`, { key: plainAdmin.secret, program: null }), 404, {
        code: "not_found",
        param: "api_key_id"
      })
      expect((await platform.request("GET", "/v1/programs", { key: revealing.secret, program: null })).status).toBe(200)
      expect((await platform.request("DELETE", `/v1/api-keys/${plain.id}`, { key: plainAdmin.secret, program: null })).status).toBe(200)
    })

    it("for an unknown program or another organization's program (param X-Program-ID)", async () => {
      const other = await platform.createOrganization("Other")
      for (const program of [uuid(), other.program_id]) {
        expectEnvelope(await platform.request("GET", "/v1/events", { program }), 403, {
          code: "permission_denied",
          param: "X-Program-ID"
        })
      }
    })
  })

  describe("400 on X-Program-ID", () => {
    it("when it is missing on a program-scoped operation", async () => {
      expectEnvelope(await platform.request("GET", "/v1/events", { program: null }), 400, {
        type: "invalid_request_error",
        code: "invalid_request",
        param: "X-Program-ID"
      })
    })

    it("when it is not a UUID", async () => {
      for (const program of ["not-a-uuid", "1234", `${platform.org.program_id}x`]) {
        expectEnvelope(await platform.request("GET", "/v1/events", { program }), 400, {
          code: "invalid_request",
          param: "X-Program-ID"
        })
      }
    })

    it("is not needed on organization-scoped operations", async () => {
      expect((await platform.request("GET", "/v1/programs", { program: null })).status).toBe(200)
      expect((await platform.request("GET", "/v1/api-keys", { program: null })).status).toBe(200)
    })
  })

  describe("404 not_found, never 403, for resources of another program or organization", () => {
    it("another organization's program", async () => {
      const other = await platform.createOrganization("Other")
      expectEnvelope(await platform.request("GET", `/v1/programs/${other.program_id}`), 404, {
        type: "not_found_error",
        code: "not_found",
        param: "program_id"
      })
      // …which its own admin sees.
      expect((await platform.request("GET", `/v1/programs/${other.program_id}`, { key: other.api_key })).status).toBe(200)
    })

    it("another organization's API key", async () => {
      const other = await platform.createOrganization("Other")
      const theirs = await createKey(platform, { role: "viewer" }, other.api_key)
      expectEnvelope(await platform.request("DELETE", `/v1/api-keys/${theirs.id}`), 404, { code: "not_found", param: "api_key_id" })
      const mine = await platform.request("GET", "/v1/api-keys?page_size=100")
      expect(mine.body.data.some((key: { id: string }) => key.id === theirs.id)).toBe(false)
      // Still valid: the failed revoke touched nothing.
      expect((await platform.request("GET", "/v1/programs", { key: theirs.secret })).status).toBe(200)
    })

    it("another program's event, even for a key that can use both programs", async () => {
      const second = await createProgram(platform, "Events elsewhere")
      const event = await emitEvent(platform, second.id)
      expect((await platform.request("GET", `/v1/events/${event.id}`, { program: second.id })).status).toBe(200)
      expectEnvelope(await platform.request("GET", `/v1/events/${event.id}`), 404, { code: "not_found", param: "event_id" })
    })

    it("unknown and malformed ids, naming the id parameter", async () => {
      for (const id of [uuid(), "not-a-uuid", "%20"]) {
        expectEnvelope(await platform.request("GET", `/v1/programs/${id}`), 404, { code: "not_found", param: "program_id" })
        expectEnvelope(await platform.request("DELETE", `/v1/api-keys/${id}`), 404, { code: "not_found", param: "api_key_id" })
        expectEnvelope(await platform.request("GET", `/v1/events/${id}`), 404, { code: "not_found", param: "event_id" })
      }
    })
  })

  it("keeps API key secrets out of every response but the creation", async () => {
    const key = await createKey(platform, { role: "viewer", pan_reveal: false })
    expect(key.secret).toMatch(/^sk_sandbox_[A-Za-z0-9_-]{32}$/)
    const listed = await platform.request("GET", "/v1/api-keys?page_size=100")
    expect(listed.text).not.toContain(key.secret)
    const entry = listed.body.data.find((item: { id: string }) => item.id === key.id)
    expect(Object.keys(entry).sort()).toEqual([
      "card_display",
      "created_at",
      "id",
      "inbound_funding",
      "name",
      "network",
      "object",
      "pan_reveal",
      "program_ids",
      "revoked_at",
      "role"
    ])
  })
})
