import { OpenApi } from "@effect/platform"
import { IssuingApi } from "../Api.js"
import { ERROR_CODES } from "../errors.js"
import { OAUTH_PATHS } from "./OAuthOpenApi.js"

const ENVELOPE_SCHEMA = {
  type: "object",
  required: ["error"],
  properties: {
    error: {
      type: "object",
      required: ["type", "code", "message", "param", "request_id", "doc_url"],
      properties: {
        type: { type: "string", description: "error class" },
        code: { type: "string", description: "machine-readable code", enum: Object.keys(ERROR_CODES) },
        message: { type: "string" },
        param: { type: ["string", "null"], description: "the offending parameter or header" },
        request_id: { type: "string", format: "uuid" },
        doc_url: { type: "string", format: "uri" }
      }
    }
  }
}

let cached: unknown

/**
 * The OpenAPI 3.1 document of the API, generated from the HttpApi definition. Failures are
 * documented as the error envelope (docs/api.md#errors, what the request pipeline actually sends),
 * under every status a program-scoped operation can return.
 */
export const openApiDocument = (baseUrl: string): unknown => {
  if (cached !== undefined) return cached
  const spec = OpenApi.fromApi(IssuingApi) as any
  spec.servers = [{ url: baseUrl }]
  spec.components ??= {}
  spec.components.schemas ??= {}
  spec.components.schemas.ApiFailure = ENVELOPE_SCHEMA
  spec.components.schemas.ErrorEnvelope = ENVELOPE_SCHEMA
  spec.components.securitySchemes = { bearer: { type: "http", scheme: "bearer" } }
  spec.security = [{ bearer: [] }]
  const statuses: Record<string, string> = {
    "400": "Invalid request",
    "401": "Authentication failed",
    "403": "Permission denied",
    "404": "Not found",
    "409": "Conflict",
    "422": "Business rule violated",
    "429": "Rate limited",
    "500": "Internal error"
  }
  for (const [path, item] of Object.entries(spec.paths ?? {}) as Array<[string, Record<string, any>]>) {
    for (const operation of Object.values(item)) {
      if (typeof operation !== "object" || operation === null || !("responses" in operation)) continue
      // /v1/cards/embed authenticates by session_token alone; every other /v1 operation by bearer key.
      operation.security = path.startsWith("/v1/") && path !== "/v1/cards/embed" ? [{ bearer: [] }] : []
      for (const [status, description] of Object.entries(statuses)) {
        operation.responses[status] = {
          description,
          content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorEnvelope" } } }
        }
      }
    }
  }
  // The OAuth protocol endpoints answer in OAuth's format, not the envelope (docs/oauth.md).
  Object.assign(spec.paths, OAUTH_PATHS)
  cached = spec
  return spec
}
