import type { TimeoutDecision } from "./AuthorizationEndpointRecords.js"

/**
 * The pure half of a real-time decision (docs/card-transactions.md#real-time-decisions): what an
 * answer — or its absence — means for an authorization. The service asks; these functions decide.
 */

/** What a decider answers (the receiver's JSON body, or the embedded decider's value). */
export interface AuthorizationAnswer {
  readonly approved: boolean
  readonly amount?: number
  readonly decline_reason?: string
  readonly metadata?: Record<string, unknown>
}

/** One decision as `request_history` records it. */
export interface DecisionRecord {
  /** The approved amount when approved (a partial approval's smaller one), the requested amount when declined. */
  readonly amount: number
  readonly approved: boolean
  readonly reason: "webhook_approved" | "webhook_declined" | "webhook_timeout" | "webhook_error"
  readonly created_at: string
}

/** What the authorization does: approve `amount` (the approved amount, 0 when declined) or decline. */
export interface Decision {
  readonly approved: boolean
  readonly amount: number
  readonly record: DecisionRecord
}

/** How asking ended: an answer, no answer in time, or no usable answer (connection error, non-2xx, bad JSON, ill-typed). */
export type AskResult =
  | { readonly _tag: "Answered"; readonly answer: AuthorizationAnswer }
  | { readonly _tag: "TimedOut" }
  | { readonly _tag: "Failed"; readonly reason: string }

/** The part of the request a decision depends on. */
export interface DecisionSubject {
  readonly amount: number
  readonly partial_approval_capable: boolean
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * The answer in a value, or why it is not one: an object with a boolean `approved`, and if present
 * an integer `amount`, a string `decline_reason` and an object `metadata`. Other fields are ignored.
 */
export const readAnswer = (value: unknown): AuthorizationAnswer | string => {
  if (!isPlainObject(value)) return "the answer is not a JSON object"
  const { approved, amount, decline_reason, metadata } = value
  if (typeof approved !== "boolean") return "approved must be a boolean"
  if (amount !== undefined && !Number.isSafeInteger(amount)) return "amount must be an integer"
  if (decline_reason !== undefined && typeof decline_reason !== "string") return "decline_reason must be a string"
  if (metadata !== undefined && !isPlainObject(metadata)) return "metadata must be an object"
  return {
    approved,
    ...(amount === undefined ? {} : { amount: amount as number }),
    ...(decline_reason === undefined ? {} : { decline_reason }),
    ...(metadata === undefined ? {} : { metadata })
  }
}

/** The answer in an HTTP response: a 2xx whose body is JSON of an answer. */
export const answerOfResponse = (status: number, body: string): AskResult => {
  if (status < 200 || status > 299) return { _tag: "Failed", reason: `status ${status}` }
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    return { _tag: "Failed", reason: "the answer is not JSON" }
  }
  const answer = readAnswer(parsed)
  return typeof answer === "string" ? { _tag: "Failed", reason: answer } : { _tag: "Answered", answer }
}

const approve = (amount: number, createdAt: string): Decision => ({
  approved: true,
  amount,
  record: { amount, approved: true, reason: "webhook_approved", created_at: createdAt }
})

const decline = (subject: DecisionSubject, reason: DecisionRecord["reason"], createdAt: string): Decision => ({
  approved: false,
  amount: 0,
  record: { amount: subject.amount, approved: false, reason, created_at: createdAt }
})

/**
 * The decision for how asking ended:
 * - approved without `amount`, or with the requested amount: approved in full;
 * - approved with `0 < amount < requested`: a partial approval when the request is
 *   `partial_approval_capable`, else declined (the receiver did not approve the full amount);
 * - approved with `amount` above the request, or ≤ 0 (and not the requested amount): declined —
 *   the platform never approves an amount other than one the receiver named and the network can take;
 * - declined: declined (`webhook_declined`);
 * - no answer in time: `timeoutDecision` (`webhook_timeout`); no usable answer: the same (`webhook_error`).
 *   APPROVE approves the requested amount in full.
 */
export const decide = (subject: DecisionSubject, result: AskResult, timeoutDecision: TimeoutDecision, createdAt: string): Decision => {
  if (result._tag !== "Answered") {
    const reason = result._tag === "TimedOut" ? "webhook_timeout" : "webhook_error"
    return timeoutDecision === "APPROVE"
      ? { approved: true, amount: subject.amount, record: { amount: subject.amount, approved: true, reason, created_at: createdAt } }
      : decline(subject, reason, createdAt)
  }
  const { answer } = result
  if (!answer.approved) return decline(subject, "webhook_declined", createdAt)
  if (answer.amount === undefined || answer.amount === subject.amount) return approve(subject.amount, createdAt)
  if (answer.amount > 0 && answer.amount < subject.amount && subject.partial_approval_capable) return approve(answer.amount, createdAt)
  return decline(subject, "webhook_declined", createdAt)
}
