import { HttpApiSchema, HttpServerResponse } from "@effect/platform"
import { SqlError } from "@effect/sql"
import type { BusinessRuleCode, IssuingError } from "@issuing/core"
import { Effect, Schema } from "effect"

/**
 * An HTTP failure: status, error type and code (docs/api.md#errors). Handlers fail with it; the
 * request pipeline renders it as the envelope, adding request_id and doc_url.
 */
export class ApiFailure extends Schema.TaggedError<ApiFailure>()(
  "ApiFailure",
  {
    status: Schema.Number,
    type: Schema.String,
    code: Schema.String,
    message: Schema.String,
    param: Schema.NullOr(Schema.String),
    retryAfterSeconds: Schema.optional(Schema.Number),
    allow: Schema.optional(Schema.String)
  },
  HttpApiSchema.annotations({ status: 400 })
) {}

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
  subscription_limit_reached: {
    status: 422,
    type: "invalid_request_error",
    title: "Subscription limit reached",
    description: "A program may have at most 100 webhook subscriptions. Delete one before creating another."
  }
} as const satisfies { readonly [C in ErrorCode]: C extends BusinessRuleCode ? BusinessRuleDoc : ErrorCodeDoc }

/** The doc of a code taken from outside (a URL), or undefined when no such code exists. */
export const errorCodeDoc = (code: string): ErrorCodeDoc | undefined =>
  Object.hasOwn(ERROR_CODES, code) ? ERROR_CODES[code as ErrorCode] : undefined

/** Builds an ApiFailure for one of the catalogue's codes; status and type come from its entry. */
export const apiFailure = (
  code: ErrorCode,
  message: string,
  param: string | null,
  extra: Pick<Partial<ApiFailure>, "retryAfterSeconds" | "allow"> = {}
): ApiFailure => {
  const doc: ErrorCodeDoc = ERROR_CODES[code]
  return new ApiFailure({ status: doc.status, type: doc.type, code, message, param, ...extra })
}

/** The one mapping from domain failures to HTTP failures. */
export const toApiFailure = (error: IssuingError): ApiFailure => {
  switch (error._tag) {
    case "InvalidRequest":
      return apiFailure("invalid_request", error.message, error.param)
    case "AuthenticationFailed":
      return apiFailure("authentication_error", error.message, null)
    case "PermissionDenied":
      return apiFailure("permission_denied", error.message, error.param)
    case "NotFound":
      return apiFailure("not_found", error.message, error.param)
    case "Conflict":
      return apiFailure("conflict", error.message, error.param)
    case "BusinessRuleViolation":
      return apiFailure(error.code, error.message, error.param)
    case "RateLimited":
      return apiFailure("rate_limited", "Too many requests for this API key. Retry after the time in Retry-After.", null, {
        retryAfterSeconds: error.retryAfterSeconds
      })
  }
}

/**
 * Runs a domain effect for a handler or the request pipeline: domain failures become ApiFailure;
 * database failures are defects (500 internal_error, nothing stored under the idempotency key).
 */
export const handle = <A, E extends IssuingError | SqlError.SqlError, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, ApiFailure, R> =>
  Effect.catchAll(effect, (error) =>
    error instanceof SqlError.SqlError ? Effect.die(error) : Effect.fail(toApiFailure(error as IssuingError))
  )

/** One decode issue: where (the field's path) and what. */
export interface DecodeIssue {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

/**
 * The 400 of a body, query or batch item that does not decode: `param` is the first issue's path
 * joined with dots (`holder.name`, `program_ids.1`). The rejected value is never echoed: it may be a
 * card number or a secret sent in the wrong field.
 */
export const decodeIssuesFailure = (issues: ReadonlyArray<DecodeIssue>): ApiFailure => {
  const issue = issues[0]
  const param = issue === undefined || issue.path.length === 0 ? null : issue.path.map(String).join(".")
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
