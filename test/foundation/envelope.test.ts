import * as http from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope, startPlatform, type TestPlatform } from "../support/platform.js"

/** Sends a body in chunks with no Content-Length (chunked transfer encoding). */
const sendChunked = (platform: TestPlatform, path: string, chunk: string, times: number) =>
  new Promise<{ status: number; body: any; headers: http.IncomingHttpHeaders }>((resolve, reject) => {
    const request = http.request(
      `${platform.baseUrl}${path}`,
      {
        method: "POST",
        headers: { authorization: `Bearer ${platform.org.api_key}`, "content-type": "application/json" }
      },
      (response) => {
        let text = ""
        response.on("data", (data) => (text += data))
        response.on("end", () => resolve({ status: response.statusCode!, body: JSON.parse(text), headers: response.headers }))
      }
    )
    request.on("error", (error) => {
      // The server may answer and close before the whole body is written.
      if ((error as NodeJS.ErrnoException).code !== "EPIPE" && (error as NodeJS.ErrnoException).code !== "ECONNRESET") reject(error)
    })
    const write = (left: number) => {
      if (left === 0) return request.end()
      if (!request.write(chunk)) request.once("drain", () => write(left - 1))
      else setImmediate(() => write(left - 1))
    }
    write(times)
  })

// docs/api.md#errors: the envelope on every non-2xx, whatever failed.
describe.each(STORE_KINDS)("the error envelope on %s", (kind) => {
  let platform: TestPlatform
  beforeAll(async () => {
    platform = await startPlatform(kind)
  })
  afterAll(async () => {
    await platform?.close()
  })

  const countPrograms = async () => (await platform.request("GET", "/v1/programs")).body.total_count as number

  describe("schema validation failures → 400 with param naming the field", () => {
    const cases: Array<[string, string, unknown, string | null]> = [
      ["missing required field", "/v1/programs", {}, "name"],
      ["wrong type", "/v1/programs", { name: 42 }, "name"],
      ["empty name", "/v1/programs", { name: "   " }, "name"],
      ["too long name", "/v1/programs", { name: "x".repeat(201) }, "name"],
      ["bad bin", "/v1/programs", { name: "P", bin: "12ab" }, "bin"],
      ["bin too long", "/v1/programs", { name: "P", bin: "123456789" }, "bin"],
      ["unknown role", "/v1/api-keys", { name: "k", role: "owner" }, "role"],
      ["nested array element", "/v1/api-keys", { name: "k", role: "viewer", program_ids: ["ok", 5] }, "program_ids.1"],
      ["wrong type of a flag", "/v1/api-keys", { name: "k", role: "viewer", pan_reveal: "yes" }, "pan_reveal"],
      ["a JSON array instead of an object", "/v1/programs", [1, 2], null]
    ]
    it.each(cases)("%s", async (_label, path, body, param) => {
      const before = await countPrograms()
      const error = expectEnvelope(await platform.request("POST", path, { program: null, body }), 400, {
        type: "invalid_request_error",
        code: "invalid_request",
        param
      })
      if (param !== null) expect(error.message).toContain(param)
      expect(await countPrograms()).toBe(before)
    })

    it("program_ids naming a program of another organization", async () => {
      const other = await platform.createOrganization()
      expectEnvelope(
        await platform.request("POST", "/v1/api-keys", { body: { name: "k", role: "viewer", program_ids: [other.program_id] } }),
        400,
        { code: "invalid_request", param: "program_ids" }
      )
    })
  })

  it("malformed JSON → 400 invalid_request", async () => {
    for (const rawBody of ["{", '{"name": }', "nul", "{'name': 'x'}"]) {
      expectEnvelope(await platform.request("POST", "/v1/programs", { rawBody, headers: { "content-type": "application/json" } }), 400, {
        type: "invalid_request_error",
        code: "invalid_request",
        param: null
      })
    }
  })

  // PostgreSQL text cannot hold U+0000: it used to reach the database and answer 500 (found by fuzz.test.ts).
  // A lone surrogate ("\ud800") is stored as U+FFFD by PostgreSQL and as sent by SQLite: refused alike.
  it("a NUL character or a lone surrogate in a body string, or NUL in a query value → 400 naming the field, nothing written", async () => {
    const before = await countPrograms()
    const cases: Array<[string, string, unknown, string | null]> = [
      ["POST", "/v1/programs", { name: "a\u0000b" }, "name"],
      ["POST", "/v1/wallets", { holder: { name: "Ada\u0000" } }, "holder.name"],
      ["POST", "/v1/api-keys", { name: "k", role: "viewer", program_ids: [platform.org.program_id, "\u0000"] }, "program_ids.1"],
      ["POST", "/v1/transfers", { paymentRail: "fednow_instant", amount: 1, currency: "USD", description: "\u0000" }, "description"],
      ["POST", "/v1/programs", "\u0000", null],
      ["POST", "/v1/programs", { name: "half a pair \ud800" }, "name"],
      ["POST", "/v1/wallets", { holder: { name: "Ada", email: "\udc00@example.com" } }, "holder.email"]
    ]
    for (const [method, path, body, param] of cases) {
      const error = expectEnvelope(await platform.request(method, path, { body }), 400, { code: "invalid_request", param })
      expect(error.message).toContain("U+0000")
    }
    const account = (await platform.request("POST", "/v1/wallets", { body: { holder: { name: "NUL" } } })).body.financial_account_id
    expectEnvelope(await platform.request("GET", `/v1/financial-accounts/${account}/book-transfers?book=a%00b`), 400, {
      code: "invalid_request",
      param: "book"
    })
    expectEnvelope(await platform.request("GET", "/v1/programs?%00=%00"), 400, { code: "invalid_request", param: null })
    expect(await countPrograms()).toBe(before)
    // A whole surrogate pair is ordinary text.
    const emoji = await platform.request("POST", "/v1/wallets", { body: { holder: { name: "Ada \ud83d\udcb3" } } })
    expect(emoji.status, emoji.text).toBe(200)
    expect(emoji.body.holder.name).toBe("Ada 💳")
    // Other control characters are ordinary text.
    expect((await platform.request("GET", `/v1/financial-accounts/${account}/book-transfers?book=a%01b`)).status).toBe(200)
  })

  // Schema decoding and its error formatting recurse: half a million levels used to overflow the stack (500; found by fuzz.test.ts).
  it("a body nesting deeper than 32 levels → 400 invalid_request, param null", async () => {
    const before = await countPrograms()
    const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth)
    for (const rawBody of [nested(500_000), `{"name": ${nested(100_000)}}`, `{"name": "x", "padding": ${nested(33)}}`]) {
      const error = expectEnvelope(
        await platform.request("POST", "/v1/programs", { program: null, rawBody, headers: { "content-type": "application/json" } }),
        400,
        { type: "invalid_request_error", code: "invalid_request", param: null }
      )
      expect(error.message).toContain("32 levels")
    }
    // 32 levels are decoded as usual; brackets inside strings do not count.
    expectEnvelope(await platform.request("POST", "/v1/programs", { program: null, body: { name: JSON.parse(`${nested(31)}`) } }), 400, {
      code: "invalid_request",
      param: "name"
    })
    const created = await platform.request("POST", "/v1/programs", { program: null, body: { name: "[".repeat(100) } })
    expect(created.status).toBe(200)
    expect(await countPrograms()).toBe(before + 1)
  })

  it("a body without Content-Type, or with another one → 400 param Content-Type", async () => {
    const body = JSON.stringify({ name: "No type" })
    expectEnvelope(await platform.request("POST", "/v1/programs", { rawBody: body }), 400, {
      code: "invalid_request",
      param: "Content-Type"
    })
    for (const contentType of ["text/plain", "application/jsonp", "application/x-www-form-urlencoded"]) {
      expectEnvelope(await platform.request("POST", "/v1/programs", { rawBody: body, headers: { "content-type": contentType } }), 400, {
        code: "invalid_request",
        param: "Content-Type"
      })
    }
    // An empty body is no body, whatever type it declares: decoded as {} (a 400 naming the first
    // missing field), never handed to another parser (multipart used to answer 500; found by fuzz.test.ts).
    for (const contentType of [
      "multipart/form-data; boundary=x",
      "text/plain",
      "application/x-www-form-urlencoded",
      "application/octet-stream"
    ]) {
      expectEnvelope(
        await platform.request("POST", "/v1/programs", { program: null, rawBody: "", headers: { "content-type": contentType } }),
        400,
        { code: "invalid_request", param: "name" }
      )
    }
    // With a charset it is still JSON.
    const ok = await platform.request("POST", "/v1/programs", {
      rawBody: body,
      headers: { "content-type": "application/json; charset=utf-8" }
    })
    expect(ok.status).toBe(200)
  })

  it("unknown routes → 404 not_found with param null, authenticated or not", async () => {
    for (const path of ["/v1/nothing-here", "/v2/programs", "/", "/v1/programs/a/b", "/v1"]) {
      expectEnvelope(await platform.request("GET", path), 404, { type: "not_found_error", code: "not_found", param: null })
      expectEnvelope(await platform.request("GET", path, { key: undefined }), 404, { code: "not_found", param: null })
    }
    expectEnvelope(await platform.request("POST", "/v1/nothing-here", { body: {} }), 404, { code: "not_found" })
  })

  it("a method the path does not accept → 405 with Allow", async () => {
    const put = await platform.request("PUT", "/v1/programs", { body: { name: "x" } })
    expectEnvelope(put, 405, { type: "invalid_request_error", code: "method_not_allowed", param: null })
    expect(put.headers.get("allow")).toBe("GET, POST")
    const del = await platform.request("DELETE", `/v1/programs/${platform.org.program_id}`)
    expectEnvelope(del, 405, { code: "method_not_allowed" })
    expect(del.headers.get("allow")).toBe("GET, PATCH")
    const head = await platform.request("HEAD", "/v1/programs")
    expect(head.status).toBe(200)
    expect(head.text).toBe("")
    expect((await platform.request("HEAD", "/v1/programs", { key: undefined })).status).toBe(401)
    const options = await platform.request("OPTIONS", "/v1/programs")
    expectEnvelope(options, 405, { code: "method_not_allowed" })
    const patch = await platform.request("PATCH", "/v1/api-keys/x", { key: undefined })
    expectEnvelope(patch, 405, { code: "method_not_allowed" })
    expect(patch.headers.get("allow")).toBe("DELETE")
  })

  it("a body over 1 MiB → 413 request_too_large, declared or streamed", async () => {
    const before = await countPrograms()
    const big = JSON.stringify({ name: "big", padding: "x".repeat(1024 * 1024) })
    expectEnvelope(await platform.request("POST", "/v1/programs", { rawBody: big, headers: { "content-type": "application/json" } }), 413, {
      type: "invalid_request_error",
      code: "request_too_large",
      param: null
    })
    const streamed = await sendChunked(platform, "/v1/programs", "x".repeat(64 * 1024), 20)
    expect(streamed.status).toBe(413)
    expect(streamed.body.error.code).toBe("request_too_large")
    expect(streamed.headers["request-id"]).toBe(streamed.body.error.request_id)
    // Just under the limit is fine (and then a schema matter: an unknown field would be a 400, so the bulk is whitespace).
    const fits = `{"name": "fits"${" ".repeat(1024 * 1024 - 100)}}`
    const accepted = await platform.request("POST", "/v1/programs", { rawBody: fits, headers: { "content-type": "application/json" } })
    expect(accepted.status).toBe(200)
    expect(await countPrograms()).toBe(before + 1)
  })

  it("an unknown order_by → 400 param order_by listing the valid fields", async () => {
    const error = expectEnvelope(await platform.request("GET", "/v1/programs?order_by=color"), 400, {
      code: "invalid_request",
      param: "order_by"
    })
    expect(error.message).toContain("created_at, updated_at, name")
    const keys = expectEnvelope(await platform.request("GET", "/v1/api-keys?order-by=role"), 400, { param: "order_by" })
    expect(keys.message).toContain("created_at, name")
  })

  it("a database failure → 500 api_error internal_error, with the envelope", async () => {
    const { onDatabase } = await import("./fixtures.js")
    await onDatabase(platform, (query) => query("ALTER TABLE issuing_programs RENAME TO issuing_programs_away"))
    try {
      const error = expectEnvelope(await platform.request("GET", "/v1/programs"), 500, {
        type: "api_error",
        code: "internal_error",
        param: null
      })
      expect(error.message).not.toMatch(/issuing_programs|SQL|sqlite|relation/i)
    } finally {
      await onDatabase(platform, (query) => query("ALTER TABLE issuing_programs_away RENAME TO issuing_programs"))
    }
    expect((await platform.request("GET", "/v1/programs")).status).toBe(200)
  })

  it("gives every response, success or failure, a unique Request-Id, and doc_url under the base URL", async () => {
    const ok = await platform.request("GET", "/v1/programs")
    expect(ok.headers.get("request-id")).toMatch(/^[0-9a-f-]{36}$/)
    const first = expectEnvelope(await platform.request("GET", "/v1/programs", { key: undefined }), 401)
    const second = expectEnvelope(await platform.request("GET", "/v1/programs", { key: undefined }), 401)
    expect(first.request_id).not.toBe(second.request_id)
    expect(first.doc_url).toBe(`${platform.baseUrl}/docs/errors/authentication_error`)
    const doc = await fetch(first.doc_url)
    expect(doc.status).toBe(200)
  })
})
