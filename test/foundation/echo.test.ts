import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { startPlatform, type TestPlatform, type TestResponse } from "../support/platform.js"

/**
 * docs/api.md#errors: an error names the parameter, never its value (the value could be a card
 * number sent in the wrong field). A distinctive 16-digit value goes into every path parameter,
 * every declared query parameter, the headers and every top-level body field of every operation of
 * the served OpenAPI document; no error answer may hold it.
 */
const VALUE = "4929173650281946"

interface OpenApi {
  readonly paths: Record<
    string,
    Record<
      string,
      {
        readonly parameters?: ReadonlyArray<{ readonly name: string; readonly in: string }>
        readonly requestBody?: { readonly content?: Record<string, { readonly schema?: SchemaObject }> }
      }
    >
  >
  readonly components?: { readonly schemas?: Record<string, SchemaObject> }
}
interface SchemaObject {
  readonly $ref?: string
  readonly properties?: Record<string, unknown>
  readonly anyOf?: ReadonlyArray<SchemaObject>
  readonly oneOf?: ReadonlyArray<SchemaObject>
  readonly allOf?: ReadonlyArray<SchemaObject>
}

/** The top-level property names of a request body schema, through $ref and unions. */
const bodyFields = (spec: OpenApi, schema: SchemaObject | undefined, depth = 0): Array<string> => {
  if (schema === undefined || depth > 5) return []
  if (schema.$ref !== undefined) return bodyFields(spec, spec.components?.schemas?.[schema.$ref.split("/").pop()!], depth + 1)
  const nested = [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])]
  return [...Object.keys(schema.properties ?? {}), ...nested.flatMap((part) => bodyFields(spec, part, depth + 1))]
}

describe.each(STORE_KINDS)("no rejected value in error messages on %s", (kind) => {
  let platform: TestPlatform
  let spec: OpenApi
  beforeAll(async () => {
    platform = await startPlatform(kind, { webhookTimeoutMs: 1000, oauthInteractionUrl: "https://host.example/consent" })
    spec = (await platform.request("GET", "/openapi.json")).body as OpenApi
  })
  afterAll(async () => {
    await platform?.close()
  })

  /** Every answer that is an error; the caller checks none repeats VALUE. */
  const errors: Array<{ readonly what: string; readonly response: TestResponse }> = []
  const send = async (what: string, method: string, path: string, options: Parameters<TestPlatform["request"]>[2] = {}) => {
    const response = await platform.request(method, path, options)
    if (response.status >= 400) errors.push({ what, response })
    return response
  }
  const expectNoEcho = () => {
    for (const { what, response } of errors) {
      expect(response.status, what).toBeLessThan(500)
      expect(response.text, `${what} → ${response.text}`).not.toContain(VALUE)
    }
  }

  it("in path, query, header and body errors of every operation", async () => {
    const operations = Object.entries(spec.paths).flatMap(([template, item]) =>
      Object.entries(item)
        .filter(([method]) => ["get", "post", "patch", "put", "delete"].includes(method))
        .map(([method, operation]) => ({ method: method.toUpperCase(), template, operation }))
    )
    expect(operations.length).toBeGreaterThan(35)
    let queries = 0
    let fields = 0
    for (const { method, operation, template } of operations) {
      const label = `${method} ${template}`
      const path = template.replace(/\{[^}]+\}/g, VALUE)
      if (path !== template) await send(`${label} path`, method, path, method === "GET" ? {} : { body: {} })
      const plain = template.replace(/\{[^}]+\}/g, "00000000-0000-7000-8000-000000000000")
      for (const parameter of operation.parameters ?? []) {
        if (parameter.in !== "query") continue
        queries += 1
        await send(`${label} ?${parameter.name}`, method, `${plain}?${encodeURIComponent(parameter.name)}=${VALUE}`)
      }
      const body = operation.requestBody?.content?.["application/json"]?.schema
      for (const field of new Set(bodyFields(spec, body))) {
        fields += 1
        await send(`${label} body ${field} as text`, method, plain, { body: { [field]: VALUE } })
        await send(`${label} body ${field} as a number`, method, plain, { body: { [field]: Number(VALUE) } })
        await send(`${label} body ${field} in a list`, method, plain, { body: { [field]: [VALUE] } })
      }
      if (method !== "GET" && method !== "DELETE") {
        await send(`${label} raw body`, method, plain, { rawBody: VALUE, headers: { "content-type": "application/json" } })
      }
    }
    // Not vacuous: the document declares query parameters and body fields, and most of these failed.
    expect(queries).toBeGreaterThan(20)
    expect(fields).toBeGreaterThan(20)
    expect(errors.length).toBeGreaterThan(200)
    expectNoEcho()
  })

  it("in paging, routing and header errors", async () => {
    const before = errors.length
    for (const list of ["/v1/programs", "/v1/api-keys", "/v1/cards", "/v1/events", "/v1/wallets", "/v1/transfers"]) {
      await send(`${list} order_by`, "GET", `${list}?order_by=${VALUE}`)
      await send(`${list} order-by`, "GET", `${list}?order-by=${VALUE}`)
      await send(`${list} conflicting page_size`, "GET", `${list}?page_size=${VALUE}&page-size=1`)
    }
    await send("unknown URL", "GET", `/v1/${VALUE}`)
    await send("unknown nested URL", "GET", `/v1/cards/x/${VALUE}`)
    await send("another method", "PUT", `/v1/cards/${VALUE}`, { body: {} })
    await send("an error code page", "GET", `/docs/errors/${VALUE}`)
    await send("X-Program-ID", "GET", "/v1/cards", { program: VALUE })
    await send("Idempotency-Key", "POST", "/v1/wallets", { idempotencyKey: VALUE, body: {} })
    await send("Authorization", "GET", "/v1/programs", { key: `sk_sandbox_${VALUE}` })
    await send("Content-Type", "POST", "/v1/programs", { program: null, rawBody: "{}", headers: { "content-type": `text/${VALUE}` } })
    await send("embed token", "GET", `/v1/cards/embed?session_token=${VALUE}`, { key: undefined, program: null })
    await send("webhook url host", "POST", "/v1/webhook-subscriptions", {
      body: { url: `http://${VALUE}.invalid/x`, event_types: ["wallet.created"] }
    })
    expect(errors.length - before).toBeGreaterThan(20)
    // order_by names the parameter and lists the fields instead.
    const orderBy = errors.find(({ what }) => what === "/v1/programs order_by")!.response.body.error
    expect(orderBy).toMatchObject({
      code: "invalid_request",
      param: "order_by",
      message: "Invalid order_by. Valid fields: created_at, updated_at, name."
    })
    expectNoEcho()
  })
})
