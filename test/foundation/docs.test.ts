import { createIssuing, ERROR_CODES, storeFor } from "@issuing/http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase } from "../support/databases.js"
import { expectEnvelope, startPlatform, TEST_VAULT_KEY, type TestPlatform } from "../support/platform.js"

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

  it("lists each operation's declared error statuses, each as the envelope", async () => {
    const document = (await platform.request("GET", "/openapi.json", { key: undefined, program: null })).body
    const statuses = (path: string, method: string) => Object.keys(document.paths[path][method].responses).sort()
    // Every /v1 operation: 400 and 500; a key's: 401, 403, 429; a POST: 409 and 413; an id in the path: 404.
    expect(statuses("/v1/programs", "get")).toEqual(["200", "400", "401", "403", "429", "500"])
    expect(statuses("/v1/programs", "post")).toEqual(["200", "400", "401", "403", "409", "413", "429", "500"])
    expect(statuses("/v1/wallets/{wallet_id}", "get")).toEqual(["200", "400", "401", "403", "404", "429", "500"])
    expect(statuses("/v1/transfers", "post")).toEqual(["200", "400", "401", "403", "404", "409", "413", "422", "429", "500"])
    expect(statuses("/v1/webhook-subscriptions/{webhook_subscription_id}", "patch")).toEqual([
      "200",
      "400",
      "401",
      "403",
      "404",
      "413",
      "429",
      "500"
    ])
    // The embed document takes no key: its session token is its only credential. (Its HTML is
    // written by the handler; the definition declares no body, hence 204.)
    expect(statuses("/v1/cards/embed", "get")).toEqual(["204", "400", "401", "500"])
    const envelope = document.components.schemas.ErrorEnvelope
    expect(envelope.properties.error.required).toEqual(["type", "code", "message", "param", "request_id", "doc_url"])
    expect(envelope.properties.error.properties.code.enum).toEqual(Object.keys(ERROR_CODES))
    // Effect's own decode error is never sent: the pipeline answers it with the envelope.
    expect(document.components.schemas.HttpApiDecodeError).toBeUndefined()
    for (const [path, item] of Object.entries<Record<string, { responses: Record<string, any> }>>(document.paths)) {
      if (!path.startsWith("/v1/")) continue
      for (const [method, operation] of Object.entries(item)) {
        for (const [status, response] of Object.entries(operation.responses)) {
          if (Number(status) < 400) continue
          expect(JSON.stringify(response.content["application/json"].schema), `${method} ${path} ${status}`).toContain(
            "#/components/schemas/ErrorEnvelope"
          )
        }
      }
    }
  })

  it("serves each instance's own base URL when two run in one process", async () => {
    const first = await createTestDatabase("sqlite")
    const second = await createTestDatabase("sqlite")
    const instances = await Promise.all(
      [
        { database: first, baseUrl: "https://one.example.com/issuing" },
        { database: second, baseUrl: "https://two.example.com" }
      ].map(({ baseUrl, database }) =>
        createIssuing({
          store: storeFor({ kind: "sqlite", filename: database.filename! }),
          vaultKeys: [TEST_VAULT_KEY],
          background: false,
          log: null,
          settings: { baseUrl }
        })
      )
    )
    try {
      const served = await Promise.all(
        instances.map(async (instance) => (await (await instance.handler(new Request("http://localhost/openapi.json"))).json()).servers)
      )
      expect(served).toEqual([[{ url: "https://one.example.com/issuing" }], [{ url: "https://two.example.com" }]])
      // Asked again, after both have built theirs, each still serves its own.
      const again = await (await instances[0]!.handler(new Request("http://localhost/openapi.json"))).json()
      expect(again.servers).toEqual([{ url: "https://one.example.com/issuing" }])
    } finally {
      await Promise.all(instances.map((instance) => instance.dispose()))
      await Promise.all([first.drop(), second.drop()])
    }
  })
})
