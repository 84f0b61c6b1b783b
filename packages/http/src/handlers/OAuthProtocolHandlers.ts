import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import {
  type ClientCredentials,
  IssuingConfig,
  makeTokenBuckets,
  OAuth,
  OAuthProtocolError,
  oauthError,
  type TokenParams
} from "@issuing/core"
import { Effect, Option } from "effect"
import { IssuingApi } from "../Api.js"
import { oauthErrorPage } from "../docs/OAuthPages.js"

const FORM_TYPE = "application/x-www-form-urlencoded"

/** Token responses and errors are never cached anywhere (RFC 6749 §5.1). */
const NO_STORE = { "cache-control": "no-store", pragma: "no-cache" }

/** An OAuth JSON answer. */
const oauthJson = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  HttpServerResponse.unsafeJson(body, { status, headers: { ...NO_STORE, ...headers } })

/** RFC 6749 §5.2: `{error, error_description}`, 401 with a challenge for invalid_client, else 400. */
const oauthErrorResponse = (error: OAuthProtocolError) =>
  error.error === "invalid_client"
    ? oauthJson({ error: error.error, error_description: error.description }, 401, {
        "www-authenticate": 'Basic realm="issuing", error="invalid_client"'
      })
    : oauthJson({ error: error.error, error_description: error.description }, 400)

/**
 * The form of an OAuth request: `application/x-www-form-urlencoded` (RFC 6749 §3.2), each
 * parameter at most once, an empty value read as absent.
 */
const readForm = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const mediaType = (request.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase()
  if (mediaType !== FORM_TYPE) return yield* oauthError("invalid_request", `Content-Type must be ${FORM_TYPE}.`)
  const text = yield* Effect.orDie(request.text)
  const values = new Map<string, string>()
  for (const [name, value] of new URLSearchParams(text)) {
    if (values.has(name)) return yield* oauthError("invalid_request", `${name.slice(0, 40)} must not be repeated.`)
    values.set(name, value)
  }
  const params: Record<string, string | undefined> = Object.create(null)
  for (const [name, value] of values) if (value !== "") params[name] = value
  return params as TokenParams
})

/** A form-urlencoded component of HTTP Basic credentials (RFC 6749 §2.3.1), or undefined when malformed. */
const formDecode = (text: string): string | undefined => {
  try {
    return decodeURIComponent(text.replace(/\+/g, " "))
  } catch {
    return undefined
  }
}

/** How the client authenticates: client_secret_basic, client_secret_post, or a public client's client_id (one method only). */
const clientCredentials = (
  authorization: string | undefined,
  params: TokenParams
): Effect.Effect<ClientCredentials, OAuthProtocolError> => {
  if (authorization === undefined || authorization.trim() === "") {
    if (params.client_id === undefined) return Effect.fail(oauthError("invalid_client", "Client authentication failed."))
    return Effect.succeed({ clientId: params.client_id, clientSecret: params.client_secret ?? null })
  }
  const match = /^Basic\s+([A-Za-z0-9+/]+={0,2})\s*$/i.exec(authorization.trim())
  const decoded = match === null ? "" : Buffer.from(match[1]!, "base64").toString("utf8")
  const colon = decoded.indexOf(":")
  const clientId = colon < 0 ? undefined : formDecode(decoded.slice(0, colon))
  const clientSecret = colon < 0 ? undefined : formDecode(decoded.slice(colon + 1))
  if (clientId === undefined || clientSecret === undefined) {
    return Effect.fail(oauthError("invalid_client", "Client authentication failed."))
  }
  if (params.client_secret !== undefined) {
    return Effect.fail(oauthError("invalid_request", "Authenticate with one method: HTTP Basic or client_secret in the body, not both."))
  }
  if (params.client_id !== undefined && params.client_id !== clientId) {
    return Effect.fail(oauthError("invalid_request", "client_id in the body differs from the one of HTTP Basic."))
  }
  return Effect.succeed({ clientId, clientSecret })
}

/**
 * The throttle of the anonymous /oauth endpoints (docs/oauth.md#throttling): a token bucket per
 * client_id and client address, in process memory. Returns the seconds to wait, or null.
 */
type Throttle = (clientId: string | undefined) => Effect.Effect<number | null, never, HttpServerRequest.HttpServerRequest>

const makeThrottle = (ratePerSecond: number, burst: number): Throttle => {
  const buckets = makeTokenBuckets(ratePerSecond, burst)
  return (clientId) =>
    Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
      const address = Option.getOrElse(request.remoteAddress, () => "unknown")
      return buckets.take(`${address} ${(clientId ?? "").slice(0, 100)}`, Date.now())
    })
}

/** 429 with Retry-After, in OAuth's JSON format (RFC 6749 has no code of its own for it). */
const throttledJson = (seconds: number) =>
  oauthJson({ error: "invalid_request", error_description: "Too many requests; retry later." }, 429, { "retry-after": String(seconds) })

/** Reads the form and the client's credentials, runs `work`, and answers every OAuth refusal as RFC 6749 §5.2. */
const clientEndpoint = <A>(
  throttle: Throttle,
  work: (credentials: ClientCredentials, params: TokenParams) => Effect.Effect<A, OAuthProtocolError | unknown>,
  respond: (result: A) => HttpServerResponse.HttpServerResponse
) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const params = yield* readForm
    const credentials = yield* clientCredentials(request.headers.authorization, params)
    const wait = yield* throttle(credentials.clientId)
    if (wait !== null) return throttledJson(wait)
    return respond(yield* work(credentials, params))
  }).pipe(
    Effect.catchIf(
      (error): error is OAuthProtocolError => error instanceof OAuthProtocolError,
      (error) => Effect.succeed(oauthErrorResponse(error))
    ),
    // Database failures are defects: the request pipeline answers them (500, details only in the log).
    Effect.catchAll((error) => Effect.die(error))
  )

/** The token a revocation or introspection names (RFC 7009 §2.1, RFC 7662 §2.1). */
const requiredToken = (params: TokenParams): Effect.Effect<string, OAuthProtocolError> =>
  params.token === undefined ? Effect.fail(oauthError("invalid_request", "token is required.")) : Effect.succeed(params.token)

const html = (body: string, status: number) =>
  HttpServerResponse.text(body, {
    status,
    contentType: "text/html; charset=utf-8",
    headers: { "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'", "x-frame-options": "DENY" }
  })

export const OAuthProtocolHandlersLive = HttpApiBuilder.group(IssuingApi, "oauthProtocol", (handlers) =>
  Effect.gen(function* () {
    const oauth = yield* OAuth
    const config = yield* IssuingConfig
    const throttle = makeThrottle(config.oauthRateLimitPerSecond, config.oauthRateLimitBurst)
    return handlers
      .handle("authorize", () =>
        Effect.gen(function* () {
          const request = yield* HttpServerRequest.HttpServerRequest
          const params = new URL(request.url, "http://localhost").searchParams
          const wait = yield* throttle(params.get("client_id") ?? undefined)
          if (wait !== null) {
            return html(oauthErrorPage("Too many authorization requests; retry later."), 429).pipe(
              HttpServerResponse.setHeader("retry-after", String(wait))
            )
          }
          const outcome = yield* Effect.orDie(oauth.authorize(params))
          return outcome._tag === "Redirect"
            ? HttpServerResponse.empty({ status: 302, headers: { location: outcome.location } })
            : html(oauthErrorPage(outcome.message), outcome.status)
        })
      )
      .handle("token", () =>
        clientEndpoint(
          throttle,
          (credentials, params) => oauth.token(credentials, params),
          (tokens) => oauthJson(tokens)
        )
      )
      .handle("revoke", () =>
        clientEndpoint(
          throttle,
          (credentials, params) => Effect.flatMap(requiredToken(params), (token) => oauth.revoke(credentials, token)),
          () => HttpServerResponse.empty({ status: 200, headers: NO_STORE })
        )
      )
      .handle("introspect", () =>
        clientEndpoint(
          throttle,
          (credentials, params) => Effect.flatMap(requiredToken(params), (token) => oauth.introspect(credentials, token)),
          (introspection) => oauthJson(introspection)
        )
      )
      .handle("metadata", () => Effect.succeed(HttpServerResponse.unsafeJson(oauth.metadata())))
  })
)
