import * as fs from "node:fs"
import * as path from "node:path"
import { createClient as heyApi } from "@hey-api/openapi-ts"
import Ajv2020 from "ajv/dist/2020.js"
import addFormats from "ajv-formats"
import openapiTS, { astToString } from "openapi-typescript"
import { generate as orval } from "orval"
import ts from "typescript"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { startPlatform, type TestPlatform } from "../support/platform.js"

/**
 * Where generated clients are written: under the repository (so they resolve its node_modules) and
 * outside node_modules (so vitest compiles the TypeScript it imports from there).
 */
const OUT = path.resolve(".tmp/openapi-generators")

/**
 * A program written against the openapi-typescript types of the served document, with
 * openapi-fetch: it must compile under `strict`, its `@ts-expect-error` lines must be errors (a
 * wrong type the document would otherwise let through), and it runs against the server.
 */
const USAGE = `import createClient from "openapi-fetch"
import type { paths } from "./schema.js"

export const run = async (baseUrl: string, key: string, programId: string) => {
  const client = createClient<paths>({ baseUrl, headers: { Authorization: \`Bearer \${key}\` } })
  const header = { "X-Program-ID": programId }
  const wallet = await client.POST("/v1/wallets", {
    params: { header: { ...header, "Idempotency-Key": crypto.randomUUID() } },
    body: { holder: { name: "Generated Client" } }
  })
  if (wallet.data === undefined) throw new Error(JSON.stringify(wallet.error))
  const accountId: string = wallet.data.financial_account_id
  const funded = await client.POST("/v1/transfers", {
    params: { header },
    body: { payment_rail: "fednow_instant", amount: 1500, currency: "USD", to_financial_account_id: accountId }
  })
  if (funded.data === undefined) throw new Error(JSON.stringify(funded.error))
  const amount: number = funded.data.amount
  const batch = await client.POST("/v1/transfers/batch", {
    params: { header },
    body: { transfers: [{ payment_rail: "fednow_instant", amount: 5, currency: "USD", to_financial_account_id: accountId }] }
  })
  if (batch.data === undefined) throw new Error(JSON.stringify(batch.error))
  const page = await client.GET("/v1/transfers", {
    params: { header, query: { page_size: 1, ascending: false, financial_account_id: accountId } }
  })
  if (page.data === undefined) throw new Error(JSON.stringify(page.error))
  const events = await client.GET("/v1/events", { params: { header, query: { type: "transfer.created", page_size: 1 } } })
  const object = events.data?.data[0]?.data.object
  const eventAmount: number | undefined = object?.object === "transfer" ? object.amount : undefined
  const refused = await client.GET("/v1/transfers", { params: { header, query: { order_by: "amount" } } })
  const errorType: "invalid_request_error" | "authentication_error" | "permission_error" | "not_found_error" | "conflict_error" | "rate_limit_error" | "api_error" | undefined = refused.error?.error.type
  return {
    amount,
    total: page.data.total_count,
    hasMore: page.data.has_more,
    first: page.data.data[0]?.id,
    batch: batch.data.data.length,
    refused: refused.response.status,
    errorType,
    requestId: page.response.headers.get("Request-Id"),
    eventAmount
  }
}

export const wrong = (client: ReturnType<typeof createClient<paths>>, programId: string) => {
  const header = { "X-Program-ID": programId }
  // @ts-expect-error page_size is an integer, not a string
  void client.GET("/v1/transfers", { params: { header, query: { page_size: "2" } } })
  // @ts-expect-error a transfer names its rail
  void client.POST("/v1/transfers", { params: { header }, body: { amount: 1, currency: "USD" } })
  // @ts-expect-error a batch holds transfer bodies
  void client.POST("/v1/transfers/batch", { params: { header }, body: { transfers: [42] } })
  // @ts-expect-error X-Program-ID is required on program-scoped operations
  void client.GET("/v1/wallets", { params: {} })
  // @ts-expect-error the alias is accepted by the server but documented once, on payment_rail
  void client.POST("/v1/transfers", { params: { header }, body: { paymentRail: "book", payment_rail: "book", amount: 1, currency: "USD" } })
}
`

/**
 * The same calls through the @hey-api/openapi-ts SDK: a client made at run time with the server's
 * URL and the key (its bearer scheme), typed bodies and headers.
 */
const HEY_API_USAGE = `import { createClient } from "./hey-api/client"
import { transfersCreate, transfersList, walletsCreate } from "./hey-api/sdk.gen"

export const run = async (baseUrl: string, key: string, programId: string) => {
  const client = createClient({ baseUrl, auth: key })
  const headers = { "X-Program-ID": programId }
  const wallet = await walletsCreate({ client, headers, body: { holder: { name: "Hey API Client" } } })
  if (wallet.data === undefined) throw new Error(JSON.stringify(wallet.error))
  const accountId: string = wallet.data.financial_account_id
  const funded = await transfersCreate({
    client,
    headers,
    body: { payment_rail: "fednow_instant", amount: 700, currency: "USD", to_financial_account_id: accountId }
  })
  if (funded.data === undefined) throw new Error(JSON.stringify(funded.error))
  const refused = await transfersCreate({
    client,
    headers,
    body: { payment_rail: "book", amount: 900, currency: "USD", from_financial_account_id: accountId, to_financial_account_id: accountId }
  })
  const page = await transfersList({ client, headers, query: { financial_account_id: accountId, page_size: 10 } })
  const code: string | undefined = refused.error?.error.code
  return { amount: funded.data.amount, refused: refused.response.status, code, total: page.data?.total_count }
}
`

/**
 * orval's fetch client calls this function (its documented "custom fetch" mutator) with each
 * operation's path: the base URL and the key are set at run time, as an application would.
 */
const ORVAL_FETCHER = `let baseUrl = ""
let key = ""

export const configure = (url: string, apiKey: string): void => {
  baseUrl = url
  key = apiKey
}

export const customFetch = async <T>(url: string, options: RequestInit): Promise<T> => {
  const headers = new Headers(options.headers)
  headers.set("Authorization", \`Bearer \${key}\`)
  const response = await fetch(\`\${baseUrl}\${url}\`, { ...options, headers })
  const text = await response.text()
  return { status: response.status, data: text === "" ? undefined : JSON.parse(text), headers: response.headers } as T
}
`

/** The same calls through orval's functions: each answer a union by status, narrowed before use. */
const ORVAL_USAGE = `import { transfersCreate, transfersList, walletsCreate } from "./orval/client"
import { configure } from "./orval/fetcher"

export const run = async (baseUrl: string, key: string, programId: string) => {
  configure(baseUrl, key)
  const headers = { "X-Program-ID": programId }
  const wallet = await walletsCreate({ holder: { name: "Orval Client" } }, headers)
  if (wallet.status !== 200) throw new Error(JSON.stringify(wallet.data))
  const accountId: string = wallet.data.financial_account_id
  const funded = await transfersCreate(
    { payment_rail: "fednow_instant", amount: 300, currency: "USD", to_financial_account_id: accountId },
    headers
  )
  if (funded.status !== 200) throw new Error(JSON.stringify(funded.data))
  const page = await transfersList(headers, { financial_account_id: accountId, page_size: 10 })
  if (page.status !== 200) throw new Error(JSON.stringify(page.data))
  const hasMore: boolean = page.data.has_more
  return { amount: funded.data.amount, total: page.data.total_count, hasMore }
}
`

/** Type-checks `files` in one strict program (bundler resolution, as an application's build would); the diagnostics as text. */
const typeCheck = (files: ReadonlyArray<string>): Array<string> => {
  const program = ts.createProgram(files, {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ["lib.es2022.d.ts", "lib.dom.d.ts", "lib.dom.iterable.d.ts"],
    skipLibCheck: true,
    types: []
  })
  return ts
    .getPreEmitDiagnostics(program)
    .map((diagnostic) =>
      `${diagnostic.file?.fileName ?? ""}:${diagnostic.start ?? ""} ${ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n")}`.trim()
    )
}

/**
 * The three clients generated from one served document and type-checked together, once per file:
 * the document is the same on both stores but for its `servers`, and every client takes its base
 * URL at run time. Resolves to the strict compiler's diagnostics.
 */
let generated: Promise<Array<string>> | undefined

const generateClients = async (document: unknown): Promise<Array<string>> => {
  fs.rmSync(OUT, { recursive: true, force: true })
  fs.mkdirSync(path.join(OUT, "orval"), { recursive: true })
  fs.writeFileSync(path.join(OUT, "package.json"), JSON.stringify({ type: "module" }))
  fs.writeFileSync(path.join(OUT, "schema.d.ts"), astToString(await openapiTS(structuredClone(document) as any)))
  fs.writeFileSync(path.join(OUT, "usage.ts"), USAGE)
  // @hey-api/openapi-ts: its fetch client, types and SDK functions.
  await heyApi({
    input: structuredClone(document) as any,
    output: { path: path.join(OUT, "hey-api") },
    plugins: ["@hey-api/client-fetch", "@hey-api/typescript", "@hey-api/sdk"],
    logs: { level: "silent" }
  })
  fs.writeFileSync(path.join(OUT, "hey-api-usage.ts"), HEY_API_USAGE)
  // orval: its fetch client (one file, typed headers) reads the document from disk, as its CLI does.
  fs.writeFileSync(path.join(OUT, "openapi.json"), JSON.stringify(document))
  fs.writeFileSync(path.join(OUT, "orval", "fetcher.ts"), ORVAL_FETCHER)
  await orval(
    {
      input: { target: path.join(OUT, "openapi.json") },
      output: {
        target: path.join(OUT, "orval", "client.ts"),
        client: "fetch",
        mode: "single",
        headers: true,
        override: { mutator: { path: path.join(OUT, "orval", "fetcher.ts"), name: "customFetch" } }
      }
    },
    OUT
  )
  fs.writeFileSync(path.join(OUT, "orval-usage.ts"), ORVAL_USAGE)
  return typeCheck([
    path.join(OUT, "usage.ts"),
    path.join(OUT, "hey-api", "index.ts"),
    path.join(OUT, "hey-api-usage.ts"),
    path.join(OUT, "orval-usage.ts")
  ])
}

/** The document without what differs between two servers of the same build: its URL. */
const withoutBaseUrl = (document: any, baseUrl: string) => JSON.parse(JSON.stringify(document).replaceAll(baseUrl, "<base>"))
let firstDocument: unknown

/**
 * Each example of each response of the document checked against the response's schema (JSON
 * Schema 2020-12, formats included) with ajv; operations without a success example, and declared
 * errors without an example body per code, are problems too. The problems as text, one per line.
 */
const exampleProblems = (document: any): Array<string> => {
  // Both are CommonJS: `.default` is the class and the plugin under Node's ESM and TypeScript's NodeNext alike.
  const ajv = new Ajv2020.default({ strict: false })
  addFormats.default(ajv)
  ajv.addSchema({ $id: "issuing:openapi", components: document.components })
  const validators = new Map<string, ReturnType<typeof ajv.compile>>()
  const validatorOf = (schema: unknown) => {
    const text = JSON.stringify(schema).replaceAll('"#/components/', '"issuing:openapi#/components/')
    const validator = validators.get(text) ?? ajv.compile(JSON.parse(text))
    validators.set(text, validator)
    return validator
  }
  const problems: Array<string> = []
  for (const [at, item] of Object.entries(document.paths as Record<string, Record<string, any>>)) {
    for (const [method, operation] of Object.entries(item)) {
      for (const [status, response] of Object.entries(operation.responses as Record<string, any>)) {
        for (const [type, media] of Object.entries((response.content ?? {}) as Record<string, any>)) {
          const examples: Array<[string, unknown]> =
            media.example !== undefined
              ? [["example", media.example]]
              : Object.entries((media.examples ?? {}) as Record<string, { value: unknown }>).map(([name, { value }]) => [name, value])
          if (examples.length === 0) problems.push(`${method} ${at} ${status} ${type}: no example`)
          if (type !== "application/json") continue
          const validate = validatorOf(media.schema)
          for (const [name, value] of examples) {
            if (!validate(value)) problems.push(`${method} ${at} ${status} ${name}: ${ajv.errorsText(validate.errors)}`)
          }
          if (status === "422" && media.examples === undefined) problems.push(`${method} ${at} 422: no example per business rule`)
        }
      }
    }
  }
  return problems
}
let checkedExamples: Array<string> | undefined

// Issue 49 item 1: the served /openapi.json generates clients that compile under strict and call
// the server (openapi-typescript + openapi-fetch, @hey-api/openapi-ts, orval), on both stores; and
// states what generators need.
describe.each(STORE_KINDS)("OpenAPI for generators on %s", (kind) => {
  let platform: TestPlatform
  let document: any

  beforeAll(async () => {
    platform = await startPlatform(kind)
    document = (await platform.request("GET", "/openapi.json", { key: undefined, program: null })).body
    firstDocument ??= document
    generated ??= generateClients(document)
    await generated
  }, 120_000)
  afterAll(async () => {
    await platform?.close()
  })

  it("serves the document the clients were generated from", () => {
    expect(withoutBaseUrl(document, platform.baseUrl)).toEqual(withoutBaseUrl(firstDocument, (firstDocument as any).servers[0].url))
    expect(document.servers).toEqual([{ url: platform.baseUrl }])
  })

  it("declares the headers, typed paging, one spelling per field, HTML answers, closed error types and every tag", () => {
    const operations = Object.entries(document.paths as Record<string, Record<string, any>>).flatMap(([at, item]) =>
      Object.entries(item).map(([method, operation]) => ({ at, method, operation }))
    )
    const wallets = document.paths["/v1/wallets"].post
    expect(wallets.parameters).toContainEqual(expect.objectContaining({ name: "X-Program-ID", in: "header", required: true }))
    expect(wallets.parameters).toContainEqual(expect.objectContaining({ name: "Idempotency-Key", in: "header", required: false }))
    expect(document.paths["/v1/programs"].get.parameters.map((parameter: any) => parameter.name)).not.toContain("X-Program-ID")
    for (const { at, method, operation } of operations) {
      for (const [status, response] of Object.entries(operation.responses as Record<string, any>)) {
        if (at.startsWith("/v1/")) expect(response.headers?.["Request-Id"], `${method} ${at} ${status}`).toBeDefined()
      }
      const parameters = new Map((operation.parameters ?? []).map((parameter: any) => [parameter.name, parameter]))
      for (const name of ["page-size", "order-by"]) expect(parameters.has(name), `${method} ${at} ${name}`).toBe(false)
      if (parameters.has("page")) {
        expect((parameters.get("page_size") as any).schema.type, `${at}`).toBe("integer")
        expect((parameters.get("ascending") as any).schema.type, `${at}`).toBe("boolean")
      }
      for (const tag of operation.tags ?? [])
        expect(
          document.tags.map((declared: any) => declared.name),
          tag
        ).toContain(tag)
    }
    expect(document.paths["/v1/transfers"].post.responses["200"].headers["Idempotent-Replayed"]).toBeDefined()
    const text = JSON.stringify(document)
    for (const alias of ["paymentRail", "allowedMccCodes", "blockedMccCodes", "spendingPeriod"]) {
      expect(text, alias).not.toContain(`"${alias}":`)
    }
    for (const page of ["/v1/cards/embed", "/v1/webhook-portal"]) {
      expect(Object.keys(document.paths[page].get.responses["200"].content)).toEqual(["text/html"])
      expect(document.paths[page].get.responses["204"]).toBeUndefined()
    }
    expect(document.components.schemas.ErrorEnvelope.properties.error.properties.type.enum).toContain("invalid_request_error")
    expect(document.components.schemas.AmountMinor.type).toBe("integer")
    expect(document.components.schemas.Transfer.properties.created_at.format).toBe("date-time")
    expect(document.components.schemas.TransferBatchItem.properties.payment_rail).toBeDefined()
    expect(document.components.schemas.PropertyKey).toBeUndefined()
    // A body or query id is taken in any letter case (decoded to lower case): the pattern says so.
    expect(new RegExp(document.components.schemas.Uuid.pattern).test("0196A0B2-7C3E-7D41-9A55-2F1E4C8B9A01")).toBe(true)
    const eventObject = document.components.schemas.Event.properties.data.properties.object
    expect(eventObject.discriminator.propertyName).toBe("object")
    expect(eventObject.oneOf).toContainEqual({ $ref: "#/components/schemas/Transfer" })
    // Every number of the API is whole (amounts in minor units, counts, dates): the paths of any
    // schema left a plain "number" (a new field's name may need adding to GeneratorReadyDocument.ts).
    const numbers: Array<string> = []
    const walk = (node: unknown, at: string): void => {
      if (node === null || typeof node !== "object") return
      if ((node as { type?: unknown }).type === "number") numbers.push(at)
      for (const [key, value] of Object.entries(node)) walk(value, `${at}/${key}`)
    }
    walk(document, "")
    expect(numbers).toEqual([])
  })

  it("describes every property and every parameter", () => {
    // The paths in the document of what says nothing: a new field or parameter needs a description
    // (a Schema annotation beside it; amounts say minor units, times their format, ids what they name).
    const undescribed: Array<string> = []
    // Effect's own words for a refinement ("a string at most 200 character(s) long") say nothing of the field.
    const says = (description: unknown) => typeof description === "string" && !/^an? (string|array|number|integer)\b/.test(description)
    const componentDescribed = (ref: string) => says(document.components.schemas[ref.split("/").pop()!]?.description)
    const walk = (node: unknown, at: string): void => {
      if (node === null || typeof node !== "object") return
      const properties = (node as { properties?: unknown }).properties
      if (properties !== null && typeof properties === "object" && !Array.isArray(properties)) {
        for (const [name, schema] of Object.entries(properties as Record<string, any>)) {
          const described = says(schema.description) || (schema.$ref !== undefined && componentDescribed(schema.$ref))
          if (!described) undescribed.push(`${at}/properties/${name}`)
        }
      }
      for (const [key, value] of Object.entries(node)) if (key !== "example" && key !== "examples") walk(value, `${at}/${key}`)
    }
    walk(document.components, "#/components")
    walk(document.paths, "#/paths")
    for (const [at, item] of Object.entries(document.paths as Record<string, Record<string, any>>)) {
      for (const [method, operation] of Object.entries(item)) {
        for (const parameter of operation.parameters ?? []) {
          if (!says(parameter.description)) undescribed.push(`${method} ${at} ${parameter.in} parameter ${parameter.name}`)
        }
      }
    }
    expect(undescribed).toEqual([])
  })

  it("gives every operation a success example and its own error codes, each example valid against its schema", async () => {
    // Checked once per file: the two stores' documents differ only in their URL (above).
    checkedExamples ??= exampleProblems(document)
    expect(checkedExamples).toEqual([])
    const errorCodes = (at: string, method: string, status: string) =>
      Object.keys(document.paths[at][method].responses[status]?.content["application/json"].examples ?? {})
    // The operation's own 422 codes, and the server answers one of them: a book transfer out of an empty wallet.
    expect(errorCodes("/v1/transfers", "post", "422")).toEqual(
      expect.arrayContaining(["insufficient_funds", "same_financial_account", "settlement_account_not_allowed"])
    )
    expect(errorCodes("/v1/cards", "post", "422")).not.toContain("insufficient_funds")
    expect(document.paths["/v1/cards/{card_id}/freeze"].post.responses["422"]).toBeUndefined()
    expect(errorCodes("/v1/wallets/{wallet_id}", "get", "404")).toEqual(["not_found"])
    expect(
      document.paths["/v1/wallets/{wallet_id}"].get.responses["404"].content["application/json"].examples.not_found.value.error.param
    ).toBe("wallet_id")
    expect(errorCodes("/v1/transfers", "post", "409")).toEqual(["conflict"])
    const empty = (await platform.request("POST", "/v1/wallets", { body: { holder: { name: "Empty" } } })).body
    const other = (await platform.request("POST", "/v1/wallets", { body: { holder: { name: "Other" } } })).body
    const refused = await platform.request("POST", "/v1/transfers", {
      body: {
        payment_rail: "book",
        amount: 100,
        currency: "USD",
        from_financial_account_id: empty.financial_account_id,
        to_financial_account_id: other.financial_account_id
      }
    })
    expect(refused.status).toBe(422)
    expect(errorCodes("/v1/transfers", "post", "422")).toContain(refused.body.error.code)
    const unknown = await platform.request("GET", `/v1/wallets/${crypto.randomUUID()}`)
    expect(errorCodes("/v1/wallets/{wallet_id}", "get", String(unknown.status))).toContain(unknown.body.error.code)
  })

  it("generates openapi-typescript, @hey-api/openapi-ts and orval clients that compile under strict", async () => {
    expect(fs.readFileSync(path.join(OUT, "hey-api", "sdk.gen.ts"), "utf8")).toContain("walletsCreate")
    expect(fs.readFileSync(path.join(OUT, "orval", "client.ts"), "utf8")).toContain("export const walletsCreate")
    expect(await generated).toEqual([])
  })

  it("an openapi-fetch program over the openapi-typescript types calls the server", async () => {
    const usage = await import(path.join(OUT, "usage.ts"))
    const result = await usage.run(platform.baseUrl, platform.org.api_key, platform.org.program_id)
    expect(result).toMatchObject({ amount: 1500, total: 2, hasMore: true, batch: 1, refused: 400, errorType: "invalid_request_error" })
    expect(result.eventAmount).toBe(5)
    expect(result.requestId).toMatch(/^[0-9a-f-]{36}$/)
  })

  it("the @hey-api/openapi-ts SDK and orval's functions call the server", async () => {
    const heyApiUsage = await import(path.join(OUT, "hey-api-usage.ts"))
    expect(await heyApiUsage.run(platform.baseUrl, platform.org.api_key, platform.org.program_id)).toEqual({
      amount: 700,
      refused: 422,
      code: "same_financial_account",
      total: 1
    })
    const orvalUsage = await import(path.join(OUT, "orval-usage.ts"))
    expect(await orvalUsage.run(platform.baseUrl, platform.org.api_key, platform.org.program_id)).toEqual({
      amount: 300,
      total: 1,
      hasMore: false
    })
  })
})
