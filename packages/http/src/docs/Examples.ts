import type { OpenApi } from "@effect/platform"
import { ERROR_CODES, type ErrorCode } from "../errors.js"

/**
 * Examples for the OpenAPI document (docs/api.md#openapi): each operation's success answer, built
 * from the answer's own schema with the values a reader expects of each field (an amount in minor
 * units, a UUID, an RFC 3339 time), and each declared error status with an example envelope per
 * code the operation answers. Built from the schemas rather than written per operation, so a new
 * field or operation has its example; the generators test validates every example against its
 * schema.
 */

/** One fixed instant for every time of the examples. */
const EXAMPLE_TIME = "2026-05-02T10:15:30.000Z"
/** The request id of every example error. */
const EXAMPLE_REQUEST_ID = "0196a0b2-7c3e-7d41-9a55-2f1e4c8b9a99"

/** Values of strings by property name, for the fields whose form a generic value would break. */
const STRINGS: Readonly<Record<string, string>> = {
  currency: "USD",
  mcc: "5411",
  country: "US",
  last_four: "4242",
  bin: "400000",
  pan: "4000001234567899",
  number: "4000001234567899",
  cvv: "123",
  authorization_code: "A1B2C3",
  response_code: "00",
  email: "ada@example.com",
  holder_email: "ada@example.com",
  phone_number: "+14155550123",
  name: "Ada Lovelace",
  first_name: "Ada",
  last_name: "Lovelace",
  description: "Team lunch",
  url: "https://example.com/webhooks",
  embed_url: "https://issuing.example.com/v1/cards/embed?session_token=est_2Jd8",
  redirect_uri: "https://app.example.com/callback",
  redirect_to: "https://app.example.com/callback?code=ac_7Qm2&state=xyz",
  doc_url: "https://issuing.example.com/docs/errors/invalid_request",
  secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  client_secret: "cs_9sJd2kLq8xTq",
  session_token: "est_2Jd8q7Rk1",
  tag: "customer_42",
  scope_tag: "customer_42",
  line1: "1 Main St",
  line2: "Suite 100",
  city: "San Francisco",
  state: "CA",
  postal_code: "94105",
  date: "2026-05-02",
  begin: "2026-05-01T00:00:00Z",
  end: "2026-05-01T23:59:59Z",
  network_message_id: "msg-0001",
  network_transaction_id: "ntx-0001",
  acceptor_id: "ACQ-000123",
  merchant_name: "Corner Cafe",
  client_id: "oc_5b1f0c2a",
  client_ip: "203.0.113.7",
  return_code: "R01",
  return_reason: "Insufficient funds",
  reference: "kyc_case_8841",
  response_body: '{"ok":true}',
  explanation: "I did not make this purchase.",
  scope: "read write",
  message: "A sentence for a human."
}

/** Values of strings by the pattern they must match, for a field the table above does not name. */
const PATTERNS: Readonly<Record<string, string>> = {
  "^\\d{4}$": "5411",
  "^[A-Z]{3}$": "USD",
  "^[A-Z]{2}$": "US"
}

/** Values of whole numbers by property name; others are their minimum, or 1. */
const INTEGERS: Readonly<Record<string, number>> = {
  exp_month: 12,
  exp_year: 2028,
  day: 10,
  month: 12,
  year: 1990,
  timeout_ms: 2000,
  response_code: 200,
  total_count: 1,
  expires_in: 900,
  count: 3,
  events_queued: 4
}

/** A UUID per property name: the same field has the same id in every example. */
const uuidFor = (name: string): string => {
  let hash = 0
  for (const character of name) hash = (hash * 31 + character.charCodeAt(0)) >>> 0
  return `0196a0b2-7c3e-7d41-9a55-${hash.toString(16).padStart(12, "0").slice(-12)}`
}

/** The component a `$ref` names. */
const resolve = (spec: OpenApi.OpenAPISpec, ref: string): any =>
  (spec.components.schemas as Record<string, unknown>)[ref.slice("#/components/schemas/".length)]

/** An example value of `schema`, for a property called `name`; `depth` bounds recursive schemas. */
export const exampleOf = (spec: OpenApi.OpenAPISpec, schema: any, name = "", depth = 0): unknown => {
  if (schema === null || typeof schema !== "object" || depth > 12) return null
  if (schema.example !== undefined) return schema.example
  if (schema.$ref !== undefined) return exampleOf(spec, resolve(spec, schema.$ref), name, depth + 1)
  if (schema.const !== undefined) return schema.const
  if (Array.isArray(schema.enum)) return schema.enum[0]
  const members: Array<any> | undefined = schema.oneOf ?? schema.anyOf
  if (members !== undefined) {
    const member = members.find((candidate) => candidate.type !== "null") ?? members[0]
    return exampleOf(spec, member, name, depth + 1)
  }
  if (Array.isArray(schema.allOf)) return exampleOf(spec, schema.allOf[0], name, depth + 1)
  switch (schema.type) {
    case "string":
      if (STRINGS[name] !== undefined) return STRINGS[name]
      if (schema.pattern !== undefined && PATTERNS[schema.pattern] !== undefined) return PATTERNS[schema.pattern]
      if (schema.format === "uuid") return uuidFor(name)
      if (schema.format === "date-time") return EXAMPLE_TIME
      if (schema.format === "uri") return "https://example.com/"
      return name === "" ? "text" : name.replaceAll("_", " ")
    case "integer":
    case "number":
      return INTEGERS[name] ?? (/amount|balance|debits|credits/.test(name) ? 2500 : (schema.minimum ?? 1))
    case "boolean":
      return false
    case "null":
      return null
    case "array": {
      const item = exampleOf(spec, schema.items ?? {}, name.replace(/s$/, ""), depth + 1)
      return Array.from({ length: Math.max(1, schema.minItems ?? 1) }, () => item)
    }
    case "object": {
      const value: Record<string, unknown> = {}
      for (const [property, propertySchema] of Object.entries((schema.properties ?? {}) as Record<string, unknown>)) {
        value[property] = exampleOf(spec, propertySchema, property, depth + 1)
      }
      if (schema.properties === undefined && schema.additionalProperties !== undefined) value.order_ref = "A-1001"
      return value
    }
    default:
      return null
  }
}

/** What an operation is, for its error examples. */
export interface OperationFacts {
  readonly method: string
  readonly operation: any
  readonly programScoped: boolean
  /** The 422 codes its handler answers (its BusinessRules annotation), or undefined when not stated. */
  readonly businessRules: ReadonlyArray<string> | undefined
}

/** The first sentence of a code's description (its doc page says the rest). */
const firstSentence = (text: string) => text.slice(0, text.indexOf(". ") + 1 || undefined)

/** The parameter a business rule names, as its catalogue entry states it ("param: amount"). */
const ruleParam = (code: string): string | null => /param: ([a-z_]+)/.exec(ERROR_CODES[code as ErrorCode].description)?.[1] ?? null

/** The codes one declared error status of an operation is answered with, each with its message and param. */
const codesAt = (status: string, facts: OperationFacts): Array<{ code: string; message: string; param: string | null }> => {
  const parameters: Array<any> = facts.operation.parameters ?? []
  const pathId = parameters.find((parameter) => parameter.in === "path")?.name ?? null
  const body = facts.operation.requestBody?.content?.["application/json"]?.schema
  const bodyField: string | null = body?.required?.[0] ?? Object.keys(body?.properties ?? {})[0] ?? null
  const queryField: string | null = parameters.find((parameter) => parameter.in === "query")?.name ?? null
  switch (status) {
    case "400": {
      const param = bodyField ?? queryField
      return [{ code: "invalid_request", message: param === null ? "The request is malformed." : `Invalid value for '${param}'.`, param }]
    }
    case "401":
      return [{ code: "authentication_error", message: "The API key is missing, unknown or revoked.", param: null }]
    case "403":
      return facts.programScoped
        ? [{ code: "permission_denied", message: "This key cannot use the program named by X-Program-ID.", param: "X-Program-ID" }]
        : [{ code: "permission_denied", message: "This key's role does not allow the operation.", param: null }]
    case "404":
      return [{ code: "not_found", message: "No such object, or it is not visible to this key.", param: pathId }]
    case "409":
      return facts.method === "post"
        ? [
            {
              code: "conflict",
              message: "The Idempotency-Key was already used with a different request.",
              param: "Idempotency-Key"
            }
          ]
        : [{ code: "conflict", message: "The operation is incompatible with the object's state.", param: pathId }]
    case "413":
      return [{ code: "request_too_large", message: "The request body exceeds 1 MiB.", param: null }]
    case "422":
      return (facts.businessRules ?? []).map((code) => ({
        code,
        message: firstSentence(ERROR_CODES[code as ErrorCode].description),
        param: ruleParam(code)
      }))
    case "429":
      return [{ code: "rate_limited", message: "Too many requests for this caller. Retry after the time in Retry-After.", param: null }]
    case "500":
      return [{ code: "internal_error", message: "An internal error occurred. Retry with the same Idempotency-Key.", param: null }]
    default:
      return []
  }
}

/** Whether a response's JSON body is the error envelope (HttpApi's form of a described one: `allOf` of the one `$ref`). */
const isEnvelope = (response: any) => {
  const schema = response?.content?.["application/json"]?.schema
  const ref = schema?.$ref ?? (schema?.allOf?.length === 1 ? schema.allOf[0].$ref : undefined)
  return ref === "#/components/schemas/ErrorEnvelope"
}

/**
 * Gives an operation a success example (each 2xx JSON answer) and, for each declared error status,
 * an example envelope per code it answers with. A 422 whose operation states no rules of its own
 * (an empty BusinessRules) is left out: it is declared only for a handler shared with one that has.
 */
export const addExamples = (spec: OpenApi.OpenAPISpec, facts: OperationFacts, baseUrl: string): void => {
  const responses = facts.operation.responses as Record<string, any>
  if (facts.businessRules?.length === 0) delete responses["422"]
  for (const [status, response] of Object.entries(responses)) {
    const json = response?.content?.["application/json"]
    if (json === undefined) continue
    if (isEnvelope(response)) {
      const codes = codesAt(status, facts)
      if (codes.length === 0) continue
      json.examples = Object.fromEntries(
        codes.map(({ code, message, param }) => [
          code,
          {
            summary: ERROR_CODES[code as ErrorCode].title,
            value: {
              error: {
                type: ERROR_CODES[code as ErrorCode].type,
                code,
                message,
                param,
                request_id: EXAMPLE_REQUEST_ID,
                doc_url: `${baseUrl}/docs/errors/${code}`
              }
            }
          }
        ])
      )
    } else if (json.example === undefined && json.examples === undefined && json.schema !== undefined) {
      json.example = exampleOf(spec, json.schema)
    }
  }
  const html = responses["200"]?.content?.["text/html"]
  if (html !== undefined && html.example === undefined) html.example = "<!doctype html><html>…</html>"
}
