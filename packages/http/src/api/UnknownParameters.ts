import type { HttpApi, HttpApiEndpoint, HttpApiGroup } from "@effect/platform"

/**
 * Decoding that refuses a property its schema does not declare, at any depth (`spending_period.intervall`).
 * A parse-options annotation is how Effect's decoding takes options from the schema itself: HttpApi
 * decodes payloads and url params with `Schema.decodeUnknown(schema)` and no options, and the
 * annotation reaches every nested struct through the options handed down.
 */
const REFUSE_EXCESS = { parseOptions: { onExcessProperty: "error" } } as const

/**
 * Whether an endpoint refuses what it does not understand: every `/v1` operation (docs/api.md#requests-and-responses).
 * The OAuth protocol endpoints (`/oauth/*`, `/.well-known/…`) are outside `/v1` and keep ignoring
 * unrecognized parameters, as RFC 6749 §3.1 requires; the public documents take no input.
 */
const isStrict = (endpoint: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps) => endpoint.path.startsWith("/v1/")

/**
 * Whether any query parameter on this endpoint is unknown: a strict one that declares no query.
 * The request pipeline refuses those (an empty url-params schema would make the derived Effect
 * client send one with every call).
 */
export const refusesEveryQueryParameter = (endpoint: HttpApiEndpoint.HttpApiEndpoint.Any) =>
  isStrict(endpoint as HttpApiEndpoint.HttpApiEndpoint.AnyWithProps) &&
  (endpoint as HttpApiEndpoint.HttpApiEndpoint.AnyWithProps).urlParamsSchema._tag === "None"

/**
 * Whether any body field on this endpoint is unknown: a strict one that declares no payload (freeze,
 * expire, reveal, rotate-secret, test, settle, …). The request pipeline refuses those; a payload
 * schema of no fields would make the derived client send a body with every call and the OpenAPI
 * document show one.
 */
export const refusesEveryBodyField = (endpoint: HttpApiEndpoint.HttpApiEndpoint.Any) =>
  isStrict(endpoint as HttpApiEndpoint.HttpApiEndpoint.AnyWithProps) &&
  (endpoint as HttpApiEndpoint.HttpApiEndpoint.AnyWithProps).payloadSchema._tag === "None"

const strictEndpoint = (endpoint: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps): HttpApiEndpoint.HttpApiEndpoint.AnyWithProps => {
  const { payloadSchema, urlParamsSchema } = endpoint
  const withPayload = payloadSchema._tag === "Some" ? endpoint.setPayload(payloadSchema.value.annotations(REFUSE_EXCESS)) : endpoint
  return (
    urlParamsSchema._tag === "Some" ? withPayload.setUrlParams(urlParamsSchema.value.annotations(REFUSE_EXCESS) as never) : withPayload
  ) as HttpApiEndpoint.HttpApiEndpoint.AnyWithProps
}

/**
 * The API with every `/v1` operation refusing unknown body fields and query parameters: a 400
 * `invalid_request` whose `param` names the field (errors.ts, `decodeIssuesFailure`), before the
 * handler runs, so nothing is written. Applied to the whole API once, so an operation added later
 * gets it without a word of its own.
 */
export const refuseUnknownParameters = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<Id, Groups, E, R>
): HttpApi.HttpApi<Id, Groups, E, R> => {
  let strictApi = api as unknown as HttpApi.HttpApi.AnyWithProps
  for (const group of Object.values(strictApi.groups) as Array<HttpApiGroup.HttpApiGroup.AnyWithProps>) {
    let strictGroup = group
    for (const endpoint of Object.values(group.endpoints) as Array<HttpApiEndpoint.HttpApiEndpoint.AnyWithProps>) {
      // `add` keeps the group's errors, annotations and middleware and replaces the endpoint of that name.
      if (isStrict(endpoint)) strictGroup = strictGroup.add(strictEndpoint(endpoint)) as HttpApiGroup.HttpApiGroup.AnyWithProps
    }
    strictApi = strictApi.add(strictGroup) as unknown as HttpApi.HttpApi.AnyWithProps
  }
  return strictApi as unknown as HttpApi.HttpApi<Id, Groups, E, R>
}
