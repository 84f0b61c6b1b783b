import { HttpApi } from "@effect/platform"
import { ATTEMPT_STATUSES, DeclineReason, EVENT_TYPES, SpendingInterval, SUBSCRIBABLE_EVENT_TYPES } from "@issuing/core"
import { createIssuing, ERROR_CODES, IssuingApi, storeFor } from "@issuing/http"
import { Schema } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { OPERATION_DOCS } from "../../packages/http/src/docs/OperationDocs.js"
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
    // The embed document takes no key: its session token is its only credential. Its answer is an
    // HTML page (docs/api.md#openapi).
    expect(statuses("/v1/cards/embed", "get")).toEqual(["200", "400", "401", "500"])
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

  // docs/api.md: a reference a person reads, and an OpenAPI document that says what it accepts.
  describe("a reference to read", () => {
    let document: any
    beforeAll(async () => {
      document = (await platform.request("GET", "/openapi.json", { key: undefined, program: null })).body
    })
    const operations = () =>
      Object.entries<Record<string, any>>(document.paths).flatMap(([path, item]) =>
        Object.entries(item).map(([method, operation]) => ({ path, method, operation }))
      )

    it("gives every operation a summary and a description, and info.version is the package's", () => {
      expect(operations().length).toBeGreaterThanOrEqual(60)
      for (const { method, operation, path } of operations()) {
        expect(operation.summary, `${method} ${path}`).toMatch(/\w{3}/)
        expect(operation.description, `${method} ${path}`).toMatch(/\w{3}.{20}/)
      }
      const version = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, "../../packages/http/package.json"), "utf8")).version
      expect(document.info.version).toBe(version)
    })

    it("lists the values of every closed set as an enum", () => {
      const components = document.components.schemas
      const body = (path: string, method: string) => document.paths[path][method].requestBody.content["application/json"].schema
      const query = (path: string, name: string) => document.paths[path].get.parameters.find((p: any) => p.name === name).schema
      const strings = (schema: any): Array<any> =>
        schema?.type === "string" ? [schema] : [...(schema?.anyOf ?? []).flatMap(strings), ...(schema?.items ? strings(schema.items) : [])]
      const enumOf = (schema: any) => strings(schema).map((member) => member.enum)
      // A subscription may hold every type but webhook.test (sent only by the test endpoint).
      expect(enumOf(body("/v1/webhook-subscriptions", "post").properties.event_types)).toEqual([[...SUBSCRIBABLE_EVENT_TYPES]])
      expect(enumOf(body("/v1/webhook-portal-sessions", "post").properties.allowed_event_types)).toEqual([[...SUBSCRIBABLE_EVENT_TYPES]])
      expect(EVENT_TYPES).toContain("webhook.test")
      expect(enumOf(query("/v1/events", "type"))).toEqual([[...EVENT_TYPES]])
      expect(enumOf(components.Event.properties.type)).toEqual([[...EVENT_TYPES]])
      expect(enumOf(components.Transaction.properties.decline_reason)).toEqual([[...DeclineReason.literals]])
      expect(enumOf(query("/v1/webhook-attempts", "status"))).toEqual([[...ATTEMPT_STATUSES]])
      const issue = body("/v1/cards", "post")
      // The alias is documented once, in the canonical field's description (docs/api.md#openapi).
      expect(issue.properties.spendingPeriod).toBeUndefined()
      for (const name of ["spending_period"]) {
        const period = issue.properties[name].anyOf.find((member: any) => member.type === "object")
        expect(enumOf(period.properties.interval), name).toEqual([[...SpendingInterval.literals]])
      }
      // No string field named for a closed set is left open, anywhere in the document.
      const CLOSED = new Set([
        "interval",
        "decline_reason",
        "event_types",
        "status",
        "state",
        "kind",
        "role",
        "payment_rail",
        "paymentRail",
        "action",
        "result"
      ])
      const open: Array<string> = []
      const walk = (node: any, at: string) => {
        if (node === null || typeof node !== "object") return
        // (A billing address's `state` is free text, a region of its country, not a set.)
        const address = /BillingAddress$|billing_address$/.test(at)
        for (const [name, field] of Object.entries<any>(node.properties ?? {})) {
          if (address && name === "state") continue
          if (CLOSED.has(name) && strings(field).some((member) => member.enum === undefined)) open.push(`${at}.${name}`)
        }
        for (const [key, value] of Object.entries(node)) walk(value, `${at}/${key}`)
      }
      walk(document, "")
      // (The OAuth endpoints' `state` is the client's opaque value, not a set.)
      for (const { method, operation, path } of operations().filter(({ path }) => path.startsWith("/v1/"))) {
        for (const parameter of operation.parameters ?? []) {
          if (CLOSED.has(parameter.name) && strings(parameter.schema).some((member) => member.enum === undefined)) {
            open.push(`${method} ${path} ?${parameter.name}`)
          }
        }
      }
      expect(open).toEqual([])
    })

    it("shows examples on the main operations, each one a body the operation accepts", () => {
      let checked = 0
      HttpApi.reflect(IssuingApi, {
        onGroup() {},
        onEndpoint({ endpoint, group }) {
          const example = OPERATION_DOCS[`${group.identifier}.${endpoint.name}`]?.example
          if (example === undefined) return
          const decoded = Schema.decodeUnknownEither(endpoint.payloadSchema.pipe((schema: any) => schema.value) as Schema.Schema.Any, {
            onExcessProperty: "error"
          })(example)
          expect(decoded._tag, `${group.identifier}.${endpoint.name}: ${JSON.stringify(decoded)}`).toBe("Right")
          checked += 1
        }
      })
      expect(checked).toBeGreaterThanOrEqual(12)
      for (const path of ["/v1/cards", "/v1/transfers", "/v1/wallets", "/v1/webhook-subscriptions"]) {
        expect(document.paths[path].post.requestBody.content["application/json"].example, path).toBeDefined()
      }
    })

    it("renders /docs grouped by resource, each operation with its parameters, body, errors and a curl example, self-contained", async () => {
      const response = await platform.request("GET", "/docs", { key: undefined, program: null })
      expect(response.status).toBe(200)
      const html = response.text
      for (const group of ["Cards", "Transfers", "Webhook Subscriptions", "Oauth Clients"]) expect(html).toContain(`>${group}</h2>`)
      const sections = html.split('<section class="op"').slice(1)
      expect(sections.length).toBe(operations().length)
      for (const section of sections) {
        expect(section).toContain("<h4>Response</h4>")
        expect(section).toContain("curl -X ")
      }
      const create = sections.find((section) => section.startsWith(' id="cards.create"'))!
      expect(create).toContain("Issue a card")
      expect(create).toContain("<code>spending_period.interval</code>")
      expect(create).toContain("X-Program-ID: $PROGRAM_ID")
      expect(create).toContain("Idempotency-Key")
      expect(create).toContain("&quot;MONTHLY&quot;")
      expect(create).toContain("<h4>Errors</h4>")
      const list = sections.find((section) => section.startsWith(' id="cards.list"'))!
      expect(list).toContain("<code>starting_after</code>")
      // No script, nothing fetched from elsewhere; the one stylesheet is allowed by its hash.
      expect(html).not.toMatch(/<script|<link|\ssrc=|@import|[^4]url\(/i)
      const csp = response.headers.get("content-security-policy")!
      expect(csp).toContain("default-src 'none'")
      expect(csp).not.toContain("unsafe-inline")
      const style = /<style>([\s\S]*?)<\/style>/.exec(html)![1]!
      expect(csp).toContain(`'sha256-${crypto.createHash("sha256").update(style).digest("base64")}'`)
    })

    it("serves the event catalogue: every event type with its payload's schema", async () => {
      const response = await platform.request("GET", "/docs/events", { key: undefined, program: null })
      expect(response.status).toBe(200)
      expect(response.headers.get("content-security-policy")).toContain("default-src 'none'")
      const sections = response.text.split('<section class="op"').slice(1)
      const byType = new Map(sections.map((section) => [/id="([^"]+)"/.exec(section)![1]!, section]))
      for (const type of [...EVENT_TYPES, "balance.updated"]) expect(byType.has(type), type).toBe(true)
      expect(byType.get("card.created")).toContain("<code>last_four</code>")
      expect(byType.get("card.created")).toContain("<code>spending_period.interval</code>")
      expect(byType.get("balance.updated")).toContain("<code>balance.amount</code>")
      expect(byType.get("transfer.created")).toContain("<code>payment_rail</code>")
      expect(byType.get("oauth_grant.revoked")).toContain("<code>scopes</code>")
    })
  })
})
