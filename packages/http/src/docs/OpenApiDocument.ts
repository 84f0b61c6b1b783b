import { OpenApi } from "@effect/platform"
import { IssuingApi } from "../Api.js"
import { OAUTH_PATHS } from "./OAuthOpenApi.js"

/** One document per base URL: an instance serves its own `servers` (several may share a process). */
const documents = new Map<string, OpenApi.OpenAPISpec>()

/**
 * The OpenAPI 3.1 document of the API, generated from the HttpApi definition: each operation's
 * error statuses are those the API declares for it (api-wide, by its group's scope, by the endpoint),
 * each documented as the error envelope (docs/api.md#errors). Added here: the server, the bearer
 * scheme and the OAuth protocol endpoints, described by hand.
 */
export const openApiDocument = (baseUrl: string): OpenApi.OpenAPISpec => {
  const cached = documents.get(baseUrl)
  if (cached !== undefined) return cached
  // A copy: fromApi returns the one object it caches per API, which every instance would share.
  const spec = structuredClone(OpenApi.fromApi(IssuingApi))
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
  Object.assign(spec.paths, OAUTH_PATHS)
  documents.set(baseUrl, spec)
  return spec
}
