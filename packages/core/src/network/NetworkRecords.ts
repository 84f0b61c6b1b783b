import { ParseResult, Schema } from "effect"
import { CardNumberText, MerchantInput } from "../cards/Records.js"
import { ResponseCode } from "../cards/ResponseCodes.js"
import { AmountMinor, Currency, isKnownCurrency } from "../ledger/Records.js"

/**
 * Card network messages as a network gateway or processor sends them (docs/network.md): the
 * request of POST /v1/network/card-messages, decoded once at the edge, and its answer.
 */

/** The eight messages a network sends about a card transaction (docs/network.md#the-messages). */
export const NETWORK_MESSAGE_TYPES = [
  "AUTHORIZATION",
  "FINANCIAL_AUTHORIZATION",
  "INCREMENTAL_AUTHORIZATION",
  "AUTHORIZATION_ADVICE",
  "AUTHORIZATION_REVERSAL",
  "CLEARING",
  "FORCE_POST",
  "RETURN"
] as const
export const NetworkMessageType = Schema.Literal(...NETWORK_MESSAGE_TYPES)
export type NetworkMessageType = typeof NetworkMessageType.Type

/** The messages that may start a card transaction: each carries the card. */
export const STARTING_MESSAGE_TYPES: ReadonlyArray<NetworkMessageType> = [
  "AUTHORIZATION",
  "FINANCIAL_AUTHORIZATION",
  "AUTHORIZATION_ADVICE",
  "FORCE_POST",
  "RETURN"
]

/** Longest network message or transaction id, in characters. */
export const MAX_NETWORK_ID_LENGTH = 64

/** A network's id: 1 to 64 printable ASCII characters, not blank. */
const NetworkId = Schema.String.pipe(
  Schema.pattern(/^[\x20-\x7e]{1,64}$/, { message: () => `must be 1 to ${MAX_NETWORK_ID_LENGTH} printable ASCII characters` }),
  Schema.filter((id) => id.trim().length > 0 || `must be 1 to ${MAX_NETWORK_ID_LENGTH} printable ASCII characters`)
)

/** A currency a network may name: an ISO 4217 code the platform knows. */
const NetworkCurrency = Currency.pipe(Schema.filter((code) => isKnownCurrency(code) || "must be a known ISO 4217 currency code"))

/** The card as a message presents it: its number, and its expiry and verification code when the terminal read them. */
export const PresentedCard = Schema.Struct({
  number: Schema.propertySignature(CardNumberText).annotations({ description: "The full card number (PAN)." }),
  exp_month: Schema.optional(Schema.NullOr(Schema.Int.pipe(Schema.between(1, 12, { message: () => "must be a month, 1 to 12" })))),
  exp_year: Schema.optional(Schema.NullOr(Schema.Int.pipe(Schema.between(2000, 2099, { message: () => "must be a four-digit year" })))),
  cvv: Schema.optional(
    Schema.NullOr(Schema.String.pipe(Schema.pattern(/^\d{3,4}$/, { message: () => "must be 3 or 4 digits" }))).annotations({
      description: "The card verification code, when the terminal read it."
    })
  )
}).annotations({
  identifier: "PresentedCard",
  description: "The card as the message presents it: its number, and its expiry and code when the terminal read them."
})
export type PresentedCard = typeof PresentedCard.Type

/** POST /v1/network/card-messages as sent. */
const CardMessageBody = Schema.Struct({
  network_message_id: Schema.propertySignature(NetworkId).annotations({
    description: "The message's own id: exactly once per id for 35 days, a repeat answering the first answer."
  }),
  type: NetworkMessageType,
  network_transaction_id: Schema.propertySignature(NetworkId).annotations({
    description: "The network's id linking the messages of one card transaction."
  }),
  card: Schema.optional(
    Schema.NullOr(PresentedCard).annotations({
      description: "The card presented: required on the messages that may start a card transaction."
    })
  ),
  amount: AmountMinor,
  currency: NetworkCurrency,
  merchant: Schema.optional(Schema.NullOr(MerchantInput).annotations({ description: "The merchant, as the network sent it." })),
  partial_approval_capable: Schema.optional(
    Schema.NullOr(Schema.Boolean).annotations({ description: "Whether the terminal takes a partial approval (docs/network.md)." })
  ),
  final: Schema.optional(
    Schema.NullOr(Schema.Boolean).annotations({ description: "CLEARING: whether it is the last for the transaction (default true)." })
  )
})

/**
 * POST /v1/network/card-messages, decoded: the body's fields, with the card required on the
 * messages that may start a card transaction (400 `card` otherwise).
 */
export const CardMessageRequest = Schema.transformOrFail(CardMessageBody, Schema.typeSchema(CardMessageBody), {
  strict: true,
  decode: (body, _, ast) =>
    STARTING_MESSAGE_TYPES.includes(body.type) && (body.card === undefined || body.card === null)
      ? ParseResult.fail(
          new ParseResult.Pointer("card", body, new ParseResult.Type(ast, undefined, `is required on a ${body.type} message`))
        )
      : ParseResult.succeed(body),
  encode: ParseResult.succeed
}).annotations({ identifier: "CardMessageRequest" })
export type CardMessageRequest = typeof CardMessageRequest.Type

/** What a card message answers: approved (in full or in part), declined, or acknowledged (a message the issuer does not decide). */
export const NetworkResult = Schema.Literal("APPROVED", "PARTIALLY_APPROVED", "DECLINED", "ACKNOWLEDGED")
export type NetworkResult = typeof NetworkResult.Type

/** ISO 8583 field 39 and the declines without a record live with the card events that keep them. */
export { NETWORK_DECLINE_REASONS, type NetworkDeclineReason, RESPONSE_CODES, ResponseCode } from "../cards/ResponseCodes.js"

/** The answer to a card network message: the same for the first delivery and every retransmission. */
export const NetworkCardMessage = Schema.Struct({
  object: Schema.Literal("network_card_message"),
  network_message_id: Schema.String.annotations({
    description: "The message's id as the network sent it: a repeat answers this same answer."
  }),
  type: NetworkMessageType,
  /** The card transaction the message started or moved; null when it found or opened none. */
  transaction_id: Schema.NullOr(Schema.String),
  result: NetworkResult.annotations({
    description: "APPROVED, PARTIALLY_APPROVED, DECLINED, or ACKNOWLEDGED for a message the issuer does not decide."
  }),
  approved_amount: Schema.Number.annotations({ description: "What was approved, acknowledged or held, in minor units; 0 when declined." }),
  response_code: ResponseCode,
  authorization_code: Schema.NullOr(Schema.String).annotations({
    description: "Six characters [0-9A-Z] on every approval; null otherwise."
  }),
  decline_reason: Schema.NullOr(Schema.String),
  created_at: Schema.String
}).annotations({ identifier: "NetworkCardMessage" })
export type NetworkCardMessage = typeof NetworkCardMessage.Type
