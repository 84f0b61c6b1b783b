import { Data } from "effect"

/**
 * The domain's failures. They know nothing of HTTP: the http package maps each one to a status,
 * an error type and a code in a single table.
 */

/** The request is malformed or violates the schema; `param` names the offending field or header. */
export class InvalidRequest extends Data.TaggedError("InvalidRequest")<{
  readonly message: string
  readonly param: string | null
}> {}

/** The caller could not be identified (missing, malformed, unknown or revoked key; bad session token). */
export class AuthenticationFailed extends Data.TaggedError("AuthenticationFailed")<{
  readonly message: string
}> {}

/** The caller is known but not allowed (role, program access, PAN reveal). */
export class PermissionDenied extends Data.TaggedError("PermissionDenied")<{
  readonly message: string
  readonly param: string | null
}> {}

/** The resource does not exist or is not visible to the caller; `param` names the id parameter. */
export class NotFound extends Data.TaggedError("NotFound")<{
  readonly message: string
  readonly param: string | null
}> {}

/** The operation conflicts with the resource's state or with an earlier idempotent request. */
export class Conflict extends Data.TaggedError("Conflict")<{
  readonly message: string
  readonly param: string | null
}> {}

/**
 * Every business rule a valid request can break. Closed on purpose: the http package's error table
 * must give each one a doc page, so a new rule is added here and there together.
 */
export type BusinessRuleCode =
  | "insufficient_funds"
  | "balance_limit_exceeded"
  | "currency_mismatch"
  | "same_financial_account"
  | "settlement_account_not_allowed"
  | "card_number_space_exhausted"
  | "invalid_time_window"
  | "replay_window_too_large"
  | "event_type_not_subscribed"
  | "event_tag_not_subscribed"
  | "subscription_limit_reached"
  | "amount_exceeds_pending"
  | "amount_exceeds_settled"
  | "amount_exceeds_disputable"
  | "transaction_not_disputable"
  | "cardholder_not_verified"

/** Valid input that breaks a business rule; `code` is the machine-readable rule (e.g. insufficient_funds). */
export class BusinessRuleViolation extends Data.TaggedError("BusinessRuleViolation")<{
  readonly code: BusinessRuleCode
  readonly message: string
  readonly param: string | null
}> {}

/** The caller's request budget is spent; retry after the given number of whole seconds. */
export class RateLimited extends Data.TaggedError("RateLimited")<{
  readonly retryAfterSeconds: number
}> {}

/**
 * Every failure a domain operation can report to a caller. (Not the client's `IssuingError`, the
 * base class of what `@issuing/client` throws.)
 */
export type DomainError =
  | InvalidRequest
  | AuthenticationFailed
  | PermissionDenied
  | NotFound
  | Conflict
  | BusinessRuleViolation
  | RateLimited
