import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectEnvelope, startPlatform, type TestPlatform, type TestResponse } from "../support/platform.js"

/**
 * docs/api.md#errors: in production the sandbox-only routes (`/v1/simulate/*`) are unknown URLs —
 * the same 404 as any unknown route, for any method, with or without a key — and /openapi.json
 * leaves them out. Routing does not depend on the store: SQLite only.
 */
const SIMULATE_PATHS = [
  "/v1/simulate/authorizations",
  "/v1/simulate/transactions/00000000-0000-7000-8000-000000000000/increment",
  "/v1/simulate/transactions/00000000-0000-7000-8000-000000000000/clearing",
  "/v1/simulate/transactions/00000000-0000-7000-8000-000000000000/reversal",
  "/v1/simulate/transactions/00000000-0000-7000-8000-000000000000/return",
  "/v1/simulate/transfers/00000000-0000-7000-8000-000000000000/settle",
  "/v1/simulate/disputes/00000000-0000-7000-8000-000000000000/resolve"
]
const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"]

const openApiPaths = async (platform: TestPlatform) => {
  const response = await platform.request("GET", "/openapi.json", { key: undefined, program: null })
  expect(response.status, response.text).toBe(200)
  return response.body as { paths: Record<string, Record<string, unknown>>; tags: Array<{ name: string }> }
}

/** What a client can compare between two answers: everything but the request's id and the date. */
const observable = (response: TestResponse) => {
  const { request_id: _, ...error } = response.body.error
  const headers = [...response.headers.entries()].filter(([name]) => !["request-id", "date", "content-length"].includes(name))
  return { status: response.status, error, headers }
}

describe("sandbox-only routes in production", () => {
  let platform: TestPlatform
  beforeAll(async () => {
    platform = await startPlatform("sqlite", { environment: "production" })
  })
  afterAll(async () => {
    await platform?.close()
  })

  it("answer exactly as an unknown route, for any method, with or without a key", async () => {
    const callers = [{}, { key: undefined, program: null }, { key: "sk_live_unknown", program: null }]
    for (const method of METHODS) {
      for (const options of callers) {
        const body = method === "GET" || method === "DELETE" ? {} : { body: { amount: -1 } }
        const unknown = await platform.request(method, "/v1/no-such-route", { ...options, ...body })
        expectEnvelope(unknown, 404, { code: "not_found", param: null })
        for (const path of SIMULATE_PATHS) {
          const response = await platform.request(method, path, { ...options, ...body })
          expectEnvelope(response, 404, { code: "not_found", param: null })
          expect(observable(response), `${method} ${path}`).toEqual(observable(unknown))
        }
      }
    }
  })

  it("are not in /openapi.json nor its tags", async () => {
    const spec = await openApiPaths(platform)
    expect(Object.keys(spec.paths).filter((path) => path.startsWith("/v1/simulate"))).toEqual([])
    expect(spec.tags.map((tag) => tag.name).filter((name) => name.startsWith("simulate"))).toEqual([])
    expect(spec.paths["/v1/transfers"]).toBeDefined()
    expect(spec.paths["/v1/transactions/{transaction_id}/expire"]).toBeDefined()
  })
})

describe("sandbox-only routes in the sandbox", () => {
  let platform: TestPlatform
  beforeAll(async () => {
    platform = await startPlatform("sqlite")
  })
  afterAll(async () => {
    await platform?.close()
  })

  it("are served and documented", async () => {
    const spec = await openApiPaths(platform)
    expect(Object.keys(spec.paths).filter((path) => path.startsWith("/v1/simulate")).length).toBe(SIMULATE_PATHS.length)
    expectEnvelope(await platform.request("POST", SIMULATE_PATHS[5]!), 404, { param: "transfer_id" })
    expectEnvelope(await platform.request("GET", SIMULATE_PATHS[0]!), 405, { code: "method_not_allowed" })
  })
})
