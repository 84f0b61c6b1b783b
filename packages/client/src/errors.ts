/** The `error` object of the platform's envelope (docs/api.md#errors). */
export interface ErrorEnvelope {
  readonly type: string
  /** The machine-readable reason: an HTTP-level code (`invalid_request`, `not_found` …) or a business rule (`insufficient_funds` …). */
  readonly code: string
  readonly message: string
  /** The field, header or id parameter at fault, or null. */
  readonly param: string | null
  readonly request_id: string
  readonly doc_url: string
}

/** Any failure of a call: an error answer, a lost connection or a time-out. */
export class IssuingError extends Error {
  override readonly name: string = "IssuingError"
}

/** The platform answered with an error envelope (status 400 or more). */
export class IssuingApiError extends IssuingError {
  override readonly name: string = "IssuingApiError"
  readonly status: number
  readonly type: string
  readonly code: string
  readonly param: string | null
  readonly requestId: string | null
  readonly docUrl: string | null
  /** The response headers (Retry-After, Allow …). */
  readonly headers: Headers

  constructor(status: number, envelope: ErrorEnvelope, headers: Headers) {
    super(envelope.message)
    this.status = status
    this.type = envelope.type
    this.code = envelope.code
    this.param = envelope.param
    this.requestId = envelope.request_id || headers.get("request-id")
    this.docUrl = envelope.doc_url || null
    this.headers = headers
  }
}

/** 400, 405, 408, 413, 431: the request was malformed or failed validation (`param` names the field). */
export class InvalidRequestError extends IssuingApiError {
  override readonly name: string = "InvalidRequestError"
}
/** 401: no key, or an unknown, malformed or revoked one. */
export class AuthenticationError extends IssuingApiError {
  override readonly name: string = "AuthenticationError"
}
/** 403: the key's role, programs or `pan_reveal` do not allow it. */
export class PermissionError extends IssuingApiError {
  override readonly name: string = "PermissionError"
}
/** 404: the URL or an id the caller cannot see. */
export class NotFoundError extends IssuingApiError {
  override readonly name: string = "NotFoundError"
}
/** 409: the resource's state forbids it, or an Idempotency-Key clash. */
export class ConflictError extends IssuingApiError {
  override readonly name: string = "ConflictError"
}
/** 422: valid input that breaks a business rule (`code` names it, e.g. `insufficient_funds`). */
export class BusinessRuleError extends IssuingApiError {
  override readonly name: string = "BusinessRuleError"
}
/** 429: the key's rate limit, after the retries were spent. */
export class RateLimitError extends IssuingApiError {
  override readonly name: string = "RateLimitError"
}
/** 500 or more, after the retries were spent: nothing was committed; retry with the same Idempotency-Key. */
export class InternalServerError extends IssuingApiError {
  override readonly name: string = "InternalServerError"
}

/** No answer: the connection failed or was dropped, after the retries were spent. */
export class ConnectionError extends IssuingError {
  override readonly name: string = "ConnectionError"
}

/** No answer within the time-out, after the retries were spent. */
export class TimeoutError extends ConnectionError {
  override readonly name: string = "TimeoutError"
}

const byStatus = (status: number) => {
  switch (status) {
    case 401:
      return AuthenticationError
    case 403:
      return PermissionError
    case 404:
      return NotFoundError
    case 409:
      return ConflictError
    case 422:
      return BusinessRuleError
    case 429:
      return RateLimitError
  }
  return status >= 500 ? InternalServerError : InvalidRequestError
}

/** True for the platform's error envelope `{error: {type, code, message, …}}` (used by both clients). */
export const isEnvelope = (value: unknown): value is { error: ErrorEnvelope } => {
  const error = (value as { error?: Record<string, unknown> } | null)?.error
  return (
    typeof error === "object" &&
    error !== null &&
    typeof error.code === "string" &&
    typeof error.type === "string" &&
    typeof error.message === "string"
  )
}

/** The typed error for an error answer; a body that is not the envelope (a proxy's page) still gets one. */
export const errorFromResponse = (status: number, body: unknown, headers: Headers): IssuingApiError => {
  const envelope: ErrorEnvelope = isEnvelope(body)
    ? { ...body.error, param: body.error.param ?? null, request_id: body.error.request_id ?? "", doc_url: body.error.doc_url ?? "" }
    : {
        type: status >= 500 ? "api_error" : "invalid_request_error",
        code: "unexpected_response",
        message: `The server answered ${status} without the platform's error envelope.`,
        param: null,
        request_id: "",
        doc_url: ""
      }
  return new (byStatus(status))(status, envelope, headers)
}
