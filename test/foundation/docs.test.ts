import { ERROR_CODES } from "@issuing/http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectEnvelope, startPlatform, type TestPlatform } from "../support/platform.js"

// The public documents: the OpenAPI description, the reference page and one page per error code.
describe("API documents", () => {
  let platform: TestPlatform
  beforeAll(async () => {
    platform = await startPlatform("sqlite")
  })
  afterAll(async () => {
    await platform?.close()
  })

  it("serves the OpenAPI 3.1 document listing the /v1 operations, without a key", async () => {
    const response = await platform.request("GET", "/openapi.json", { key: undefined, program: null })
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toContain("application/json")
    const document = response.body
    expect(document.openapi).toMatch(/^3\.1\./)
    expect(document.info.title).toBeTruthy()
    const paths = Object.keys(document.paths)
    for (const path of ["/v1/programs", "/v1/programs/{program_id}", "/v1/api-keys", "/v1/api-keys/{api_key_id}"]) {
      expect(paths).toContain(path)
    }
    // Besides /v1, only the OAuth protocol endpoints (docs/oauth.md), which answer in OAuth's format.
    expect(paths.filter((path) => !path.startsWith("/v1/")).sort()).toEqual([
      "/.well-known/oauth-authorization-server",
      "/oauth/authorize",
      "/oauth/introspect",
      "/oauth/revoke",
      "/oauth/token"
    ])
    expect(Object.keys(document.paths["/oauth/token"].post.requestBody.content)).toEqual(["application/x-www-form-urlencoded"])
    expect(paths).toContain("/v1/oauth-clients")
    expect(paths).toContain("/v1/oauth/interactions/{interaction_id}/grant")
    expect(Object.keys(document.paths["/v1/programs"]).sort()).toEqual(["get", "post"])
  })

  it("serves the reference page as HTML", async () => {
    const response = await platform.request("GET", "/docs", { key: undefined, program: null })
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toContain("text/html")
    expect(response.text).toMatch(/<html/i)
    expect(response.text).toContain("/v1/programs")
    expect(response.text).toContain("/oauth/token")
    expect(response.text).toContain("/v1/oauth-clients")
  })

  // The catalogue is typed by ErrorCode, so it holds every code a response can carry; each needs its page.
  it("serves a page for every error code in the catalogue", async () => {
    const entries = Object.entries(ERROR_CODES)
    expect(entries.length).toBeGreaterThanOrEqual(20)
    for (const [code, doc] of entries) {
      const response = await platform.request("GET", `/docs/errors/${code}`, { key: undefined, program: null })
      expect(response.status, code).toBe(200)
      expect(response.headers.get("content-type")).toContain("text/html")
      expect(response.text).toContain(code)
      expect(response.text).toContain(`HTTP ${doc.status}`)
      expect(response.text).toContain(doc.type)
    }
  })

  it("answers 404 (param code) for an unknown error code", async () => {
    for (const code of ["no_such_code", "toString", "__proto__"]) {
      expectEnvelope(await platform.request("GET", `/docs/errors/${code}`, { key: undefined }), 404, {
        code: "not_found",
        param: "code"
      })
    }
  })
})
