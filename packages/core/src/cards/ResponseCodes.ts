import { Schema } from "effect"
import type { DeclineReason } from "./Records.js"

/**
 * The ISO 8583 response codes (field 39) of card messages (docs/network.md#response-codes): the
 * one table of them. A card event keeps the code its message was answered with, and the network's
 * answer reads it from there, so the console and the API show what the network was told.
 */

/**
 * `00` approved, `10` partial approval, `51` insufficient funds, `05` declined by the program's
 * real-time decision, `14` unknown card number, `54` expired card or wrong expiry, `N7` wrong
 * verification code, `62` frozen card, `46` closed card, `57` merchant category not allowed, `61`
 * spending limit exceeded, `13` invalid amount, `30` format error.
 */
export const RESPONSE_CODES = ["00", "10", "51", "05", "14", "54", "N7", "62", "46", "57", "61", "13", "30"] as const
export const ResponseCode = Schema.Literal(...RESPONSE_CODES)
export type ResponseCode = typeof ResponseCode.Type

/**
 * Why a message was declined without a card transaction to record it on: no card has the number
 * (or none the key may reach), an amount the transaction cannot take, a message that does not fit it.
 */
export const NETWORK_DECLINE_REASONS = ["UNKNOWN_CARD", "INVALID_AMOUNT", "FORMAT_ERROR"] as const
export type NetworkDeclineReason = (typeof NETWORK_DECLINE_REASONS)[number]

/**
 * The response code of each decline. A closed table: a decline reason added to the cards' or the
 * network's list does not compile until it has its code here.
 */
const DECLINE_CODES: Record<DeclineReason | NetworkDeclineReason, ResponseCode> = {
  INSUFFICIENT_FUNDS: "51",
  WEBHOOK_DECLINED: "05",
  CARD_FROZEN: "62",
  CARD_CLOSED: "46",
  MCC_NOT_ALLOWED: "57",
  MCC_BLOCKED: "57",
  MERCHANT_COUNTRY_NOT_ALLOWED: "57",
  SPENDING_LIMIT_EXCEEDED: "61",
  CARD_EXPIRED: "54",
  INCORRECT_CVV: "N7",
  UNKNOWN_CARD: "14",
  INVALID_AMOUNT: "13",
  FORMAT_ERROR: "30"
}

/** The response code of a decline reason. */
export const declineCode = (reason: DeclineReason | NetworkDeclineReason): ResponseCode => DECLINE_CODES[reason]

/** The response code of an approval: `10` when less than was asked was approved (a partial approval), else `00`. */
export const approvalCode = (requested: number, approved: number): ResponseCode => (approved < requested ? "10" : "00")

/** The messages the issuer decides (approve in full, in part, or decline); the others are acknowledged with `00`. */
const DECIDED_EVENT_TYPES: ReadonlyArray<string> = ["AUTHORIZATION", "FINANCIAL_AUTHORIZATION", "INCREMENTAL_AUTHORIZATION"]

/**
 * The response code of a card event stored before events kept theirs (docs/decisions.md#response-codes-on-card-events),
 * where what was stored tells it: a decline's from its reason; `00` for an acknowledged message;
 * `00` for an approval on a transaction no program decision was asked about (only a decision
 * approves less than asked). Null where it cannot be told: an approval after a decision (the
 * amount asked was not kept), or a decline reason this table does not know.
 */
export const storedEventCode = (
  event: { readonly type: string; readonly result: string; readonly decline_reason: string | null },
  decisionsAsked: number
): ResponseCode | null => {
  if (event.result === "DECLINED") {
    const reason = event.decline_reason
    return reason !== null && Object.hasOwn(DECLINE_CODES, reason) ? DECLINE_CODES[reason as DeclineReason] : null
  }
  if (!DECIDED_EVENT_TYPES.includes(event.type)) return "00"
  return decisionsAsked === 0 ? "00" : null
}
