import { HttpApiBuilder, HttpApiError, type HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import type { SqlError } from "@effect/sql"
import { Access, type Caller, Idempotency, IssuingConfig, isRetryableSqlError, type ProgramCaller, RateLimiter } from "@issuing/core"
import { Cause, type Context, Effect, FiberRef, Option } from "effect"
import * as crypto from "node:crypto"
import { ApiFailure, apiFailure, decodeIssuesFailure, failureResponse, mapToApiFailure, unknownParameterFailure } from "../errors.js"
import { answerFromReadBody, answerFromReadFormBody, bodyOfNoFieldsFailure, inspectJson, MAX_JSON_DEPTH, readBody } from "./RequestBody.js"
import type { RouteMatch, RouteTable } from "./RouteTable.js"
import { currentResolvedRequest, type ResolvedRequest } from "./Scopes.js"

/** Unknown URLs: neither their path nor their method is repeated (it may hold anything, docs/api.md#errors). */
const UNRECOGNIZED_URL = "Unrecognized request URL."
const BODY_METHODS = new Set(["POST", "PUT", "PATCH"])
const READ_METHODS = new Set(["GET", "HEAD", "OPTIONS"])

const decoder = new TextDecoder()

/** The status and body text of a response whose body is in memory (every JSON response is). */
const plainOf = (response: HttpServerResponse.HttpServerResponse) =>
  Effect.succeed({
    status: response.status,
    body: response.body._tag === "Uint8Array" ? decoder.decode(response.body.body) : ""
  })

const decodeFailure = (error: HttpApiError.HttpApiDecodeError) =>
  error.issues.length === 0 ? apiFailure("invalid_request", "Invalid request.", null) : decodeIssuesFailure(error.issues)

/** A 400 for request text holding U+0000 or a lone surrogate, naming the field or query parameter when there is one. */
const unstorableTextFailure = (param: string | null) =>
  apiFailure(
    "invalid_request",
    `${param === null ? "Invalid request" : `Invalid value for '${param}'`}: must be well-formed Unicode text without the NUL character (U+0000).`,
    param
  )

/**
 * A replayed error keeps the request_id in its stored envelope; the Request-Id header repeats it so
 * header and body agree (a replayed success gets the replay's own id).
 */
const replayedRequestId = (stored: { readonly status: number; readonly body: string }): string | undefined => {
  if (stored.status < 400) return undefined
  try {
    const id = JSON.parse(stored.body)?.error?.request_id
    return typeof id === "string" ? id : undefined
  } catch {
    return undefined
  }
}

/**
 * What an OAuth access token may reach (docs/oauth.md#access-tokens-on-v1): program-scoped routes
 * only (never programs, keys, OAuth clients or interactions), GET with `read` or `write`, anything
 * else with `write`, the reveal with `pan_reveal`.
 */
const checkTokenScope = (scopes: ReadonlyArray<string>, route: MatchedRoute, method: string): Effect.Effect<void, ApiFailure> => {
  if (route.scope !== "program") {
    return Effect.fail(
      apiFailure("permission_denied", "OAuth access tokens act on programs only; this operation needs an admin API key.", null)
    )
  }
  const needed = route.requiredScope ?? (READ_METHODS.has(method) ? "read" : "write")
  const granted = scopes.includes(needed) || (needed === "read" && scopes.includes("write"))
  return granted
    ? Effect.void
    : Effect.fail(apiFailure("permission_denied", `This access token was not granted the ${needed} scope.`, null))
}

/** Any failure of the router or a handler, as an ApiFailure (none for defects). */
const asApiFailure = (error: unknown): ApiFailure | undefined => {
  if (error instanceof ApiFailure) return error
  if (error instanceof HttpApiError.HttpApiDecodeError) return decodeFailure(error)
  if (typeof error === "object" && error !== null && "_tag" in error) {
    switch ((error as { _tag: string })._tag) {
      case "RouteNotFound":
        return apiFailure("not_found", "Unrecognized request URL.", null)
      case "RequestError":
        return apiFailure("invalid_request", "The request body could not be read.", null)
    }
  }
  return undefined
}

type MatchedRoute = Extract<RouteMatch, { _tag: "Matched" }>

/** The 404 or 405 envelope of a request no route matched. */
const unmatchedFailure = (route: Exclude<RouteMatch, { _tag: "Matched" }>): ApiFailure =>
  route._tag === "NotFound"
    ? apiFailure("not_found", UNRECOGNIZED_URL, null)
    : apiFailure("method_not_allowed", `This method is not allowed on this path. Allowed: ${route.allow.join(", ")}.`, null, {
        allow: route.allow.join(", ")
      })

/**
 * A JSON body's checks: the Content-Type, well-formed JSON, nesting depth, storable text; the body
 * parsed, or the failure (JSON.parse never makes an ApiFailure, so `instanceof` tells them apart).
 * Plain checks, not effects: each effect step is an operation of the fiber, on every request.
 */
const checkJsonBody = (contentType: string | undefined, bodyText: string): unknown => {
  const mediaType = (contentType ?? "").split(";")[0]!.trim().toLowerCase()
  if (mediaType !== "application/json") {
    return apiFailure("invalid_request", "Content-Type must be application/json for a request with a body.", "Content-Type")
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(bodyText)
  } catch {
    return apiFailure("invalid_request", "The request body is not valid JSON.", null)
  }
  const problem = inspectJson(parsed)
  if (problem?._tag === "TooDeep") {
    return apiFailure("invalid_request", `The request body nests objects and arrays deeper than ${MAX_JSON_DEPTH} levels.`, null)
  }
  if (problem?._tag === "UnstorableText") return unstorableTextFailure(problem.path === "" ? null : problem.path)
  return parsed
}

/** The 400 of a query value holding U+0000 (it would reach the database as a filter), or undefined. */
const queryTextFailure = (url: URL): ApiFailure | undefined => {
  for (const [name, value] of url.searchParams) {
    if (value.includes("\u0000")) return unstorableTextFailure(name.includes("\u0000") ? null : name)
  }
  return undefined
}

/** A request's body as read: its text, and its JSON as parsed by the checks (undefined when empty or not JSON-checked). */
interface ReadBody {
  readonly text: string
  readonly parsed: unknown
}

const NO_BODY: ReadBody = { text: "", parsed: undefined }

/**
 * The body of a request that may have one, read within the size limit and checked (OAuth protocol
 * bodies are forms, RFC 6749, checked by their handler); "" for other methods. Query values are
 * checked too: they reach the database as filters (a free-text `book`, for one).
 */
const readCheckedBody = (
  request: HttpServerRequest.HttpServerRequest,
  url: URL,
  method: string,
  route: MatchedRoute,
  maxBodyBytes: number
): Effect.Effect<ReadBody, ApiFailure> => {
  if (!BODY_METHODS.has(method)) {
    const failure = queryTextFailure(url)
    return failure === undefined ? Effect.succeed(NO_BODY) : Effect.fail(failure)
  }
  if (Number(request.headers["content-length"] ?? "0") > maxBodyBytes) {
    return Effect.fail(apiFailure("request_too_large", `The request body exceeds ${maxBodyBytes} bytes.`, null))
  }
  return Effect.flatMap(readBody(request, maxBodyBytes), (text) => {
    const checked = text.trim().length > 0 && !route.oauthProtocol
    const parsed = checked ? checkJsonBody(request.headers["content-type"], text) : undefined
    const failure = parsed instanceof ApiFailure ? parsed : queryTextFailure(url)
    return failure === undefined ? Effect.succeed({ text, parsed }) : Effect.fail(failure)
  })
}

/**
 * On an operation that declares no query, any parameter is unknown; on one that declares no body,
 * any body field (and a body that is not an object): 400 naming it, where the handler would have
 * decoded them (operations that declare them refuse unknown ones when they decode them,
 * api/UnknownParameters.ts).
 */
const undeclaredInputFailure = (url: URL, body: ReadBody, route: MatchedRoute): ApiFailure | undefined => {
  const first = url.searchParams.keys().next()
  if (route.refusesQuery && first.done !== true) {
    return first.value.includes("\u0000") ? unstorableTextFailure(null) : unknownParameterFailure(first.value)
  }
  return route.refusesBody && body.parsed !== undefined ? bodyOfNoFieldsFailure(body.parsed) : undefined
}

/** The answer a request stored with its write at its commit point: what any replay of it sends too. */
const storedAnswer = (stored: { status: number; body: string }) =>
  HttpServerResponse.text(stored.body, { status: stored.status, contentType: "application/json" })

/** A stored idempotent answer, replayed as it was (with the replay header). */
const replayed = (stored: { status: number; body: string }, requestId: string) =>
  HttpServerResponse.text(stored.body, {
    status: stored.status,
    contentType: "application/json",
    headers: { "idempotent-replayed": "true", "request-id": replayedRequestId(stored) ?? requestId }
  })

/** The pipeline's services. */
interface PipelineServices {
  readonly access: Context.Tag.Service<typeof Access>
  readonly limiter: Context.Tag.Service<typeof RateLimiter>
  readonly idempotency: Context.Tag.Service<typeof Idempotency>
  readonly config: Context.Tag.Service<typeof IssuingConfig>
}

/** Who calls: the key or token (401), its role or scopes for the route (403), its rate limit (429), its program (X-Program-ID). */
const authorizeCaller = (services: PipelineServices, request: HttpServerRequest.HttpServerRequest, route: MatchedRoute, method: string) =>
  Effect.gen(function* () {
    const { access, limiter } = services
    const caller = yield* mapToApiFailure(access.authenticate(request.headers.authorization))
    if (caller.oauth !== undefined) {
      yield* checkTokenScope(caller.oauth.scopes, route, method)
    } else if (caller.role === "viewer" && !READ_METHODS.has(method)) {
      return yield* apiFailure("permission_denied", "Viewer keys may only read (GET).", null)
    }
    yield* mapToApiFailure(limiter.consume(caller.apiKeyId))
    const scoped: Caller | ProgramCaller =
      route.scope === "program" ? yield* mapToApiFailure(access.resolveProgram(caller, request.headers["x-program-id"])) : caller
    return { caller, scoped }
  })

/** A deadlock, serialization failure or SQLite busy error anywhere in `cause`, failure or defect alike. */
const transientSqlError = (cause: Cause.Cause<unknown>): Option.Option<unknown> =>
  Cause.find(cause, (reason) => {
    const error = reason._tag === "Fail" ? reason.error : reason._tag === "Die" ? reason.defect : undefined
    return isRetryableSqlError(error) ? Option.some(error) : Option.none()
  })

/** A failure of the router or a handler as its envelope; a defect as a logged 500. */
const renderCause = (
  respondWith: (failure: ApiFailure) => HttpServerResponse.HttpServerResponse,
  requestId: string,
  cause: Cause.Cause<unknown>
): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
  const failure = Cause.failureOption(cause).pipe(Option.map(asApiFailure), Option.getOrUndefined)
  if (failure !== undefined) return Effect.succeed(respondWith(failure))
  return Effect.as(
    Effect.logError("Unhandled failure", { request_id: requestId, cause: Cause.pretty(cause) }),
    respondWith(apiFailure("internal_error", "An internal error occurred. Retry with the same Idempotency-Key.", null))
  )
}

/** Every failure of the router and handlers as an envelope; defects as a logged 500. */
const catchToResponse =
  (respondWith: (failure: ApiFailure) => HttpServerResponse.HttpServerResponse, requestId: string) =>
  <R>(effect: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, R>) =>
    Effect.catchAllCause(effect, (cause) => renderCause(respondWith, requestId, cause))

/**
 * As catchToResponse, for a handler inside an idempotent request's transaction, except that a
 * transient database failure (deadlock, serialization failure) is failed with: the handler's
 * writes joined that transaction and did not retry on their own, so the failure must reach the
 * transaction's outermost retry, which runs the request again (docs/api.md#idempotency). Rendered
 * as a 500 here it would be the request's answer, never retried.
 */
const catchToResponseInTransaction =
  (respondWith: (failure: ApiFailure) => HttpServerResponse.HttpServerResponse, requestId: string) =>
  <R>(effect: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, R>) =>
    Effect.catchAllCause(effect, (cause) => {
      const transient = transientSqlError(cause)
      return Option.isSome(transient) ? Effect.fail(transient.value as SqlError.SqlError) : renderCause(respondWith, requestId, cause)
    })

/** Sets what the pipeline resolved on the request's fiber, for the route's scope middleware (middleware/Scopes.ts). */
const resolve = (resolved: ResolvedRequest) => FiberRef.set(currentResolvedRequest, resolved)

/** One request through the pipeline: route, body, caller, then the handler (idempotent when asked). */
const handleRequest = (
  services: PipelineServices,
  routes: RouteTable,
  app: HttpApp.Default,
  requestId: string,
  respondWith: (failure: ApiFailure) => HttpServerResponse.HttpServerResponse
) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const url = new URL(request.url, "http://localhost")
    const method = request.method.toUpperCase()
    const route = routes.match(method, url.pathname)
    if (route._tag !== "Matched") return yield* unmatchedFailure(route)
    const body = yield* readCheckedBody(request, url, method, route, services.config.maxBodyBytes)
    // Failures of the router and handlers become envelopes here, inside any idempotent
    // transaction, so a 4xx is stored with the key; defects become 500s and are not stored.
    const toResponse = catchToResponse(respondWith, requestId)

    // The body stream is consumed: handlers read the text already read.
    if (BODY_METHODS.has(method)) {
      if (route.oauthProtocol) answerFromReadFormBody(request, body.text)
      else answerFromReadBody(request, body.text, body.parsed)
    }
    // Where the router would decode a query or body: after the caller's checks, inside any idempotent transaction.
    const undeclared = undeclaredInputFailure(url, body, route)
    const routed = undeclared === undefined ? app : Effect.fail(undeclared)
    if (route.scope === "public") {
      yield* resolve({ requestId, caller: null })
      return yield* toResponse(routed)
    }

    const { caller, scoped } = yield* authorizeCaller(services, request, route, method)
    yield* resolve({ requestId, caller: scoped })
    const handled = toResponse(routed)
    const idempotencyKey = request.headers["idempotency-key"]
    if (method !== "POST" || idempotencyKey === undefined) return yield* handled

    const key = yield* mapToApiFailure(services.idempotency.validateKey(idempotencyKey))
    const programId = "program" in scoped ? (scoped as ProgramCaller).program.id : ""
    // The API key is part of the request: a stored response is only ever replayed to the key
    // that made it, so another key of the organization (say a developer key replaying an
    // admin's key creation or a PAN reveal) gets 409, never the stored secret.
    const requestParts = [method, url.pathname + url.search, programId, caller.apiKeyId, body.text]
    // A route that calls out runs outside any transaction and writes at its commit point, with the
    // answer its endpoint makes of the value written (docs/api.md#idempotency).
    const result = yield* mapToApiFailure(
      route.answer === null
        ? services.idempotency.run(
            caller.organizationId,
            key,
            requestParts,
            catchToResponseInTransaction(respondWith, requestId)(routed),
            plainOf
          )
        : services.idempotency.run(caller.organizationId, key, requestParts, handled, plainOf, { callsOut: true, answerOf: route.answer })
    )
    switch (result._tag) {
      case "Ran":
        return result.response
      case "Committed":
        return storedAnswer(result.response)
      case "Replayed":
        return replayed(result.response, requestId)
    }
  })

/** Every response's headers: its Request-Id, and no shared or edge cache may keep a card or a balance (docs/operations.md#running-several-nodes). */
const withResponseHeaders = (response: HttpServerResponse.HttpServerResponse, requestId: string) => {
  const noStore = response.headers["cache-control"] === undefined
  const withId = response.headers["request-id"] === undefined
  // One copy of the response and its headers for both, the usual case.
  if (noStore && withId) return HttpServerResponse.setHeaders(response, { "cache-control": "no-store", "request-id": requestId })
  if (noStore) return HttpServerResponse.setHeader(response, "cache-control", "no-store")
  return withId ? HttpServerResponse.setHeader(response, "request-id", requestId) : response
}

/**
 * The one place every request passes through, around the router: request id, route match (404,
 * 405), body limits and JSON well-formedness, Content-Type, authentication, role, rate limit,
 * program scope, idempotency, and rendering of every failure as the error envelope (docs/api.md#errors).
 * Around the router, not in its middleware: an Idempotency-Key's transaction wraps the router
 * (decoding included), and the caller it is claimed for must be known before it
 * (docs/decisions.md#one-pipeline-before-the-router).
 */
export const requestPipeline = (routes: RouteTable) =>
  HttpApiBuilder.middleware(
    Effect.gen(function* () {
      const services: PipelineServices = {
        access: yield* Access,
        limiter: yield* RateLimiter,
        idempotency: yield* Idempotency,
        config: yield* IssuingConfig
      }

      return (app: HttpApp.Default): HttpApp.Default =>
        Effect.suspend(() => {
          const requestId = crypto.randomUUID()
          const respondWith = (failure: ApiFailure) => {
            const response = failureResponse(failure, requestId, services.config.baseUrl)
            // An oversized body is not read to its end: close the connection after answering.
            return failure.code === "request_too_large" ? HttpServerResponse.setHeader(response, "connection", "close") : response
          }
          // Failures and defects in one handler, the headers in one map: two operations fewer per
          // request than a generator with catchAll and catchAllDefect.
          return handleRequest(services, routes, app, requestId, respondWith).pipe(
            Effect.catchAllCause((cause) => {
              const failure = Cause.failureOption(cause)
              if (Option.isSome(failure)) return Effect.succeed(respondWith(failure.value))
              const defect = Cause.dieOption(cause)
              // An interruption stays one.
              if (Option.isNone(defect)) return Effect.failCause(cause as Cause.Cause<never>)
              return Effect.as(
                Effect.logError("Unhandled defect", { request_id: requestId, defect: String(defect.value) }),
                respondWith(apiFailure("internal_error", "An internal error occurred. Retry with the same Idempotency-Key.", null))
              )
            }),
            Effect.map((response) => withResponseHeaders(response, requestId))
          )
        })
    })
  )
