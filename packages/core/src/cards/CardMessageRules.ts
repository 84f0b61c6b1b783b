import { Either, Option } from "effect"
import type { CardMessage, CardRefusal } from "../ledger/CardPosting.js"
import type { CardEvent, CardEventType, Merchant, RequestHistoryEntry, Transaction } from "../ledger/Records.js"
import { BusinessRuleViolation, Conflict } from "../platform/Errors.js"
import { newId } from "../platform/Ids.js"
import type { Decision } from "./DecisionRules.js"
import type { Card, DeclineReason, SimulateAmount, SimulateClearing } from "./Records.js"
import { approvalCode, declineCode } from "./ResponseCodes.js"

/**
 * What each card message does to its card transaction (docs/card-transactions.md#the-messages), as
 * pure functions over what was read: the transaction after the message and what the ledger moves,
 * or why the message is refused (nothing written). The service (Authorizations.ts) finds what they
 * need, asks the program when they say so and posts what they decide, once.
 */

/** The change one message makes: the transaction after it and what the ledger moves. */
export type Plan = Omit<CardMessage, "write" | "financialAccountId">

/**
 * What a message posts: its plan and, for an approval, the decline it records instead when the
 * posting refuses it for the funds or the card's state (checked under the locks the posting takes).
 */
export interface Posting {
  readonly plan: Plan
  readonly declined: ((reason: DeclineReason) => Plan) | null
}

/**
 * What an authorization or increment decided before it posts: decline for `reason`, or approve
 * `amount`; `history` holds the program's real-time decision when it was asked.
 */
export type Verdict =
  | { readonly _tag: "Declined"; readonly reason: DeclineReason; readonly history: ReadonlyArray<RequestHistoryEntry> }
  | { readonly _tag: "Approved"; readonly amount: number; readonly history: ReadonlyArray<RequestHistoryEntry> }

/**
 * One message's card event, with the response code it is answered with: a decline's code, `10`
 * when less than `requested` was approved (a partial approval), else `00`.
 */
const cardEvent = (type: CardEventType, amount: number, decline: DeclineReason | null, at: string, requested = amount): CardEvent => ({
  id: newId(),
  type,
  amount,
  result: decline === null ? "APPROVED" : "DECLINED",
  decline_reason: decline,
  response_code: decline === null ? approvalCode(requested, amount) : declineCode(decline),
  created_at: at
})

const conflict = (message: string) => new Conflict({ message, param: "transaction_id" })

const exceeds = (code: "amount_exceeds_pending" | "amount_exceeds_settled", message: string) =>
  new BusinessRuleViolation({ code, message, param: "amount" })

/** A message that only records (a decline): nothing moves. */
const recordOnly = (transaction: Transaction): Plan => ({
  transaction,
  pendingDelta: 0,
  requireAvailable: 0,
  activeCardId: null,
  transfer: null
})

/**
 * The verdict of the built-in checks' decline, if any (then the program was not asked), and the
 * program's decision, if it was asked: its decline is WEBHOOK_DECLINED; its approval approves its
 * amount (a partial approval's smaller one); no decision approves what was asked.
 */
export const verdictOf = (builtIn: DeclineReason | null, decision: Option.Option<Decision>, requested: number): Verdict => {
  if (builtIn !== null) return { _tag: "Declined", reason: builtIn, history: [] }
  const history = Option.match(decision, { onNone: () => [], onSome: (d) => [d.record] })
  if (Option.isSome(decision) && !decision.value.approved) return { _tag: "Declined", reason: "WEBHOOK_DECLINED", history }
  return { _tag: "Approved", amount: Option.match(decision, { onNone: () => requested, onSome: (d) => d.amount }), history }
}

/** An approval the spend rule refuses under the locks: a SPENDING_LIMIT_EXCEEDED decline, with the decision it had. */
export const overSpendingLimit = (verdict: Verdict): Verdict => ({
  _tag: "Declined",
  reason: "SPENDING_LIMIT_EXCEEDED",
  history: verdict.history
})

/** The decline a posting's refusal records. */
export const refusalDecline = (refusal: CardRefusal): DeclineReason =>
  refusal === "insufficient_funds" ? "INSUFFICIENT_FUNDS" : refusal === "card_frozen" ? "CARD_FROZEN" : "CARD_CLOSED"

/**
 * A message that may start a card transaction, however it arrived: a network message
 * (docs/network.md) or the sandbox's simulation of one, which builds the same (one path).
 */
export interface StartingMessage {
  readonly amount: number
  /** The currency the message names, or null for the card account's. */
  readonly currency: string | null
  readonly mcc: string | null
  readonly merchantName: string | null
  readonly merchant: Merchant | null
  readonly networkTransactionId: string | null
}

/** An authorization (or a financial one): a starting message the built-in checks and the program decide. */
export interface AuthorizationMessage extends StartingMessage {
  readonly kind: "AUTHORIZATION" | "FINANCIAL_AUTHORIZATION"
  readonly partialApprovalCapable: boolean
  /**
   * The decline the card's credentials as sent call for (an expiry or code that is not the card's:
   * CARD_EXPIRED, INCORRECT_CVV), checked before everything else; null when they match or none was sent.
   */
  readonly credentialDecline: DeclineReason | null
}

/** A new card transaction as a message opens it, before anything is decided: what is asked, nothing held. */
export const newAuthorization = (programId: string, card: Card, message: StartingMessage, currency: string, at: string): Transaction => ({
  id: newId(),
  object: "transaction",
  program_id: programId,
  status: "PENDING",
  amount: message.amount,
  currency,
  card_id: card.id,
  financial_account_id: card.financial_account_id,
  decline_reason: null,
  mcc: message.mcc,
  merchant_name: message.merchantName,
  merchant: message.merchant,
  network_transaction_id: message.networkTransactionId,
  authorized_amount: message.amount,
  pending_amount: 0,
  settled_amount: 0,
  disputed_amount: 0,
  expires_at: null,
  card_events: [],
  request_history: [],
  created_at: at,
  updated_at: at
})

/**
 * What an authorization posts for its verdict: a DECLINED transaction (nothing moves), or — approved
 * — a hold of the amount open until `holdExpiresAt`, or for a FINANCIAL_AUTHORIZATION its clearing
 * at once (SETTLED). An approval needs the amount available and the card ACTIVE when it posts.
 */
export const authorizationPosting = (
  opened: Transaction,
  kind: "AUTHORIZATION" | "FINANCIAL_AUTHORIZATION",
  verdict: Verdict,
  holdExpiresAt: string
): Posting => {
  const at = opened.created_at
  const declined = (reason: DeclineReason): Plan =>
    recordOnly({
      ...opened,
      status: "DECLINED",
      decline_reason: reason,
      card_events: [cardEvent(kind, opened.amount, reason, at)],
      request_history: verdict.history
    })
  if (verdict._tag === "Declined") return { plan: declined(verdict.reason), declined: null }
  const { amount } = verdict
  const single = kind === "FINANCIAL_AUTHORIZATION"
  const transaction: Transaction = {
    ...opened,
    status: single ? "SETTLED" : "PENDING",
    amount,
    authorized_amount: amount,
    pending_amount: single ? 0 : amount,
    settled_amount: single ? amount : 0,
    expires_at: single ? null : holdExpiresAt,
    card_events: [cardEvent(kind, amount, null, at, opened.amount)],
    request_history: verdict.history
  }
  const plan: Plan = {
    transaction,
    pendingDelta: single ? 0 : amount,
    requireAvailable: amount,
    activeCardId: opened.card_id,
    transfer: single ? { kind: "clearing", amount } : null
  }
  return { plan, declined }
}

/** The card of a card transaction; a transfer-driven transaction takes no card message (409). */
export const cardIdOf = (t: Transaction): Either.Either<string, Conflict> =>
  t.card_id === null ? Either.left(conflict("The transaction is not a card transaction.")) : Either.right(t.card_id)

/** Only a PENDING card transaction takes an increment (409 otherwise). */
export const incrementable = (t: Transaction): Either.Either<Transaction, Conflict> =>
  t.status === "PENDING"
    ? Either.right(t)
    : Either.left(conflict(`The card transaction is ${t.status}; only a PENDING one takes an increment.`))

/**
 * What an increment of `requested` posts on `t` (as locked) for its verdict: a DECLINED card event
 * with the hold unchanged, or the approved amount added to the hold and the authorized total.
 */
export const incrementPosting = (t: Transaction, requested: number, verdict: Verdict, at: string): Posting => {
  const declined = (reason: DeclineReason): Plan =>
    recordOnly({
      ...t,
      card_events: [...t.card_events, cardEvent("INCREMENTAL_AUTHORIZATION", requested, reason, at)],
      request_history: [...t.request_history, ...verdict.history],
      updated_at: at
    })
  if (verdict._tag === "Declined") return { plan: declined(verdict.reason), declined: null }
  const { amount } = verdict
  const plan: Plan = {
    transaction: {
      ...t,
      amount: t.amount + amount,
      authorized_amount: t.authorized_amount! + amount,
      pending_amount: t.pending_amount! + amount,
      card_events: [...t.card_events, cardEvent("INCREMENTAL_AUTHORIZATION", amount, null, at, requested)],
      request_history: [...t.request_history, ...verdict.history],
      updated_at: at
    },
    pendingDelta: amount,
    requireAvailable: amount,
    activeCardId: t.card_id,
    transfer: null
  }
  return { plan, declined }
}

/**
 * A clearing: posts `amount` (default: the hold; after a void or an expiry, what was authorized and
 * not cleared — a late presentment) wallet → settlement, and releases the hold, or only what it
 * cleared when not `final`. Never refused for funds.
 */
export const clearingPlan = (t: Transaction, input: SimulateClearing, at: string): Either.Either<Plan, Conflict> => {
  if (t.status === "DECLINED") return Either.left(conflict("The card transaction was declined; nothing can clear it."))
  const hold = t.pending_amount!
  const fallback = t.status === "PENDING" ? hold : t.status === "SETTLED" ? 0 : t.authorized_amount! - t.settled_amount!
  const amount = input.amount ?? fallback
  if (amount <= 0) return Either.left(conflict(`The card transaction is ${t.status} with nothing pending; give the clearing's amount.`))
  const release = (input.final ?? true) ? hold : Math.min(amount, hold)
  const pending = hold - release
  return Either.right({
    transaction: {
      ...t,
      status: pending > 0 ? "PENDING" : "SETTLED",
      pending_amount: pending,
      settled_amount: t.settled_amount! + amount,
      card_events: [...t.card_events, cardEvent("CLEARING", amount, null, at)],
      updated_at: at
    },
    pendingDelta: -release,
    requireAvailable: 0,
    activeCardId: null,
    transfer: { kind: "clearing", amount }
  })
}

/** A hold released (reversal or expiry): VOIDED or EXPIRED when nothing cleared, SETTLED when some did. */
const released = (t: Transaction, type: CardEventType, amount: number, at: string, closed: "VOIDED" | "EXPIRED"): Plan => {
  const pending = t.pending_amount! - amount
  return {
    transaction: {
      ...t,
      status: pending > 0 ? "PENDING" : t.settled_amount! > 0 ? "SETTLED" : closed,
      pending_amount: pending,
      card_events: [...t.card_events, cardEvent(type, amount, null, at)],
      updated_at: at
    },
    pendingDelta: -amount,
    requireAvailable: 0,
    activeCardId: null,
    transfer: null
  }
}

/** A reversal: releases `amount` of an open hold (default: all of it), never more. */
export const reversalPlan = (t: Transaction, input: SimulateAmount, at: string): Either.Either<Plan, Conflict | BusinessRuleViolation> => {
  if (t.status !== "PENDING") return Either.left(conflict(`The card transaction is ${t.status}; only an open hold can be reversed.`))
  const amount = input.amount ?? t.pending_amount!
  if (amount > t.pending_amount!)
    return Either.left(exceeds("amount_exceeds_pending", `A reversal may release at most the open hold (${t.pending_amount} minor units).`))
  return Either.right(released(t, "AUTHORIZATION_REVERSAL", amount, at, "VOIDED"))
}

/** A return: refunds `amount` of what settled (default: all of it), settlement → wallet. */
export const returnPlan = (t: Transaction, input: SimulateAmount, at: string): Either.Either<Plan, Conflict | BusinessRuleViolation> => {
  if (t.status === "DECLINED") return Either.left(conflict("The card transaction was declined; there is nothing to return."))
  const settled = t.settled_amount!
  const amount = input.amount ?? settled
  if (amount > settled || amount <= 0)
    return Either.left(exceeds("amount_exceeds_settled", `A return may refund at most what settled (${settled} minor units).`))
  return Either.right({
    transaction: {
      ...t,
      settled_amount: settled - amount,
      card_events: [...t.card_events, cardEvent("RETURN", amount, null, at)],
      updated_at: at
    },
    pendingDelta: 0,
    requireAvailable: 0,
    activeCardId: null,
    transfer: { kind: "return", amount }
  })
}

/** An expiry: releases the whole open hold at once (an AUTHORIZATION_EXPIRY card event). */
export const expiryPlan = (t: Transaction, at: string): Plan => released(t, "AUTHORIZATION_EXPIRY", t.pending_amount!, at, "EXPIRED")

/** Only an open hold expires (409 otherwise). */
export const expirable = (t: Transaction, at: string): Either.Either<Plan, Conflict> =>
  t.status === "PENDING"
    ? Either.right(expiryPlan(t, at))
    : Either.left(conflict(`The card transaction is ${t.status}; only an open hold can expire.`))

/**
 * A stand-in advice that opens a transaction (docs/network.md#authorization_advice): the network
 * approved on the issuer's behalf, so the amount is held whatever the checks say now — no funds or
 * card check, and the wallet's available balance may go below zero — until `holdExpiresAt`.
 */
export const adviceOpening = (opened: Transaction, holdExpiresAt: string): Plan => ({
  transaction: {
    ...opened,
    status: "PENDING",
    pending_amount: opened.amount,
    expires_at: holdExpiresAt,
    card_events: [cardEvent("AUTHORIZATION_ADVICE", opened.amount, null, opened.created_at)]
  },
  pendingDelta: opened.amount,
  requireAvailable: 0,
  activeCardId: null,
  transfer: null
})

/**
 * A stand-in advice on a known transaction: its hold becomes the advised amount, whatever the checks
 * say. An open hold grows or shrinks to it (what was authorized grows with it); a declined
 * transaction — the issuer's answer the network did not wait for — is held after all. Any other
 * state has no hold to set (409).
 */
export const advicePlan = (t: Transaction, amount: number, at: string, holdExpiresAt: string): Either.Either<Plan, Conflict> => {
  if (t.status !== "PENDING" && t.status !== "DECLINED")
    return Either.left(conflict(`The card transaction is ${t.status}; an advice sets only an open or declined hold.`))
  const pending = t.status === "PENDING" ? t.pending_amount! : 0
  const authorized = t.status === "PENDING" ? t.authorized_amount! + Math.max(0, amount - pending) : amount
  return Either.right({
    transaction: {
      ...t,
      status: "PENDING",
      decline_reason: null,
      amount: authorized,
      authorized_amount: authorized,
      pending_amount: amount,
      expires_at: t.status === "PENDING" ? t.expires_at : holdExpiresAt,
      card_events: [...t.card_events, cardEvent("AUTHORIZATION_ADVICE", amount, null, at)],
      updated_at: at
    },
    pendingDelta: amount - pending,
    requireAvailable: 0,
    activeCardId: null,
    transfer: null
  })
}

/**
 * A clearing with no authorization (a force post, or a clearing of a transaction never seen;
 * docs/network.md#clearing-and-force_post): a SETTLED transaction that authorized nothing, its
 * amount posted wallet → settlement. Never refused for funds or the card's state (the merchant has
 * been paid): it may take the wallet's balance below zero.
 */
export const forcePostPlan = (opened: Transaction): Plan => ({
  transaction: {
    ...opened,
    status: "SETTLED",
    authorized_amount: 0,
    settled_amount: opened.amount,
    card_events: [cardEvent("CLEARING", opened.amount, null, opened.created_at)]
  },
  pendingDelta: 0,
  requireAvailable: 0,
  activeCardId: null,
  transfer: { kind: "clearing", amount: opened.amount }
})

/**
 * A refund with no purchase (docs/network.md#return): a SETTLED transaction that authorized nothing
 * and settled minus its amount (cleared − returned), posted settlement → wallet.
 */
export const unlinkedReturnPlan = (opened: Transaction): Plan => ({
  transaction: {
    ...opened,
    status: "SETTLED",
    authorized_amount: 0,
    settled_amount: -opened.amount,
    card_events: [cardEvent("RETURN", opened.amount, null, opened.created_at)]
  },
  pendingDelta: 0,
  requireAvailable: 0,
  activeCardId: null,
  transfer: { kind: "return", amount: opened.amount }
})
