import { Schema } from "effect"
import { WebhookUrl } from "../webhooks/Records.js"

/**
 * The authorization endpoint of a program (docs/card-transactions.md#real-time-decisions): where
 * the platform asks, in real time, whether to approve an authorization its own checks approved.
 * One schema per record and per request input, as for webhook subscriptions.
 */

/** Bounds of real-time decisions: a bound on everything. */
export const AUTHORIZATION_DECISION_LIMITS = {
  /** How long a decision waits for its answer unless the endpoint (or the host) says otherwise. */
  defaultTimeoutMs: 2000,
  minTimeoutMs: 100,
  maxTimeoutMs: 5000,
  /** Bytes of an answer read at most; a longer answer is an error (webhook_error). */
  maxAnswerBytes: 64 * 1024,
  /** How long a rotated-out secret keeps signing beside the new one. */
  previousSecretTtlMs: 24 * 60 * 60 * 1000,
  /** Programs whose endpoint (or its absence) is cached per node; entries retire on any published change. */
  cacheMaxEntries: 10_000,
  cacheMaxAgeMs: 60_000
} as const

/** What applies when the receiver does not answer usably (timeout, connection error, non-2xx, bad JSON). */
export const TIMEOUT_DECISIONS = ["DECLINE", "APPROVE"] as const
export type TimeoutDecision = (typeof TIMEOUT_DECISIONS)[number]
const isTimeoutDecision = (value: unknown): value is TimeoutDecision => (TIMEOUT_DECISIONS as ReadonlyArray<unknown>).includes(value)

/** `timeout_decision` of a request body: DECLINE or APPROVE (400 naming the field otherwise). */
export const TimeoutDecisionInput = Schema.String.pipe(
  Schema.filter((text): text is TimeoutDecision => isTimeoutDecision(text), { message: () => "must be DECLINE or APPROVE" })
)

/** True for a whole number of milliseconds a decision may wait. */
export const isDecisionTimeoutMs = (value: unknown): value is number =>
  typeof value === "number" &&
  Number.isInteger(value) &&
  value >= AUTHORIZATION_DECISION_LIMITS.minTimeoutMs &&
  value <= AUTHORIZATION_DECISION_LIMITS.maxTimeoutMs

/** `timeout_ms` of a request body: an integer from 100 to 5000. */
export const DecisionTimeoutMs = Schema.Number.pipe(
  Schema.filter((value) => isDecisionTimeoutMs(value), {
    message: () => `must be an integer from ${AUTHORIZATION_DECISION_LIMITS.minTimeoutMs} to ${AUTHORIZATION_DECISION_LIMITS.maxTimeoutMs}`
  })
)

/** What the timeout fields mean, for the record and the bodies alike. */
const TIMEOUT_MS = `How long a decision waits for the endpoint's answer, in milliseconds (${AUTHORIZATION_DECISION_LIMITS.minTimeoutMs} to ${AUTHORIZATION_DECISION_LIMITS.maxTimeoutMs}).`
const TIMEOUT_DECISION = "What an authorization becomes when the endpoint does not answer in time or answers an error: DECLINE or APPROVE."

const endpointFields = {
  id: Schema.String,
  object: Schema.Literal("authorization_endpoint"),
  program_id: Schema.String,
  url: Schema.String,
  timeout_ms: Schema.Number.annotations({ description: TIMEOUT_MS }),
  timeout_decision: Schema.Literal(...TIMEOUT_DECISIONS).annotations({ description: TIMEOUT_DECISION }),
  disabled: Schema.Boolean,
  created_at: Schema.String,
  updated_at: Schema.String
}

/** An authorization endpoint as the API shows it; never carries its secret. */
export const AuthorizationEndpoint = Schema.Struct(endpointFields).annotations({ identifier: "AuthorizationEndpoint" })
export type AuthorizationEndpoint = typeof AuthorizationEndpoint.Type

/** The endpoint as created or rotated: the only responses that show its signing secret. */
export const AuthorizationEndpointWithSecret = Schema.Struct({ ...endpointFields, secret: Schema.String }).annotations({
  identifier: "AuthorizationEndpointWithSecret"
})
export type AuthorizationEndpointWithSecret = typeof AuthorizationEndpointWithSecret.Type

/** The stored endpoint: its sealed secrets beside the public fields. */
export interface StoredAuthorizationEndpoint extends AuthorizationEndpoint {
  readonly secret_sealed: string
  /** The secret replaced by the last rotation, still signing until `previous_secret_expires_at`. */
  readonly previous_secret_sealed: string | null
  readonly previous_secret_expires_at: string | null
}

/** The body of POST /v1/authorization-endpoints. The URL's form is a webhook URL's; where it may point is checked by the service. */
export const CreateAuthorizationEndpoint = Schema.Struct({
  url: WebhookUrl,
  timeout_ms: Schema.optional(DecisionTimeoutMs).annotations({
    description: `${TIMEOUT_MS} Default ${AUTHORIZATION_DECISION_LIMITS.defaultTimeoutMs}.`
  }),
  timeout_decision: Schema.optional(TimeoutDecisionInput).annotations({ description: `${TIMEOUT_DECISION} Default DECLINE.` })
})
export type CreateAuthorizationEndpoint = typeof CreateAuthorizationEndpoint.Type

/** The body of PATCH /v1/authorization-endpoints/{id}: the fields to change. */
export const UpdateAuthorizationEndpoint = Schema.Struct({
  url: Schema.optional(WebhookUrl),
  timeout_ms: Schema.optional(DecisionTimeoutMs).annotations({ description: TIMEOUT_MS }),
  timeout_decision: Schema.optional(TimeoutDecisionInput).annotations({ description: TIMEOUT_DECISION }),
  disabled: Schema.optional(Schema.Boolean)
})
export type UpdateAuthorizationEndpoint = typeof UpdateAuthorizationEndpoint.Type
