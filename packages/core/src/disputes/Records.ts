import { Schema } from "effect"
import { Uuid } from "../platform/Ids.js"
import { AmountMinor } from "../ledger/Records.js"

/**
 * Dispute records (docs/disputes.md): a program's dispute of a card transaction's settled money on
 * its cardholder's behalf. One schema each, used by the HTTP API to encode and decode and, through
 * `typeof X.Type`, by the service and the store. Amounts are integers in minor units.
 */

/** Why the cardholder disputes the charge (the reasons Stripe's and Lithic's disputes share). */
export const DISPUTE_REASONS = ["FRAUD", "NOT_RECEIVED", "DUPLICATE", "INCORRECT_AMOUNT", "CANCELED", "OTHER"] as const
export const DisputeReason = Schema.Literal(...DISPUTE_REASONS)
export type DisputeReason = typeof DisputeReason.Type

/** SUBMITTED until the network decides; WON keeps the provisional credit, LOST takes it back. */
export const DISPUTE_STATUSES = ["SUBMITTED", "WON", "LOST"] as const
export const DisputeStatus = Schema.Literal(...DISPUTE_STATUSES)
export type DisputeStatus = typeof DisputeStatus.Type

/** The outcomes a resolution may record. */
export const DisputeOutcome = Schema.Literal("WON", "LOST")
export type DisputeOutcome = typeof DisputeOutcome.Type

/** Longest explanation of a dispute, in characters. */
export const MAX_EXPLANATION_LENGTH = 1000

export const Dispute = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("dispute"),
  program_id: Schema.String,
  /** The disputed card transaction. */
  transaction_id: Schema.String,
  /** The disputed part of the transaction's settled money, credited provisionally at submission. */
  amount: Schema.Number,
  currency: Schema.String,
  reason: DisputeReason.annotations({ description: "Why the cardholder disputes the charge." }),
  explanation: Schema.NullOr(Schema.String).annotations({ description: "The cardholder's own words, or null." }),
  status: DisputeStatus,
  provisional_credit_transfer_id: Schema.String.annotations({
    description: "The provisional credit (settlement → the card's wallet account), posted at submission."
  }),
  reversal_transfer_id: Schema.NullOr(Schema.String).annotations({
    description: "The transfer that took the credit back when LOST (wallet → settlement), else null."
  }),
  created_at: Schema.String,
  updated_at: Schema.String
}).annotations({ identifier: "Dispute" })
export type Dispute = typeof Dispute.Type

/** POST /v1/disputes: `amount` defaults to all that is disputable. */
export const CreateDispute = Schema.Struct({
  transaction_id: Uuid,
  amount: Schema.optional(Schema.NullOr(AmountMinor)),
  reason: DisputeReason.annotations({ description: "Why the cardholder disputes the charge." }),
  explanation: Schema.optional(
    Schema.NullOr(
      Schema.String.pipe(
        Schema.maxLength(MAX_EXPLANATION_LENGTH, { message: () => `must be at most ${MAX_EXPLANATION_LENGTH} characters` })
      )
    ).annotations({ description: `The cardholder's own words, at most ${MAX_EXPLANATION_LENGTH} characters.` })
  )
}).annotations({ identifier: "CreateDispute" })
export type CreateDispute = typeof CreateDispute.Type

/** POST /v1/simulate/disputes/{id}/resolve and /v1/network/disputes/{id}/resolve. */
export const ResolveDispute = Schema.Struct({
  outcome: DisputeOutcome.annotations({ description: "WON keeps the provisional credit; LOST takes it back." })
}).annotations({ identifier: "ResolveDispute" })
export type ResolveDispute = typeof ResolveDispute.Type

/** The filters of GET /v1/disputes (paging aside). */
export const DisputeFilter = Schema.Struct({
  transaction_id: Schema.optional(Uuid),
  status: Schema.optional(DisputeStatus)
})
export type DisputeFilter = typeof DisputeFilter.Type
