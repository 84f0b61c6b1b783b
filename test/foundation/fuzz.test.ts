import { IssuingApi } from "@issuing/http"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeRouteTable } from "../../packages/http/src/middleware/RouteTable.js"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope, startPlatform, type TestPlatform, type TestResponse, uuid } from "../support/platform.js"

/**
 * Black-box fuzzing of the whole HTTP API (docs/api.md#errors): every route and method the
 * served /openapi.json lists, with real, unknown and junk path ids, arbitrary and malformed bodies,
 * wrong Content-Types, junk paging and filter parameters, and junk X-Program-ID, Idempotency-Key
 * and Authorization headers. Whatever is sent, the server never answers 5xx, every non-2xx is the
 * envelope with request_id equal to the Request-Id header, and the server still serves afterwards.
 *
 * Reproducible: a fixed seed, overridden by FUZZ_SEED (fast-check prints the seed and the
 * counterexample path of a failure; FUZZ_SEED=<seed> replays it). FUZZ_RUNS hunts longer.
 */
const SEED = process.env.FUZZ_SEED !== undefined && process.env.FUZZ_SEED !== "" ? Number(process.env.FUZZ_SEED) : 20_251_107
if (!Number.isSafeInteger(SEED)) throw new Error(`FUZZ_SEED must be an integer, got '${process.env.FUZZ_SEED}'`)
/** Requests per store; FUZZ_RUNS sets both for a longer hunt (the time-out grows with it). */
const RUNS: Record<(typeof STORE_KINDS)[number], number> =
  process.env.FUZZ_RUNS !== undefined && process.env.FUZZ_RUNS !== ""
    ? { sqlite: Number(process.env.FUZZ_RUNS), postgres: Number(process.env.FUZZ_RUNS) }
    : { sqlite: 2000, postgres: 1500 }

/**
 * The fuzzing test's time-out, by its requests (one at a time): 4–6 ms each at load 7, 62 ms at
 * load 20–25, where vitest's 60 s default failed it (docs/testing.md).
 */
const timeoutFor = (runs: number) => 60_000 + runs * 150

/** One operation of the OpenAPI document: method and path template with its `{parameters}`. */
interface Operation {
  readonly method: string
  readonly template: string
  readonly params: ReadonlyArray<string>
}

/** Ids of resources created through the API before fuzzing, by path parameter name. */
type IdPool = Record<string, ReadonlyArray<string>>

interface Fixture {
  readonly operations: ReadonlyArray<Operation>
  readonly ids: IdPool
  /** Valid request bodies per "METHOD template", the base that fuzzing mutates. */
  readonly bodies: Record<string, Record<string, unknown>>
  readonly programs: ReadonlyArray<string>
  readonly otherProgram: string
  readonly viewerKey: string
}

// ---------------------------------------------------------------------------------------------
// OAuth protocol endpoints (docs/oauth.md): forms in, OAuth's own answers out, redirects never followed

/** Loopback addresses nothing listens on: a followed redirect could go nowhere else. */
const OAUTH_INTERACTION_URL = "http://127.0.0.1:1/consent"
const OAUTH_REDIRECT_URI = "http://127.0.0.1:1/callback"
const FORM_TYPE = "application/x-www-form-urlencoded"

/** True for /oauth/* and /.well-known/* (a path template or a URL). */
const isOAuthProtocol = (path: string) => path.startsWith("/oauth/") || path.startsWith("/.well-known/")

/** A request whose redirect is read, not followed (GET /oauth/authorize answers with one). */
const requestManual = async (
  platform: TestPlatform,
  method: string,
  url: string,
  options: { rawBody?: string | undefined; headers?: Record<string, string> | undefined }
): Promise<TestResponse> => {
  // Clients authenticate with Basic or the form here; an API key is no credential (junk Authorization headers still go).
  const headers: Record<string, string> = { ...options.headers }
  const response = await fetch(`${platform.baseUrl}${url}`, { method, headers, body: options.rawBody, redirect: "manual" })
  const text = await response.text()
  let body: unknown
  try {
    body = text === "" ? undefined : JSON.parse(text)
  } catch {
    body = undefined
  }
  return { status: response.status, headers: response.headers, body, text }
}

// ---------------------------------------------------------------------------------------------
// Generators

const JUNK_STRINGS = [
  "",
  " ",
  "x".repeat(2048),
  "../",
  "..",
  "%00",
  "\u0000",
  "a\u0000b",
  "\t\r\n",
  "\u0001\u001f\u007f",
  "%",
  "%zz",
  "%2F",
  "'",
  '"',
  "' OR '1'='1",
  "1; DROP TABLE issuing_programs; --",
  "null",
  "undefined",
  "0",
  "-1",
  "1e309",
  "NaN",
  "true",
  "[]",
  "{}",
  "💳🏦",
  "ÄÖÜß",
  "\u202e\u200b",
  "00000000-0000-0000-0000-000000000000",
  "ffffffff-ffff-ffff-ffff-ffffffffffff",
  "not-a-uuid-at-all-but-36-characters!"
]

/** Characters that trouble parsers, databases and encoders (PostgreSQL text refuses U+0000). */
const NASTY_CHARACTERS = ["\u0000", "\u0000", "\ud800", "\udfff", "\u202e", "\ufeff", "\u2028", "\u0085", "'", '"', "\\", "%", "\n", "😀"]

const junkString = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...JUNK_STRINGS) },
  {
    weight: 3,
    arbitrary: fc
      .tuple(fc.string({ maxLength: 8 }), fc.constantFrom(...NASTY_CHARACTERS), fc.string({ maxLength: 8 }))
      .map((parts) => parts.join(""))
  },
  { weight: 2, arbitrary: fc.string({ unit: "grapheme", maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary-ascii", maxLength: 20 }) },
  { weight: 1, arbitrary: fc.uuid().map((id) => id.toUpperCase()) },
  { weight: 1, arbitrary: fc.uuid().map((id) => ` ${id} `) }
)

/** A value for one path parameter: a real id (of any kind), an unknown UUID, or junk. */
const pathValue = (ids: IdPool, param: string) => {
  const own = ids[param] ?? []
  const all = Object.values(ids).flat()
  return fc.oneof(
    ...(own.length > 0 ? [{ weight: 5, arbitrary: fc.constantFrom(...own) }] : []),
    { weight: 1, arbitrary: fc.constantFrom(...all) },
    { weight: 2, arbitrary: fc.uuid() },
    { weight: 3, arbitrary: junkString }
  )
}

/** Text a URL can carry: lone surrogates become U+FFFD, as a browser would send them. */
const wellFormed = (value: string) => value.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd")

/** A URL component, percent-encoded. */
const encode = (value: string) => encodeURIComponent(wellFormed(value))

/** Path segments are mostly percent-encoded; sometimes sent raw (a raw "%" or "../" included). */
const encodeSegment = (value: string, raw: boolean) => (raw ? wellFormed(value).replace(/[/?#]/g, "") : encode(value))

const HUGE_NUMBERS = [
  Number.MAX_SAFE_INTEGER + 2,
  Number.MAX_VALUE,
  -Number.MAX_VALUE,
  1e21,
  -1,
  0,
  -0.5,
  0.1,
  1.5,
  2 ** 31,
  2 ** 63,
  Number.MIN_VALUE
]

/** Any JSON value, with numbers that stress amounts and strings that stress text fields. */
const jsonValue = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.constantFrom(...HUGE_NUMBERS),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    junkString,
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(fc.oneof(junkString, fc.constantFrom("amount", "name", "__proto__", "constructor")), tie("value"), { maxKeys: 4 })
  )
})).value

const snakeToCamel = (key: string) => key.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase())
const camelToSnake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)

/**
 * Big JSON texts within the body size limit, named in cases to keep counterexamples short: nested
 * deeper than any call stack, an array of 100 000 elements, an object of 20 000 keys, a 500 000
 * character string.
 */
const BIG_JSON: Record<string, string> = {
  deep: "[".repeat(100_000) + "]".repeat(100_000),
  wide: `[${"0,".repeat(100_000)}0]`,
  keys: `{${Array.from({ length: 20_000 }, (_, index) => `"k${index}":${index}`).join(",")}}`,
  long: JSON.stringify("x".repeat(500_000))
}
const expandBig = (text: string) => BIG_JSON[text] ?? text

/**
 * JSON texts JSON.stringify cannot write: numbers out of double range, beyond 2^53, negative zero;
 * and the big texts above.
 */
const RAW_VALUES = [
  "1e400",
  "-1e400",
  "1e-400",
  "-0",
  "123456789012345678901234567890",
  "9007199254740993",
  "0.1e1",
  "1E2",
  ...Object.keys(BIG_JSON)
]

type Mutation =
  | { readonly kind: "replace"; readonly path: ReadonlyArray<number>; readonly value: unknown }
  | { readonly kind: "raw"; readonly path: ReadonlyArray<number>; readonly token: string }
  | { readonly kind: "drop"; readonly path: ReadonlyArray<number> }
  | { readonly kind: "rename"; readonly path: ReadonlyArray<number> }
  | { readonly kind: "extra"; readonly key: string; readonly value: unknown }

/** A replacement value: mostly junk text and odd numbers, sometimes any JSON. */
const replacement = fc.oneof(
  { weight: 3, arbitrary: junkString },
  { weight: 2, arbitrary: fc.constantFrom(...HUGE_NUMBERS) },
  { weight: 2, arbitrary: jsonValue }
)
/** Which field to change: an index per nesting level (holder.name, spendingPeriod.amount, program_ids.0). */
const fieldPath = fc.array(fc.nat(), { minLength: 1, maxLength: 2 })

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant("replace" as const), path: fieldPath, value: replacement }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("raw" as const), path: fieldPath, token: fc.constantFrom(...RAW_VALUES) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("drop" as const), path: fieldPath }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("rename" as const), path: fieldPath }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("extra" as const), key: junkString, value: jsonValue }) }
)

const isContainer = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null

/**
 * The JSON text of a valid body with a few fields (nested ones too) replaced by junk or by raw
 * JSON text, dropped, renamed snake⇄camel, or with unknown fields added.
 */
const mutate = (base: Record<string, unknown>, mutations: ReadonlyArray<Mutation>): string => {
  const body: Record<string, unknown> = structuredClone(base)
  const tokens: Array<string> = []
  for (const change of mutations) {
    if (change.kind === "extra") {
      Object.defineProperty(body, change.key, { value: change.value, enumerable: true, configurable: true, writable: true })
      continue
    }
    // Walk down while the chosen field holds an object or array and the path goes on.
    let parent: Record<string, unknown> = body
    let key: string | undefined
    for (const [depth, index] of change.path.entries()) {
      const keys = Object.keys(parent)
      if (keys.length === 0) break
      key = keys[index % keys.length]!
      const child = parent[key]
      if (depth === change.path.length - 1 || !isContainer(child)) break
      parent = child
    }
    if (key === undefined) continue
    switch (change.kind) {
      case "replace":
        parent[key] = change.value
        break
      case "raw":
        parent[key] = `@@RAW${tokens.push(change.token) - 1}@@`
        break
      case "drop":
        delete parent[key]
        break
      case "rename": {
        const renamed = key.includes("_") ? snakeToCamel(key) : camelToSnake(key)
        if (renamed !== key) {
          parent[renamed] = parent[key]
          delete parent[key]
        }
        break
      }
    }
  }
  return JSON.stringify(body).replace(/"@@RAW(\d+)@@"/g, (_m, index: string) => expandBig(tokens[Number(index)]!))
}

/** What goes in the request body, and under which Content-Type. */
type BodySpec =
  | { readonly kind: "none" }
  | { readonly kind: "mutated"; readonly mutations: ReadonlyArray<Mutation>; readonly contentType: string | undefined }
  | { readonly kind: "json"; readonly value: unknown; readonly contentType: string | undefined }
  | { readonly kind: "raw"; readonly text: string; readonly contentType: string | undefined }

const JSON_TYPE = "application/json"
const contentType = fc.oneof(
  { weight: 15, arbitrary: fc.constant<string | undefined>(JSON_TYPE) },
  {
    weight: 2,
    arbitrary: fc.constantFrom<string | undefined>(
      undefined,
      "application/json; charset=utf-8",
      "APPLICATION/JSON",
      "text/plain",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      "application/jsonp",
      ";",
      ""
    )
  }
)

const MALFORMED_JSON = ["{", "}", "nul", "{'a': 1}", '{"a": }', "[1,", '{"a":1}}', "\u0000", "\ufeff{}", "NaN", "1e99999", '"unterminated']

const bodySpec: fc.Arbitrary<BodySpec> = fc.oneof(
  { weight: 1, arbitrary: fc.constant({ kind: "none" as const }) },
  {
    weight: 8,
    arbitrary: fc.record({ kind: fc.constant("mutated" as const), mutations: fc.array(mutation, { maxLength: 2 }), contentType })
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("json" as const), value: jsonValue, contentType }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("raw" as const),
      text: fc.oneof(fc.constantFrom(...MALFORMED_JSON, ...Object.keys(BIG_JSON)), fc.string({ maxLength: 40 })),
      contentType
    })
  }
)

const QUERY_KEYS = [
  "page",
  "page_size",
  "page-size",
  "order_by",
  "order-by",
  "ascending",
  "starting_after",
  "wallet_id",
  "card_id",
  "transfer_id",
  "transaction_id",
  "financial_account_id",
  "event_id",
  "webhook_subscription_id",
  "state",
  "status",
  "action",
  "type",
  "kind",
  "currency",
  "payment_rail",
  "book",
  "disabled",
  "session_token",
  "response_type",
  "client_id",
  "redirect_uri",
  "scope",
  "code_challenge",
  "code_challenge_method"
]
const QUERY_VALUES = [
  "",
  "0",
  "1",
  "-1",
  "2",
  "100",
  "101",
  "1.5",
  "1e3",
  "1e309",
  "99999999999999999999",
  "0x10",
  "abc",
  "true",
  "false",
  "TRUE",
  "yes",
  "created_at",
  "updated_at",
  "name",
  "amount",
  "posted_at",
  "id",
  "created_at desc",
  "USD",
  "usd",
  "ACTIVE",
  "PENDING",
  "wallet",
  "settlement",
  "card.created",
  "reveal",
  "principal",
  "a\u0000b",
  "code",
  "S256",
  "plain",
  "read write",
  OAUTH_REDIRECT_URI,
  "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
]

/** Query parameters, half the time none: known names (repeated at will) and junk names, known values and junk; percent-encoded or raw. */
const queryPairs = (ids: IdPool): fc.Arbitrary<ReadonlyArray<readonly [string, string, boolean]>> => {
  const pair = fc.tuple(
    fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...QUERY_KEYS) }, { weight: 1, arbitrary: junkString }),
    fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom(...QUERY_VALUES) },
      { weight: 2, arbitrary: fc.constantFrom(...Object.values(ids).flat()) },
      { weight: 1, arbitrary: fc.uuid() },
      { weight: 2, arbitrary: junkString }
    ),
    fc.boolean()
  )
  return fc.oneof(fc.constant([]), fc.array(pair, { minLength: 1, maxLength: 4 }))
}

/** Header values fetch can send: printable ASCII, no CR/LF/NUL. */
const headerJunk = fc.oneof(
  fc.constantFrom("", "x", "null", "'", "00000000-0000-0000-0000-000000000000", "%00", "../", "x".repeat(300)),
  fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)), maxLength: 40 })
)

interface HeaderSpec {
  readonly key: "admin" | "viewer" | "none" | "junk"
  readonly junkKey: string
  readonly program: "default" | "second" | "other" | "none" | "unknown" | "junk"
  readonly junkProgram: string
  readonly idempotency: "none" | "uuid" | "reused" | "junk"
  readonly junkIdempotency: string
}

const headerSpec: fc.Arbitrary<HeaderSpec> = fc.record({
  key: fc.oneof(
    { weight: 30, arbitrary: fc.constant("admin" as const) },
    { weight: 1, arbitrary: fc.constantFrom("viewer" as const, "none" as const, "junk" as const) }
  ),
  junkKey: headerJunk,
  program: fc.oneof(
    { weight: 20, arbitrary: fc.constant("default" as const) },
    { weight: 3, arbitrary: fc.constantFrom("second" as const, "other" as const, "none" as const, "unknown" as const, "junk" as const) }
  ),
  junkProgram: headerJunk,
  idempotency: fc.oneof(
    { weight: 8, arbitrary: fc.constant("none" as const) },
    { weight: 2, arbitrary: fc.constant("uuid" as const) },
    { weight: 1, arbitrary: fc.constantFrom("reused" as const, "junk" as const) }
  ),
  junkIdempotency: headerJunk
})

const REUSED_IDEMPOTENCY_KEYS = ["5d0c6f1e-8a53-4b8e-9a55-1f6f0f3c2a01", "5d0c6f1e-8a53-4b8e-9a55-1f6f0f3c2a02"]

const EXTRA_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"]

/** One generated request. */
interface Case {
  readonly operation: Operation
  readonly method: string
  readonly pathValues: ReadonlyArray<readonly [string, boolean]>
  readonly query: ReadonlyArray<readonly [string, string, boolean]>
  readonly body: BodySpec
  readonly headers: HeaderSpec
}

/** Operations taking a body are picked more often: they have the most input to get wrong. */
const operationOf = (fixture: Fixture) =>
  fc.oneof(
    ...fixture.operations.map((operation) => ({
      weight: `${operation.method} ${operation.template}` in fixture.bodies ? 4 : 1,
      arbitrary: fc.constant(operation)
    }))
  )

const caseOf = (fixture: Fixture): fc.Arbitrary<Case> =>
  operationOf(fixture).chain((operation) =>
    fc.record({
      operation: fc.constant(operation),
      method: fc.oneof(
        { weight: 15, arbitrary: fc.constant(operation.method) },
        { weight: 1, arbitrary: fc.constantFrom(...EXTRA_METHODS) }
      ),
      pathValues: fc.tuple(...operation.params.map((param) => fc.tuple(pathValue(fixture.ids, param), fc.boolean()))),
      query: queryPairs(fixture.ids),
      body: bodySpec,
      headers: headerSpec
    })
  )

// ---------------------------------------------------------------------------------------------
// Sending and checking

/** The request a case describes, ready for platform.request. */
const build = (fixture: Fixture, platform: TestPlatform, fuzz: Case) => {
  let index = 0
  const path = fuzz.operation.template.replace(/\{[^}]+\}/g, () => {
    const [value, raw] = fuzz.pathValues[index++]!
    return encodeSegment(value, raw)
  })
  const query = fuzz.query
    .map(([key, value, raw]) =>
      raw ? `${wellFormed(key).replace(/[#&=]/g, "")}=${wellFormed(value).replace(/[#&]/g, "")}` : `${encode(key)}=${encode(value)}`
    )
    .join("&")
  const url = query === "" ? path : `${path}?${query}`

  const headers: Record<string, string> = {}
  const { key: keyKind, program: programKind, idempotency } = fuzz.headers
  const key = keyKind === "admin" ? platform.org.api_key : keyKind === "viewer" ? fixture.viewerKey : undefined
  if (keyKind === "junk") headers.authorization = `Bearer ${fuzz.headers.junkKey}`
  const program =
    programKind === "default"
      ? platform.org.program_id
      : programKind === "second"
        ? fixture.programs[1]!
        : programKind === "other"
          ? fixture.otherProgram
          : programKind === "unknown"
            ? uuid()
            : programKind === "junk"
              ? fuzz.headers.junkProgram
              : null
  if (idempotency === "uuid") headers["idempotency-key"] = uuid()
  // A few keys shared by all requests: replays (of stored errors too) and 409s for other requests.
  if (idempotency === "reused") headers["idempotency-key"] = REUSED_IDEMPOTENCY_KEYS[fuzz.operation.params.length % 2]!
  if (idempotency === "junk") headers["idempotency-key"] = fuzz.headers.junkIdempotency

  let rawBody: string | undefined
  let type: string | undefined
  const spec = fuzz.body
  if (spec.kind !== "none" && fuzz.method !== "GET" && fuzz.method !== "HEAD") {
    type = spec.contentType
    if (spec.kind === "raw") rawBody = expandBig(spec.text)
    else {
      const base = fixture.bodies[`${fuzz.operation.method} ${fuzz.operation.template}`] ?? {}
      rawBody = spec.kind === "mutated" ? mutate(base, spec.mutations) : (JSON.stringify(spec.value) ?? "null")
    }
  }
  // OAuth protocol endpoints take forms (docs/oauth.md): a mutated form body, mostly with the form type.
  // A body nested too deep for this process's JSON (the "deep" token) is sent as it is.
  const form = isOAuthProtocol(fuzz.operation.template) && spec.kind === "mutated" && rawBody !== undefined ? asForm(rawBody) : undefined
  if (form !== undefined) {
    rawBody = form
    if (type === JSON_TYPE) type = FORM_TYPE
  }
  if (type !== undefined) headers["content-type"] = type
  return { method: fuzz.method, url, options: { key, program, rawBody, headers } }
}

/** A JSON object body as a form, or undefined when it is not one (or nests past this process's stack). */
const asForm = (text: string): string | undefined => {
  try {
    const value: unknown = JSON.parse(text)
    if (typeof value !== "object" || value === null) return undefined
    const form = new URLSearchParams()
    for (const [name, field] of Object.entries(value as Record<string, unknown>)) {
      form.append(name, wellFormed(typeof field === "string" ? field : (JSON.stringify(field) ?? "")))
    }
    return form.toString()
  } catch {
    return undefined
  }
}

/** A response body safe to print: never a reveal's card data, and bounded. */
const printable = (url: string, response: TestResponse) =>
  response.status < 300 && /reveal|search-by-pan|embed/.test(url) ? "<redacted>" : response.text.slice(0, 500)

/** The invariants of every response (docs/api.md#errors). */
const check = (method: string, url: string, response: TestResponse) => {
  const where = `${method} ${url.slice(0, 300)} → ${response.status}: ${printable(url, response)}`
  if (response.status >= 500) throw new Error(`Server error for ${where}`)
  const requestId = response.headers.get("request-id")
  if (requestId === null || !/^[0-9a-f-]{36}$/.test(requestId)) throw new Error(`No Request-Id for ${where}`)
  // The OAuth protocol endpoints answer in OAuth's format (docs/oauth.md); routing, body limits
  // and NUL refusals before them are still the envelope.
  if (isOAuthProtocol(url) && response.status >= 300 && response.body?.error?.request_id === undefined && method !== "HEAD") {
    const oauthAnswer =
      (response.status === 302 && response.headers.get("location") !== null) ||
      ((response.status === 400 || response.status === 503) && response.headers.get("content-type")?.includes("text/html")) ||
      ((response.status === 400 || response.status === 401) &&
        typeof response.body?.error === "string" &&
        typeof response.body?.error_description === "string")
    if (!oauthAnswer) throw new Error(`Not an OAuth answer for ${where}`)
    return
  }
  // HEAD carries no body to hold an envelope.
  if (response.status >= 300 && method !== "HEAD") {
    try {
      const error = expectEnvelope(response, response.status)
      if (error.request_id !== requestId) throw new Error("request_id differs from Request-Id")
      if (typeof error.type !== "string" || typeof error.code !== "string") throw new Error("type or code not a string")
      if (error.param !== null && typeof error.param !== "string") throw new Error("param neither string nor null")
    } catch (cause) {
      throw new Error(`Not the envelope (${(cause as Error).message}) for ${where}`)
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Fixture: real resources created through the API

const created = async (response: Promise<TestResponse>) => {
  const result = await response
  if (result.status !== 200) throw new Error(`Fixture setup failed: ${result.status} ${result.text}`)
  return result.body
}

const setUp = async (platform: TestPlatform): Promise<Fixture> => {
  const post = (path: string, body: unknown, program: string | null = platform.org.program_id) =>
    created(platform.request("POST", path, { body, program }))
  const get = (path: string) => created(platform.request("GET", path))

  const second = await post("/v1/programs", { name: "Fuzz second" }, null)
  const other = await platform.createOrganization("Fuzz other")
  const viewer = await post("/v1/api-keys", { name: "fuzz viewer", role: "viewer" }, null)
  const revocable = await post("/v1/api-keys", { name: "fuzz revocable", role: "developer" }, null)

  const wallet = await post("/v1/wallets", { holder: { name: "Fuzz Holder", email: "fuzz@example.com" } })
  const peer = await post("/v1/wallets", { holder: { name: "Fuzz Peer" } })
  const funding = await post("/v1/transfers", {
    paymentRail: "fednow_instant",
    amount: 100_000,
    currency: "USD",
    to_financial_account_id: wallet.financial_account_id
  })
  const pending = await post("/v1/transfers", {
    paymentRail: "ach_same_day",
    amount: 500,
    currency: "USD",
    from_financial_account_id: wallet.financial_account_id
  })
  const book = await post("/v1/transfers", {
    paymentRail: "book",
    amount: 100,
    currency: "USD",
    from_financial_account_id: wallet.financial_account_id,
    to_financial_account_id: peer.financial_account_id
  })
  const card = await post("/v1/cards", { wallet_id: wallet.id, type: "VIRTUAL" })
  // Several of each, so that closing or deleting one early leaves others to reach deeper code.
  const moreCards = await Promise.all([1, 2, 3].map(() => post("/v1/cards", { wallet_id: wallet.id, type: "VIRTUAL" })))
  const closed = await post("/v1/cards", { wallet_id: peer.id, type: "PHYSICAL" })
  await post(`/v1/cards/${closed.id}/close`, undefined)
  const authorization = await post("/v1/simulate/authorizations", { card_id: card.id, amount: 250, mcc: "5411" })
  // Connection refused at once: resend's synchronous delivery fails fast.
  const hookUrl = "http://127.0.0.1:1/fuzz"
  const subscription = await post("/v1/webhook-subscriptions", { url: hookUrl, event_types: ["card.created", "wallet.created"] })
  const moreSubscriptions = await Promise.all(
    [1, 2].map(() => post("/v1/webhook-subscriptions", { url: hookUrl, event_types: ["card.created"] }))
  )
  const authorizationEndpoint = await post("/v1/authorization-endpoints", { url: hookUrl, timeout_ms: 100 })
  const clientBody = { name: "Fuzz app", type: "confidential", scopes: ["read", "write"], redirect_uris: [OAUTH_REDIRECT_URI] }
  const oauthClients = await Promise.all([1, 2, 3].map(() => post("/v1/oauth-clients", clientBody, null)))
  const interactions = await Promise.all(
    oauthClients.map(async (client) => {
      const query = new URLSearchParams({
        response_type: "code",
        client_id: client.client_id,
        redirect_uri: OAUTH_REDIRECT_URI,
        code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        code_challenge_method: "S256",
        state: "fuzz"
      })
      const response = await requestManual(platform, "GET", `/oauth/authorize?${query}`, {})
      return new URL(response.headers.get("location")!).searchParams.get("interaction")!
    })
  )
  const events = (await get("/v1/events?page_size=5")).data as Array<{ id: string; created_at: string }>
  const settlement = (await get("/v1/financial-accounts?kind=settlement")).data as Array<{ id: string }>

  const ids: IdPool = {
    program_id: [platform.org.program_id, second.id, other.program_id],
    api_key_id: [revocable.id, viewer.id],
    wallet_id: [wallet.id, peer.id],
    financial_account_id: [wallet.financial_account_id, peer.financial_account_id, ...settlement.map((a) => a.id)],
    transfer_id: [funding.id, pending.id, book.id],
    transaction_id: [funding.transaction_id, book.transaction_id, authorization.id],
    card_id: [card.id, closed.id, ...moreCards.map((c) => c.id as string)],
    event_id: events.map((event) => event.id),
    webhook_subscription_id: [subscription.id, ...moreSubscriptions.map((s) => s.id as string)],
    authorization_endpoint_id: [authorizationEndpoint.id],
    code: ["not_found", "invalid_request", "insufficient_funds", "__proto__", "constructor"],
    oauth_client_id: oauthClients.map((client) => client.id as string),
    interaction_id: interactions
  }
  const begin = events.at(-1)!.created_at
  const end = events[0]!.created_at
  const subscriptionBody = { url: hookUrl, description: "fuzz", event_types: ["card.created"], disabled: false }
  const bodies: Record<string, Record<string, unknown>> = {
    "POST /v1/programs": { name: "Fuzz program", bin: "400000" },
    "POST /v1/api-keys": { name: "fuzz key", role: "viewer", program_ids: [second.id], pan_reveal: false },
    "POST /v1/wallets": { holder: { name: "Fuzz", email: "f@example.com" }, currency: "USD", tag: "fuzz" },
    "PATCH /v1/wallets/{wallet_id}": { tag: "fuzz", metadata: { fuzz: "yes" } },
    "POST /v1/transfers": {
      paymentRail: "book",
      amount: 1,
      currency: "USD",
      from_financial_account_id: wallet.financial_account_id,
      to_financial_account_id: peer.financial_account_id,
      transaction_id: funding.transaction_id,
      description: "fuzz"
    },
    "POST /v1/transfers/batch": {
      transfers: [
        {
          paymentRail: "book",
          amount: 1,
          currency: "USD",
          from_financial_account_id: wallet.financial_account_id,
          to_financial_account_id: peer.financial_account_id
        },
        { payment_rail: "ach_same_day", amount: 2, currency: "USD", to_financial_account_id: wallet.financial_account_id }
      ],
      atomic: false
    },
    "POST /v1/cards": {
      wallet_id: wallet.id,
      type: "VIRTUAL",
      allowedMccCodes: ["5411"],
      blocked_mcc_codes: ["7995"],
      spendingPeriod: { interval: "DAILY", amount: 10_000 }
    },
    "POST /v1/cards/search-by-pan": { pan: "4000000000000002" },
    "POST /v1/simulate/authorizations": { card_id: card.id, amount: 100, currency: "USD", mcc: "5411", merchant_name: "Fuzz shop" },
    "POST /v1/webhook-subscriptions": subscriptionBody,
    "PATCH /v1/webhook-subscriptions/{webhook_subscription_id}": subscriptionBody,
    "POST /v1/webhook-subscriptions/{webhook_subscription_id}/replay": { begin, end },
    "POST /v1/events/{event_id}/resend": { subscription_id: subscription.id },
    "POST /v1/authorization-endpoints": { url: hookUrl, timeout_ms: 100, timeout_decision: "APPROVE" },
    "PATCH /v1/authorization-endpoints/{authorization_endpoint_id}": {
      url: hookUrl,
      timeout_ms: 5000,
      timeout_decision: "DECLINE",
      disabled: false
    },
    "POST /v1/oauth-clients": clientBody,
    "POST /v1/oauth/interactions/{interaction_id}/grant": { program_ids: [platform.org.program_id], scopes: ["read"] },
    "POST /oauth/token": {
      grant_type: "authorization_code",
      code: "ac_fuzz",
      code_verifier: "a".repeat(43),
      redirect_uri: OAUTH_REDIRECT_URI,
      client_id: oauthClients[0].client_id,
      client_secret: oauthClients[0].client_secret
    },
    "POST /oauth/revoke": { token: "rt_fuzz", client_id: oauthClients[0].client_id, client_secret: oauthClients[0].client_secret },
    "POST /oauth/introspect": { token: "at_fuzz", client_id: oauthClients[0].client_id, client_secret: oauthClients[0].client_secret }
  }

  const spec = (await get("/openapi.json")) as { paths: Record<string, Record<string, unknown>> }
  const operations: Array<Operation> = []
  for (const [template, item] of Object.entries(spec.paths)) {
    for (const method of Object.keys(item)) {
      if (!["get", "post", "put", "patch", "delete"].includes(method)) continue
      const params = [...template.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]!)
      operations.push({ method: method.toUpperCase(), template, params })
    }
  }
  // The routes the document leaves out (meta pages) are part of the API surface too.
  operations.push({ method: "GET", template: "/docs/errors/{code}", params: ["code"] })
  operations.push({ method: "GET", template: "/v1/cards/embed", params: [] })

  return {
    operations,
    ids,
    bodies,
    programs: [platform.org.program_id, second.id],
    otherProgram: other.program_id,
    viewerKey: viewer.secret
  }
}

// ---------------------------------------------------------------------------------------------

describe.each(STORE_KINDS)("fuzzing the HTTP API on %s", (kind) => {
  let platform: TestPlatform
  let fixture: Fixture
  beforeAll(async () => {
    platform = await startPlatform(kind, { webhookTimeoutMs: 1000, oauthInteractionUrl: OAUTH_INTERACTION_URL })
    fixture = await setUp(platform)
  })
  afterAll(async () => {
    await platform?.close()
  })

  it("covers every operation of the served OpenAPI document", () => {
    const listed = new Set(fixture.operations.map((operation) => `${operation.method} ${operation.template}`))
    // A sample of each group, so a broken document cannot silently shrink the fuzzed surface.
    for (const expected of [
      "POST /v1/programs",
      "DELETE /v1/api-keys/{api_key_id}",
      "GET /v1/financial-accounts/{financial_account_id}/book-transfers",
      "POST /v1/cards/{card_id}/reveal",
      "PATCH /v1/webhook-subscriptions/{webhook_subscription_id}",
      "POST /v1/events/{event_id}/resend",
      "PATCH /v1/authorization-endpoints/{authorization_endpoint_id}",
      "POST /v1/simulate/transfers/{transfer_id}/settle",
      "POST /v1/transfers/batch",
      "POST /v1/oauth-clients",
      "POST /v1/oauth/interactions/{interaction_id}/grant",
      "GET /oauth/authorize",
      "POST /oauth/token",
      "POST /oauth/revoke",
      "POST /oauth/introspect",
      "GET /.well-known/oauth-authorization-server"
    ])
      expect(listed).toContain(expected)
    expect(fixture.operations.length).toBeGreaterThan(35)
  })

  it(
    "never answers 5xx, and every non-2xx is the envelope",
    async () => {
      const outcomes = new Map<string, number>()
      // Error statuses answered by a route of the document, per "method template" as the document spells it.
      const routes = makeRouteTable(IssuingApi)
      const answered = new Map<string, Set<string>>()
      await fc.assert(
        fc.asyncProperty(caseOf(fixture), async (fuzz) => {
          const { method, options, url } = build(fixture, platform, fuzz)
          const response = isOAuthProtocol(url)
            ? await requestManual(platform, method, url, options)
            : await platform.request(method, url, options)
          check(method, url, response)
          const outcome = response.status < 300 ? "2xx" : `${response.status} ${response.body?.error?.code ?? ""}`
          outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1)
          const match = routes.match(method, new URL(url, "http://localhost").pathname)
          if (response.status >= 400 && match._tag === "Matched" && match.template.startsWith("/v1/")) {
            // HEAD is answered by the GET route (the route table matches it so).
            const operation = `${method === "HEAD" ? "get" : method.toLowerCase()} ${match.template.replace(/:(\w+)/g, "{$1}")}`
            answered.set(operation, (answered.get(operation) ?? new Set()).add(String(response.status)))
          }
        }),
        { seed: SEED, numRuns: RUNS[kind], verbose: 0 }
      )
      // The document (and the Effect client, which decodes by it) declares every status the routes
      // answered: 408 and 431 come from Node before any route, so a matched route never gives them.
      const document = (await platform.request("GET", "/openapi.json", { key: undefined, program: null })).body
      const undeclared = [...answered].flatMap(([operation, statuses]) => {
        const [method, template] = operation.split(" ") as [string, string]
        const declared = Object.keys(document.paths[template]?.[method]?.responses ?? {})
        return [...statuses].filter((status) => !declared.includes(status)).map((status) => `${operation} ${status}`)
      })
      expect(undeclared).toEqual([])
      expect(answered.size).toBeGreaterThan(20)
      expect((await platform.request("GET", "/v1/programs")).status).toBe(200)
      // The fuzzing reached the operations, not only the gates in front of them (say, every
      // request 401 because a fuzzed call revoked the key).
      const successes = outcomes.get("2xx") ?? 0
      expect(successes, JSON.stringify([...outcomes])).toBeGreaterThan(RUNS[kind] / 10)
      for (const code of ["400 invalid_request", "404 not_found", "409 conflict", "405 method_not_allowed", "401 authentication_error"]) {
        expect(outcomes.get(code) ?? 0, `${code} in ${JSON.stringify([...outcomes])}`).toBeGreaterThan(0)
      }
    },
    timeoutFor(RUNS[kind])
  )

  it("never answers 5xx to junk path ids sent raw to every route at once, concurrently", async () => {
    const paths = fixture.operations.flatMap((operation) =>
      JUNK_STRINGS.slice(0, 12).map((junk) => ({
        method: operation.method,
        url: operation.template.replace(/\{[^}]+\}/g, () => encodeSegment(junk, true) || "x")
      }))
    )
    const responses = await Promise.all(
      paths.map(async ({ method, url }) => ({
        method,
        url,
        response: await (isOAuthProtocol(url) ? requestManual.bind(null, platform) : platform.request)(method, url, {
          rawBody: method === "GET" ? undefined : '{"amount": -1e400}',
          headers: { "content-type": "application/json" }
        })
      }))
    )
    for (const { method, response, url } of responses) check(method, url, response)
    expect((await platform.request("GET", "/v1/programs")).status).toBe(200)
    // 3–30 s (load 7 to 20–25): twelve requests per operation, all at once.
  }, 120_000)
})
