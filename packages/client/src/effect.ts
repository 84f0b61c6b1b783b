import { FetchHttpClient, HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { ApiFailure, IssuingApi } from "@issuing/http/api"
import { Context, type Effect, Layer } from "effect"

/** Where and as whom the Effect client calls. */
export interface EffectClientOptions {
  /** The platform's public base URL, mount path included. */
  readonly baseUrl: string
  readonly apiKey: string
  /** `X-Program-ID` for program-scoped groups. */
  readonly programId?: string | undefined
}

/**
 * The typed client of the /v1 API derived from the HttpApi the server itself runs
 * (`HttpApiClient.make(IssuingApi)`): groups and endpoints by name, payloads and successes decoded
 * with the same schemas. An error answer fails with `ApiFailure` (status, type, code, message,
 * param, requestId, docUrl), decoded from the envelope by the status the API declares for that
 * endpoint (docs/client.md#the-effect-client). Needs an `HttpClient` (e.g. `FetchHttpClient.layer`).
 */
export const makeEffectClient = (options: EffectClientOptions) =>
  HttpApiClient.make(IssuingApi, {
    baseUrl: options.baseUrl.replace(/\/+$/, ""),
    transformClient: (client) =>
      client.pipe(
        HttpClient.mapRequest((request) => {
          const authorized = HttpClientRequest.bearerToken(request, options.apiKey)
          return options.programId === undefined ? authorized : HttpClientRequest.setHeader(authorized, "x-program-id", options.programId)
        })
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
