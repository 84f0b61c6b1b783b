import { FetchHttpClient, HttpApiClient, HttpClient, HttpClientRequest, HttpClientResponse } from "@effect/platform"
import { ApiFailure, IssuingApi } from "@issuing/http/api"
import { Context, Effect, Layer, Schema } from "effect"
import { isEnvelope } from "./errors.js"

/** Where and as whom the Effect client calls. */
export interface EffectClientOptions {
  /** The platform's public base URL, mount path included. */
  readonly baseUrl: string
  readonly apiKey: string
  /** `X-Program-ID` for program-scoped groups. */
  readonly programId?: string | undefined
}

/**
 * The wire's error envelope as the API's declared error: the HttpApi declares `ApiFailure` (status
 * 400) while the server renders every failure as `{error: {...}}` with its real status, so an
 * envelope is handed to the decoder as the ApiFailure it stands for (its `status` keeps the real one).
 */
const envelopeAsApiFailure = (response: HttpClientResponse.HttpClientResponse) =>
  response.status < 400
    ? Effect.succeed(response)
    : Effect.map(
        Effect.orElseSucceed(response.json, () => undefined),
        (body) => {
          if (!isEnvelope(body)) return response
          const retryAfter = Number(response.headers["retry-after"])
          const failure = ApiFailure.make({
            status: response.status,
            type: body.error.type,
            code: body.error.code,
            message: body.error.message,
            param: body.error.param ?? null,
            ...(Number.isFinite(retryAfter) ? { retryAfterSeconds: retryAfter } : {}),
            ...(response.headers.allow !== undefined ? { allow: response.headers.allow } : {})
          })
          const headers = new Headers({ "content-type": "application/json" })
          const requestId = response.headers["request-id"]
          if (requestId !== undefined) headers.set("request-id", requestId)
          const encoded = JSON.stringify(Schema.encodeSync(ApiFailure)(failure))
          return HttpClientResponse.fromWeb(response.request, new Response(encoded, { status: 400, headers }))
        }
      )

/**
 * The typed client of the /v1 API derived from the HttpApi the server itself runs
 * (`HttpApiClient.make(IssuingApi)`): groups and endpoints by name, payloads and successes decoded
 * with the same schemas, every error answer as `ApiFailure` (status, type, code, message, param).
 * Needs an `HttpClient` (e.g. `FetchHttpClient.layer`).
 */
export const makeEffectClient = (options: EffectClientOptions) =>
  HttpApiClient.make(IssuingApi, {
    baseUrl: options.baseUrl.replace(/\/+$/, ""),
    transformClient: (client) =>
      client.pipe(
        HttpClient.mapRequest((request) => {
          const authorized = HttpClientRequest.bearerToken(request, options.apiKey)
          return options.programId === undefined ? authorized : HttpClientRequest.setHeader(authorized, "x-program-id", options.programId)
        }),
        HttpClient.transformResponse(Effect.flatMap(envelopeAsApiFailure))
      )
  })

/** The client `makeEffectClient` builds. */
export type EffectClient = Effect.Effect.Success<ReturnType<typeof makeEffectClient>>

/** The Effect client as a service. */
export class IssuingApiClient extends Context.Tag("@issuing/client/IssuingApiClient")<IssuingApiClient, EffectClient>() {}

/** A layer of `IssuingApiClient` over the global fetch. */
export const layer = (options: EffectClientOptions): Layer.Layer<IssuingApiClient> =>
  Layer.effect(IssuingApiClient, makeEffectClient(options)).pipe(Layer.provide(FetchHttpClient.layer))

export { ApiFailure, IssuingApi }
