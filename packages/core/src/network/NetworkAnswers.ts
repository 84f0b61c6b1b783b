import * as crypto from "node:crypto"
import type { DeclineReason } from "../cards/Records.js"
import { declineCode, type NetworkDeclineReason, storedEventCode } from "../cards/ResponseCodes.js"
import type { CardEvent, Transaction } from "../ledger/Records.js"
import type { NetworkCardMessage, NetworkMessageType } from "./NetworkRecords.js"

/**
 * What a card network message answers (docs/network.md#response-codes), as pure functions of what
 * the message did: the card event it left on its transaction, or why it found nothing to act on.
 */

/** The response code of a decline reason (the one table: cards/ResponseCodes.ts). */
export { declineCode }

/** The messages the issuer decides: they are approved, partially approved or declined; the others are acknowledged. */
const DECIDED: ReadonlyArray<NetworkMessageType> = ["AUTHORIZATION", "FINANCIAL_AUTHORIZATION", "INCREMENTAL_AUTHORIZATION"]

const CODE_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"

/**
 * The authorization code of an approval (ISO 8583 field 38): six characters [0-9A-Z] drawn from
 * the id of the card event the approval recorded, so the answer and any later reading of it agree
 * without storing the code.
 */
export const authorizationCode = (cardEventId: string): string => {
  const digest = crypto.createHash("sha256").update(cardEventId).digest()
  let code = ""
  for (let i = 0; i < 6; i++) code += CODE_ALPHABET[digest[i]! % CODE_ALPHABET.length]
  return code
}

/** What a message is answered about, beside what it did. */
export interface MessageContext {
  readonly networkMessageId: string
  readonly type: NetworkMessageType
  readonly at: string
}

/**
 * The answer of a message that left `event` on `transaction`, told by the response code the event
 * keeps: an authorization, a financial one or an increment is approved in full (00), in part (10,
 * a partial approval's smaller amount) or declined (its reason's code); any other message is
 * acknowledged (00) with the amount it moved.
 */
export const answerOfEvent = (context: MessageContext, transaction: Transaction, event: CardEvent): NetworkCardMessage => {
  const base = {
    object: "network_card_message" as const,
    network_message_id: context.networkMessageId,
    type: context.type,
    transaction_id: transaction.id,
    created_at: context.at
  }
  const code = event.response_code ?? storedEventCode(event, transaction.request_history.length) ?? "30"
  if (event.result === "DECLINED") {
    return {
      ...base,
      result: "DECLINED",
      approved_amount: 0,
      response_code: code,
      authorization_code: null,
      decline_reason: event.decline_reason ?? "FORMAT_ERROR"
    }
  }
  if (!DECIDED.includes(context.type)) {
    return {
      ...base,
      result: "ACKNOWLEDGED",
      approved_amount: event.amount,
      response_code: code,
      authorization_code: null,
      decline_reason: null
    }
  }
  return {
    ...base,
    result: code === "10" ? "PARTIALLY_APPROVED" : "APPROVED",
    approved_amount: event.amount,
    response_code: code,
    authorization_code: authorizationCode(event.id),
    decline_reason: null
  }
}

/** The answer of a message that wrote its card event last on `transaction` (every message that moves or records one does). */
export const answerOfTransaction = (context: MessageContext, transaction: Transaction): NetworkCardMessage => {
  const event = transaction.card_events.at(-1)
  if (event === undefined) throw new Error("A card message's transaction carries no card event")
  return answerOfEvent(context, transaction, event)
}

/** A decline with nothing recorded: no card, no transaction it fits, or an amount it cannot take. */
export const declinedWithoutRecord = (
  context: MessageContext,
  reason: NetworkDeclineReason | DeclineReason,
  transactionId: string | null
): NetworkCardMessage => ({
  object: "network_card_message",
  network_message_id: context.networkMessageId,
  type: context.type,
  transaction_id: transactionId,
  result: "DECLINED",
  approved_amount: 0,
  response_code: declineCode(reason),
  authorization_code: null,
  decline_reason: reason,
  created_at: context.at
})

/** An acknowledgement that moved nothing (a reversal of a transaction never seen, or of a hold already gone). */
export const acknowledgedWithoutEffect = (context: MessageContext, transactionId: string | null): NetworkCardMessage => ({
  object: "network_card_message",
  network_message_id: context.networkMessageId,
  type: context.type,
  transaction_id: transactionId,
  result: "ACKNOWLEDGED",
  approved_amount: 0,
  response_code: "00",
  authorization_code: null,
  decline_reason: null,
  created_at: context.at
})
