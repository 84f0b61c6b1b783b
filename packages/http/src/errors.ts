import { HttpApiSchema, HttpServerResponse } from "@effect/platform"
import { SqlError } from "@effect/sql"
import type { BusinessRuleCode, DomainError } from "@issuing/core"
import { Effect, Schema } from "effect"

/**
 * An HTTP failure: status, error type and code (docs/api.md#errors). Handlers fail with it; the
 * request pipeline renders it as the envelope, adding request_id and doc_url. The Effect client
 * decodes an error answer into one, with the envelope's request_id and doc_url.
 */
export class ApiFailure extends Schema.TaggedError<ApiFailure>()("ApiFailure", {
  status: Schema.Number,
  type: Schema.String,
  code: Schema.String,
  message: Schema.String,
  param: Schema.NullOr(Schema.String),
  retryAfterSeconds: Schema.optional(Schema.Number),
  allow: Schema.optional(Schema.String),
  /** Set when decoded from an answer (the Effect client); the server's pipeline adds its own. */
  requestId: Schema.optional(Schema.String),
  docUrl: Schema.optional(Schema.String)
}) {}

/** The codes the HTTP layer itself answers with, one per status of the error table. */
export type HttpErrorCode =
  | "invalid_request"
  | "request_too_large"
  | "request_header_too_large"
  | "request_timeout"
  | "method_not_allowed"
  | "authentication_error"
  | "permission_denied"
  | "not_found"
  | "conflict"
  | "rate_limited"
  | "internal_error"

/** Every code an error response can carry; each has a page at /docs/errors/<code>. */
export type ErrorCode = HttpErrorCode | BusinessRuleCode

/** Everything a doc page says about one error code. */
export interface ErrorCodeDoc {
  readonly status: number
  readonly type: string
  readonly title: string
  readonly description: string
}

/** A business rule is always 422 invalid_request_error; only its title and description vary. */
interface BusinessRuleDoc extends ErrorCodeDoc {
  readonly status: 422
  readonly type: "invalid_request_error"
}

/**
 * The catalogue of error codes: `GET /docs/errors/<code>` serves each one. Fixed at compile time:
 * a code without its entry, or a business rule that is not a 422, does not build.
 */
export const ERROR_CODES = {
  invalid_request: {
    status: 400,
    type: "invalid_request_error",
    title: "Invalid request",
    description:
      "The request was malformed: unparseable JSON, a missing or wrong Content-Type, a field that fails validation, conflicting parameters or an unknown order_by field. `param` names the field or header at fault. Fix the request; retrying it unchanged fails again."
  },
  request_too_large: {
    status: 413,
    type: "invalid_request_error",
    title: "Request body too large",
    description: "The request body exceeds the server's limit (1 MiB by default). Send a smaller body."
  },
  request_header_too_large: {
    status: 431,
    type: "invalid_request_error",
    title: "Request headers too large",
    description:
      "The request line and headers together exceed the server's limit (Node's 16 KiB by default), often because of a very long URL. Send a shorter URL or fewer headers. The connection is closed after this answer."
  },
  request_timeout: {
    status: 408,
    type: "invalid_request_error",
    title: "Request timeout",
    description: "The server did not receive the whole request in time. Retry; the connection is closed after this answer."
  },
  method_not_allowed: {
    status: 405,
    type: "invalid_request_error",
    title: "Method not allowed",
    description: "The path exists but does not accept this HTTP method. The Allow header lists the methods it accepts."
  },
  authentication_error: {
    status: 401,
    type: "authentication_error",
    title: "Authentication failed",
    description:
      "The API key is missing, malformed, unknown or revoked (send `Authorization: Bearer <API_KEY>`), or an embed session_token is unknown or expired (create a new embed session)."
  },
  permission_denied: {
    status: 403,
    type: "permission_error",
    title: "Permission denied",
    description:
      "The key is known but not allowed: its role does not permit the operation (viewers may only read; keys need an admin key, creating programs one not limited by program_ids), it cannot access the program named by X-Program-ID (param X-Program-ID), or it is not enabled for PAN reveal."
  },
  not_found: {
    status: 404,
    type: "not_found_error",
    title: "Not found",
    description:
      "No such resource, or it is not visible to this key (resources of another program or organization are reported as not found, never as forbidden). `param` names the id parameter. Unknown URLs get this error too, with param null."
  },
  conflict: {
    status: 409,
    type: "conflict_error",
    title: "Conflict",
    description:
      "The operation is incompatible with the resource's state (for example reissuing a closed card, or replaying to a disabled subscription), or the Idempotency-Key was already used with a different request, or a request with the same key is still running."
  },
  rate_limited: {
    status: 429,
    type: "rate_limit_error",
    title: "Rate limited",
    description: "The API key exceeded its rate limit. Wait the number of seconds in the Retry-After header, then retry."
  },
  internal_error: {
    status: 500,
    type: "api_error",
    title: "Internal error",
    description: "An unexpected failure. Nothing was committed. Retry with the same Idempotency-Key; the request is safe to repeat."
  },
  insufficient_funds: {
    status: 422,
    type: "invalid_request_error",
    title: "Insufficient funds",
    description: "The debit would take a wallet account's balance below zero. Nothing was written. param: amount."
  },
  balance_limit_exceeded: {
    status: 422,
    type: "invalid_request_error",
    title: "Balance limit exceeded",
    description:
      "The transfer would take an account's running debit or credit total past 9,007,199,254,740,991 minor units (2^53 − 1), the largest amount JSON numbers carry exactly. Nothing was written. param: amount."
  },
  currency_mismatch: {
    status: 422,
    type: "invalid_request_error",
    title: "Currency mismatch",
    description:
      "The transfer's currency differs from the currency of one of its financial accounts, or of the transaction it is attached to. Nothing was written. param: currency."
  },
  same_financial_account: {
    status: 422,
    type: "invalid_request_error",
    title: "Same financial account",
    description: "A transfer needs two different financial accounts. Nothing was written. param: to_financial_account_id."
  },
  settlement_account_not_allowed: {
    status: 422,
    type: "invalid_request_error",
    title: "Settlement account not allowed",
    description:
      "Settlement accounts are the counterparty of external rails and card settlement; they cannot be named in a transfer. Name a wallet account. param: from_financial_account_id or to_financial_account_id."
  },
  card_number_space_exhausted: {
    status: 422,
    type: "invalid_request_error",
    title: "Card number space exhausted",
    description:
      "No unused card number could be drawn under the program's BIN after repeated attempts: the BIN's number range is nearly full. Nothing was written. Issue the card under a program with another BIN."
  },
  invalid_time_window: {
    status: 422,
    type: "invalid_request_error",
    title: "Invalid time window",
    description: "A replay's begin is after its end. Both ends are inclusive; send begin <= end. Nothing was queued. param: begin."
  },
  replay_window_too_large: {
    status: 422,
    type: "invalid_request_error",
    title: "Replay window too large",
    description:
      "The events in a replay window span more than 31 days from the first to the last (a window may be wider than that; the history it re-sends may not). Nothing was queued. Split the window into several replays. param: end."
  },
  event_type_not_subscribed: {
    status: 422,
    type: "invalid_request_error",
    title: "Event type not subscribed",
    description:
      "The resend target does not subscribe to the event's type (param subscription_id), or, without a target, no subscription of the program does (param null). Nothing was sent."
  },
  event_tag_not_subscribed: {
    status: 422,
    type: "invalid_request_error",
    title: "Event tag not subscribed",
    description:
      "The resend target has a tag, and the event does not carry it: a tagged subscription receives only the events of its tag's wallets (docs/webhooks.md#customers-and-tags). Nothing was sent. param: subscription_id."
  },
  subscription_limit_reached: {
    status: 422,
    type: "invalid_request_error",
    title: "Subscription limit reached",
    description: "A program may have at most 100 webhook subscriptions. Delete one before creating another."
  },
  amount_exceeds_pending: {
    status: 422,
    type: "invalid_request_error",
    title: "Amount exceeds the pending amount",
    description: "A reversal may release at most the card transaction's open hold (its pending_amount). Nothing was written. param: amount."
  },
  amount_exceeds_settled: {
    status: 422,
    type: "invalid_request_error",
    title: "Amount exceeds the settled amount",
    description:
      "A return may refund at most what the card transaction has settled (its settled_amount: cleared minus returned). Nothing was written. param: amount."
  },
  amount_exceeds_disputable: {
    status: 422,
    type: "invalid_request_error",
    title: "Amount exceeds the disputable amount",
    description:
      "A dispute may claim at most what the card transaction settled and was neither returned nor disputed already (settled_amount − disputed_amount; a lost dispute's amount stays disputed). Nothing was written. param: amount (docs/disputes.md)."
  },
  transaction_not_disputable: {
    status: 422,
    type: "invalid_request_error",
    title: "Transaction not disputable",
    description:
      "Only a card transaction's settled money can be disputed: a transfer's transaction or a DECLINED card transaction cannot. Nothing was written. param: transaction_id (docs/disputes.md)."
  },
  cardholder_not_verified: {
    status: 422,
    type: "invalid_request_error",
    title: "Cardholder not verified",
    description:
      "The program requires a VERIFIED cardholder for every card (require_verified_cardholder), and the card's cardholder (its own cardholder_id, else its wallet's) is missing or not VERIFIED. Record the program's check with POST /v1/cardholders/{cardholder_id}/verification first. Nothing was written. param: cardholder_id."
  }
} as const satisfies { readonly [C in ErrorCode]: C extends BusinessRuleCode ? BusinessRuleDoc : ErrorCodeDoc }

/** The doc of a code taken from outside (a URL), or undefined when no such code exists. */
export const errorCodeDoc = (code: string): ErrorCodeDoc | undefined =>
  Object.hasOwn(ERROR_CODES, code) ? ERROR_CODES[code as ErrorCode] : undefined

/** Every status an error answer of the API can have (the catalogue's). */
export type FailureStatus = (typeof ERROR_CODES)[ErrorCode]["status"]

/**
 * An ApiFailure known to carry one status. Handlers' failures are typed by status, so the
 * HttpApi's declared errors must list every status a handler can answer with or it does not build.
 */
export type ApiFailureAt<S extends FailureStatus> = ApiFailure & { readonly status: S }

/** The `error` object of the envelope (and of a batch item that failed). */
export const ErrorBody = Schema.Struct({
  type: Schema.String.annotations({ description: "The class of error: what kind of failure, and so how to react." }),
  code: Schema.String.annotations({
    jsonSchema: {
      type: "string",
      enum: Object.keys(ERROR_CODES),
      description: "The machine-readable reason; each has a page at `doc_url`."
    }
  }),
  message: Schema.String.annotations({ description: "A sentence for a human; it never repeats a value that was sent." }),
  param: Schema.NullOr(Schema.String).annotations({
    description: "The parameter, field (`holder.name`, `transfers.3.amount`) or header at fault, or null."
  }),
  request_id: Schema.String.annotations({
    jsonSchema: { type: "string", format: "uuid", description: "The request's id, as in the Request-Id header." }
  }),
  doc_url: Schema.String.annotations({
    jsonSchema: { type: "string", format: "uri", description: "The page of this error's code (/docs/errors/<code>)." }
  })
}).annotations({ description: "What went wrong." })

/** The error envelope as it is on the wire, every non-2xx's body (docs/api.md#errors). */
export const ErrorEnvelope = Schema.Struct({ error: ErrorBody }).annotations({
  identifier: "ErrorEnvelope",
  description: "The body of every error answer (docs/api.md#errors)."
})

/**
 * The declared error of one status: the envelope on the wire, an ApiFailure of that status in
 * code. The HttpApi declares these (api-wide, per group, per endpoint), so the OpenAPI document
 * lists each operation's statuses and the Effect client decodes each status's envelope. The server
 * renders failures in the request pipeline (`failureResponse`), which knows the request id; this
 * encoder is the same envelope for an ApiFailure that already carries one.
 */
const failureAt = <S extends FailureStatus>(status: S, description: string) =>
  Schema.transform(
    ErrorEnvelope,
    Schema.typeSchema(ApiFailure).pipe(Schema.filter((failure): failure is ApiFailureAt<S> => failure.status === status)),
    {
      strict: true,
      decode: ({ error }) =>
        new ApiFailure({
          status,
          type: error.type,
          code: error.code,
          message: error.message,
          param: error.param,
          requestId: error.request_id,
          docUrl: error.doc_url
        }) as ApiFailureAt<S>,
      encode: (failure) => ({
        error: {
          type: failure.type,
          code: failure.code,
          message: failure.message,
          param: failure.param,
          request_id: failure.requestId ?? "",
          doc_url: failure.docUrl ?? ""
        }
      })
    }
  ).annotations(HttpApiSchema.annotations({ status, description }))

/** 400: malformed request, any endpoint. */
export const InvalidRequestFailure = failureAt(400, "Invalid request")
/** 401: no key, or an unknown or revoked one (or an expired embed session). */
export const AuthenticationFailure = failureAt(401, "Authentication failed")
/** 403: the key's role, programs or scopes do not allow it. */
export const PermissionFailure = failureAt(403, "Permission denied")
/** 404: an id the caller cannot see (and sandbox-only routes in production). */
export const NotFoundFailure = failureAt(404, "Not found")
/** 409: the resource's state forbids it, or an Idempotency-Key clash. */
export const ConflictFailure = failureAt(409, "Conflict")
/** 413: the request body is over the limit. */
export const TooLargeFailure = failureAt(413, "Request body too large")
/** 422: valid input that breaks a business rule (`code` names it). */
export const BusinessRuleFailure = failureAt(422, "Business rule violated")
/** 429: the key's rate limit. */
export const RateLimitFailure = failureAt(429, "Rate limited")
/** 500: unexpected; nothing was committed. */
export const InternalFailure = failureAt(500, "Internal error")

/** Builds an ApiFailure for one of the catalogue's codes; status and type come from its entry. */
export const apiFailure = <C extends ErrorCode>(
  code: C,
  message: string,
  param: string | null,
  extra: Pick<Partial<ApiFailure>, "retryAfterSeconds" | "allow"> = {}
): ApiFailureAt<(typeof ERROR_CODES)[C]["status"]> => {
  const doc: ErrorCodeDoc = ERROR_CODES[code]
  // The catalogue entry of `code` gives the status, so the instance does carry it.
  return new ApiFailure({ status: doc.status, type: doc.type, code, message, param, ...extra }) as ApiFailureAt<
    (typeof ERROR_CODES)[C]["status"]
  >
}

/**
 * The one mapping from domain failures to HTTP failures (envelope fields and status), one entry per
 * domain failure. Closed: a new domain failure without its entry does not build.
 */
const DOMAIN_FAILURES = {
  InvalidRequest: (error) => apiFailure("invalid_request", error.message, error.param),
  AuthenticationFailed: (error) => apiFailure("authentication_error", error.message, null),
  PermissionDenied: (error) => apiFailure("permission_denied", error.message, error.param),
  NotFound: (error) => apiFailure("not_found", error.message, error.param),
  Conflict: (error) => apiFailure("conflict", error.message, error.param),
  BusinessRuleViolation: (error) => apiFailure(error.code, error.message, error.param),
  RateLimited: (error) =>
    apiFailure(
      "rate_limited",
      "Too many requests for this caller (an API key, an access token or a portal session). Retry after the time in Retry-After.",
      null,
      {
        retryAfterSeconds: error.retryAfterSeconds
      }
    )
} as const satisfies { readonly [T in DomainError["_tag"]]: (error: Extract<DomainError, { readonly _tag: T }>) => ApiFailure }

/** The HTTP failure a domain failure becomes, with its status (read off the table above). */
export type FailureOf<E extends DomainError> = ReturnType<(typeof DOMAIN_FAILURES)[E["_tag"]]>

/** A domain failure as its HTTP failure. */
export const toApiFailure = <E extends DomainError>(error: E): FailureOf<E> =>
  (DOMAIN_FAILURES[error._tag] as (error: E) => FailureOf<E>)(error)

/**
 * Runs a domain effect for a handler or the request pipeline: domain failures become the
 * ApiFailure of their status (toApiFailure); database failures are defects (500 internal_error,
 * nothing stored under the idempotency key).
 */
export const mapToApiFailure = <A, E extends DomainError | SqlError.SqlError, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, FailureOf<Exclude<E, SqlError.SqlError>>, R> =>
  Effect.catchAll(effect, (error) =>
    error instanceof SqlError.SqlError ? Effect.die(error) : Effect.fail(toApiFailure(error as Exclude<E, SqlError.SqlError>))
  )

/** One decode issue: where (the field's path) and what. */
export interface DecodeIssue {
  /** `Unexpected` for a property the schema does not declare (an unknown parameter). */
  readonly _tag?: string
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

/** The longest parameter name an error repeats; a longer one is cut (it is the caller's text, of any length). */
const MAX_ECHOED_NAME_LENGTH = 100

/**
 * The 400 of a parameter the operation does not know (a body field at any depth, `spending_period.intervall`,
 * or a query parameter), in Stripe's words (docs/api.md#requests-and-responses).
 */
export const unknownParameterFailure = (name: string): ApiFailureAt<400> => {
  const param = name.length > MAX_ECHOED_NAME_LENGTH ? `${name.slice(0, MAX_ECHOED_NAME_LENGTH)}…` : name
  return apiFailure("invalid_request", `Received unknown parameter: ${param}`, param)
}

/**
 * `param` followed by one segment of a path: after a dot (`holder.name`, `program_ids.1`), except
 * a map key, given as a bracketed segment, which follows its field without one (`metadata[note]`,
 * `transfers.3.metadata[note]`; docs/api.md#metadata). `param` "" is the start of a path. The one
 * spelling of a path, for decode issues and the pipeline's text checks (middleware/RequestBody.ts).
 */
export const appendParamSegment = (param: string, segment: string): string =>
  param === "" ? segment : segment.startsWith("[") && segment.endsWith("]") ? param + segment : `${param}.${segment}`

/** A decode issue's path as `param` (`appendParamSegment`; the schema gives a map key bracketed). */
const paramOf = (path: ReadonlyArray<PropertyKey>): string =>
  path.map(String).reduce((param, segment) => appendParamSegment(param, segment), "")

/**
 * The 400 of a body, query or batch item that does not decode: `param` is the first issue's path
 * (`paramOf`). The rejected value is never echoed: it may be a card number or a secret sent in the
 * wrong field.
 */
export const decodeIssuesFailure = (issues: ReadonlyArray<DecodeIssue>): ApiFailureAt<400> => {
  const issue = issues[0]
  if (issue?._tag === "Unexpected" && issue.path.length > 0) return unknownParameterFailure(issue.path.map(String).join("."))
  const param = issue === undefined || issue.path.length === 0 ? null : paramOf(issue.path)
  const detail = (issue?.message ?? "Invalid request").replace(/,\s*actual\b[\s\S]*$/, "")
  return apiFailure("invalid_request", param === null ? `Invalid request: ${detail}` : `Invalid value for '${param}': ${detail}`, param)
}

/** The JSON envelope of every error response (docs/api.md#errors). */
export const envelope = (failure: ApiFailure, requestId: string, baseUrl: string) => ({
  error: {
    type: failure.type,
    code: failure.code,
    message: failure.message,
    param: failure.param,
    request_id: requestId,
    doc_url: `${baseUrl}/docs/errors/${failure.code}`
  }
})

/** The envelope as a response, with Retry-After / Allow when the failure carries them. */
export const failureResponse = (failure: ApiFailure, requestId: string, baseUrl: string) => {
  const headers: Record<string, string> = {}
  if (failure.retryAfterSeconds !== undefined) headers["retry-after"] = String(failure.retryAfterSeconds)
  if (failure.allow !== undefined) headers.allow = failure.allow
  return HttpServerResponse.unsafeJson(envelope(failure, requestId, baseUrl), { status: failure.status, headers })
}
