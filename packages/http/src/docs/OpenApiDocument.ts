import { HttpApi, OpenApi } from "@effect/platform"
import { ATTEMPT_STATUSES, DeclineReason, type Environment, EVENT_TYPES, SpendingInterval, SUBSCRIBABLE_EVENT_TYPES } from "@issuing/core"
import * as fs from "node:fs"
import { Context, Option } from "effect"
import { IssuingApi } from "../Api.js"
import { BusinessRules } from "../api/Annotations.js"
import { ProgramScoped } from "../api/Security.js"
import { ERROR_CODES } from "../errors.js"
import { isSandboxOnly } from "../middleware/RouteTable.js"
import { addExamples } from "./Examples.js"
import { makeGeneratorReady } from "./GeneratorReadyDocument.js"
import { OAUTH_PATHS } from "./OAuthOpenApi.js"
import { OPERATION_DOCS } from "./OperationDocs.js"

/**
 * The closed sets some fields are decoded from by a refinement or by hand (so Effect's JSON Schema
 * says only "string"), by the property or query parameter that takes them: the document lists
 * their values as an `enum`, as Schema.Literal fields already are.
 */
const CLOSED_SETS: Readonly<Record<string, ReadonlyArray<string>>> = {
  interval: SpendingInterval.literals,
  decline_reason: DeclineReason.literals,
  event_types: SUBSCRIBABLE_EVENT_TYPES,
  allowed_event_types: SUBSCRIBABLE_EVENT_TYPES,
  disabled: ["true", "false", "1", "0"],
  response_type: ["code"],
  code_challenge_method: ["S256"]
}
/** Query parameters whose closed set depends on the list: `type` of events, `status` of attempts. */
const QUERY_SETS: Readonly<Record<string, Readonly<Record<string, ReadonlyArray<string>>>>> = {
  "/v1/events": { type: EVENT_TYPES },
  "/v1/webhook-attempts": { status: ATTEMPT_STATUSES },
  "/v1/webhook-portal/attempts": { status: ATTEMPT_STATUSES }
}

/** Gives a string schema (or the string member of a nullable one, or an array's items) its values. */
const close = (schema: any, values: ReadonlyArray<string>): void => {
  if (schema === null || typeof schema !== "object") return
  if (schema.type === "string" && schema.enum === undefined) schema.enum = [...values]
  if (schema.type === "array") close(schema.items, values)
  for (const member of schema.anyOf ?? []) close(member, values)
}

/** Every property of every schema in `node` named in CLOSED_SETS gets its enum. */
const closeProperties = (node: unknown): void => {
  if (node === null || typeof node !== "object") return
  const properties = (node as { properties?: Record<string, unknown> }).properties
  if (properties !== undefined && typeof properties === "object") {
    for (const [name, schema] of Object.entries(properties)) if (name in CLOSED_SETS) close(schema, CLOSED_SETS[name]!)
  }
  for (const value of Object.values(node)) closeProperties(value)
}

/** The version of @issuing/http, read from its package.json beside the built or source folder; null in a bundle without it. */
const packageVersion = (): string | null => {
  for (const relative of ["../../package.json", "../package.json"]) {
    try {
      const manifest = JSON.parse(fs.readFileSync(new URL(relative, import.meta.url), "utf8"))
      if (manifest.name === "@issuing/http" && typeof manifest.version === "string") return manifest.version
    } catch {
      // not there: the next candidate
    }
  }
  return null
}

/** One document per base URL and environment: an instance serves its own `servers` (several may share a process). */
const documents = new Map<string, OpenApi.OpenAPISpec>()

/** The operation ids of the sandbox-only endpoints (OpenApi.fromApi's: `group.endpoint`). */
const sandboxOnlyOperations = (): ReadonlySet<string> => {
  const ids = new Set<string>()
  HttpApi.reflect(IssuingApi, {
    onGroup() {},
    onEndpoint({ endpoint, group, mergedAnnotations }) {
      if (isSandboxOnly(mergedAnnotations)) ids.add(`${group.identifier}.${endpoint.name}`)
    }
  })
  return ids
}

/** The operation ids of the program-scoped endpoints: each needs X-Program-ID. */
const programScopedOperations = (): ReadonlySet<string> => {
  const ids = new Set<string>()
  HttpApi.reflect(IssuingApi, {
    onGroup() {},
    onEndpoint({ endpoint, group, middleware }) {
      if (middleware.has(ProgramScoped as any)) ids.add(`${group.identifier}.${endpoint.name}`)
    }
  })
  return ids
}

/** The 422 codes each endpoint states (its BusinessRules annotation), by operation id. */
const businessRulesByOperation = (): ReadonlyMap<string, ReadonlyArray<string>> => {
  const rules = new Map<string, ReadonlyArray<string>>()
  HttpApi.reflect(IssuingApi, {
    onGroup() {},
    onEndpoint({ endpoint, group, mergedAnnotations }) {
      const codes = Context.getOption(mergedAnnotations, BusinessRules)
      if (Option.isSome(codes)) rules.set(`${group.identifier}.${endpoint.name}`, codes.value)
    }
  })
  return rules
}

/**
 * Production's document: without the sandbox-only operations, their paths and the tags left with
 * no operation, as the server answers them there exactly as unknown URLs (docs/api.md#errors).
 */
const withoutSandboxOnly = (spec: OpenApi.OpenAPISpec): void => {
  const sandboxOnly = sandboxOnlyOperations()
  const tagsInUse = new Set<string>()
  for (const [path, item] of Object.entries(spec.paths) as Array<[string, Record<string, any>]>) {
    for (const [method, operation] of Object.entries(item)) {
      if (operation?.operationId === undefined) continue
      if (sandboxOnly.has(operation.operationId)) delete item[method]
      else for (const tag of operation.tags ?? []) tagsInUse.add(tag)
    }
    if (!Object.values(item).some((operation) => operation?.operationId !== undefined)) delete spec.paths[path]
  }
  spec.tags = spec.tags.filter((tag) => tagsInUse.has(tag.name))
}

/**
 * The OpenAPI 3.1 document of the API, generated from the HttpApi definition: each operation's
 * error statuses are those the API declares for it (api-wide, by its group's scope, by the endpoint),
 * each documented as the error envelope (docs/api.md#errors). Added here: the server, the bearer
 * scheme, the OAuth protocol endpoints (described by hand), each operation's summary, description
 * and example (OperationDocs.ts), the values of closed sets, and `info.version` = the package's.
 * Production's leaves the sandbox-only operations out.
 */
export const openApiDocument = (baseUrl: string, environment: Environment = "sandbox"): OpenApi.OpenAPISpec => {
  const cacheKey = `${environment} ${baseUrl}`
  const cached = documents.get(cacheKey)
  if (cached !== undefined) return cached
  // A copy: fromApi returns the one object it caches per API, which every instance would share.
  const spec = structuredClone(OpenApi.fromApi(IssuingApi))
  if (environment === "production") withoutSandboxOnly(spec)
  spec.servers = [{ url: baseUrl }]
  spec.components.securitySchemes = { bearer: { type: "http", scheme: "bearer" } }
  spec.security = [{ bearer: [] }]
  // HttpApi declares its own HttpApiDecodeError as a 400 of every operation and it cannot be taken
  // out; the request pipeline never sends it (a request that does not decode gets the envelope),
  // so the 400 documented is the envelope alone.
  delete spec.components.schemas.HttpApiDecodeError
  delete spec.components.schemas.Issue
  for (const [path, item] of Object.entries(spec.paths)) {
    for (const operation of Object.values(item)) {
      if (operation === undefined) continue
      // /v1/cards/embed authenticates by session_token alone; every other /v1 operation by bearer key.
      operation.security = path.startsWith("/v1/") && path !== "/v1/cards/embed" ? [{ bearer: [] }] : []
      operation.responses[400] = {
        description: "Invalid request",
        content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorEnvelope" } } }
      }
    }
  }
  // The OAuth protocol endpoints answer in OAuth's format, not the envelope (docs/oauth.md).
  Object.assign(spec.paths, structuredClone(OAUTH_PATHS))
  for (const [path, item] of Object.entries(spec.paths)) {
    for (const operation of Object.values(item) as Array<any>) {
      if (operation === undefined) continue
      const doc = OPERATION_DOCS[operation.operationId]
      if (doc !== undefined) {
        operation.summary = doc.summary
        operation.description = doc.description
        const body = operation.requestBody?.content?.["application/json"]
        if (doc.example !== undefined && body !== undefined) body.example = doc.example
      }
      for (const parameter of operation.parameters ?? []) {
        const values = QUERY_SETS[path]?.[parameter.name] ?? CLOSED_SETS[parameter.name]
        if (values !== undefined) close(parameter.schema, values)
      }
    }
  }
  closeProperties(spec.paths)
  closeProperties(spec.components.schemas)
  const programScoped = programScopedOperations()
  makeGeneratorReady(spec, {
    programScoped,
    errorTypes: [...new Set(Object.values(ERROR_CODES).map((doc) => doc.type))]
  })
  const event = spec.components.schemas.Event as any
  if (event?.properties?.type !== undefined) close(event.properties.type, EVENT_TYPES)
  const businessRules = businessRulesByOperation()
  for (const item of Object.values(spec.paths)) {
    for (const [method, operation] of Object.entries(item as Record<string, any>)) {
      if (operation?.responses === undefined) continue
      addExamples(
        spec,
        {
          method,
          operation,
          programScoped: programScoped.has(operation.operationId),
          businessRules: businessRules.get(operation.operationId)
        },
        baseUrl
      )
    }
  }
  spec.info.version = packageVersion() ?? spec.info.version
  spec.info.description =
    "The issuing platform's /v1 API and its OAuth 2.1 endpoints. Rules every operation follows (paging, errors, idempotency): docs/api.md; a reference to read at /docs, the event catalogue at /docs/events."
  documents.set(cacheKey, spec)
  return spec
}
