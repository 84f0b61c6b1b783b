import type { NetworkCardMessage, NetworkMessageType, ResponseCode } from "@issuing/core"
import currencyCodes from "currency-codes"
import type { IsoMessage } from "./Codec.js"

/**
 * ISO 8583 requests as the card network ingress's messages, and its answers as ISO 8583 responses
 * (docs/iso8583.md): pure translation, no I/O. The host builds the very request body
 * POST /v1/network/card-messages takes and hands it to the same core service, so there is one
 * decision path whatever the wire.
 */

/** The request MTIs the host answers, by class (a repeat, MTI ending in 1, is its class's). */
export const REQUEST_CLASSES = ["0100", "0120", "0200", "0220", "0400", "0420", "0800"] as const
export type RequestClass = (typeof REQUEST_CLASSES)[number]

/** The class of a request MTI (`0101` → `0100`), or null when the host does not take it. */
export const requestClass = (mti: string): RequestClass | null => {
  if (mti[3] !== "0" && mti[3] !== "1") return null
  const base = `${mti.slice(0, 3)}0`
  return (REQUEST_CLASSES as ReadonlyArray<string>).includes(base) ? (base as RequestClass) : null
}

/**
 * The response MTI of a request MTI (`0100`/`0101` → `0110`, `0420` → `0430`), or null for an MTI
 * that is not a request (its third digit odd: a response or an acknowledgement), which is not answered.
 */
export const responseMti = (mti: string): string | null => {
  const functionDigit = Number(mti[2])
  if (!/^\d{4}$/.test(mti) || functionDigit % 2 !== 0) return null
  return `${mti.slice(0, 2)}${functionDigit + 1}0`
}

/** Fields a response echoes as the request sent them (docs/iso8583.md#responses); 4 is replaced on a partial approval. */
const ECHOED = [2, 3, 4, 7, 11, 32, 37, 41, 42, 49, 70, 90] as const

/** Field 70 of a network management request: what it asks. */
export const NETWORK_MANAGEMENT_CODES: Readonly<Record<string, string>> = { "001": "sign-on", "002": "sign-off", "301": "echo test" }

/**
 * Field 39 as the host sets it: the ingress's response codes, and `96` (system malfunction) when the
 * platform could not decide at all (docs/iso8583.md#response-codes).
 */
export type HostResponseCode = ResponseCode | "96"

/** What a request is for the platform: a card message to send, or an answer known without one. */
export type Translation =
  | { readonly _tag: "CardMessage"; readonly body: CardMessageBody; readonly networkMessageId: string }
  | { readonly _tag: "Answer"; readonly responseCode: ResponseCode }

/** The JSON body POST /v1/network/card-messages would take (decoded by its own schema before use). */
export interface CardMessageBody {
  readonly network_message_id: string
  readonly type: NetworkMessageType
  readonly network_transaction_id: string
  readonly card?: { readonly number: string; readonly exp_month?: number; readonly exp_year?: number; readonly cvv?: string }
  readonly amount: number
  readonly currency: string
  readonly merchant?: {
    readonly acceptor_id: string
    readonly name: string
    readonly city: string | null
    readonly country: string | null
    readonly mcc: string
  }
  readonly partial_approval_capable: boolean
  readonly final?: boolean
}

const answer = (responseCode: ResponseCode): Translation => ({ _tag: "Answer", responseCode })

/** An acquirer id as both field 32 and field 90 name it: leading zeros dropped (90 pads it to 11). */
const acquirerId = (digits: string) => digits.replace(/^0+(?=.)/, "")

/**
 * The network's id of a message's transaction: acquirer id, transmission date-time and STAN of the
 * transaction's first message (CONTRACT-bound; docs/iso8583.md#linking).
 */
const transactionKey = (acquirer: string, transmittedAt: string, stan: string) => `${acquirerId(acquirer)}:${transmittedAt}:${stan}`

/** Field 90's original data elements: original MTI (4), STAN (6), transmission date-time (10), acquirer id (11), forwarding id (11). */
const originalOf = (field90: string) => ({
  mti: field90.slice(0, 4),
  stan: field90.slice(4, 10),
  transmittedAt: field90.slice(10, 20),
  acquirer: field90.slice(20, 31)
})

/** Field 48's subelements from `offset`: each a 2-digit tag, a 2-digit length and the value; null when they do not fit. */
const subelementsFrom = (field48: string, offset: number): ReadonlyMap<string, string> | null => {
  const found = new Map<string, string>()
  let at = offset
  while (at < field48.length) {
    const head = field48.slice(at, at + 4)
    if (!/^\d{4}$/.test(head)) return null
    const size = Number(head.slice(2))
    if (at + 4 + size > field48.length) return null
    found.set(head.slice(0, 2), field48.slice(at + 4, at + 4 + size))
    at += 4 + size
  }
  return found
}

/**
 * Field 48's subelements, Mastercard DE 48 style: each a 2-digit tag, a 2-digit length and the
 * value, after the one-letter transaction category code Mastercard puts first when there is one.
 * Null when the field is not such a list.
 */
export const subelements = (field48: string): ReadonlyMap<string, string> | null =>
  subelementsFrom(field48, 0) ?? (/^[A-Z]/.test(field48) ? subelementsFrom(field48, 1) : null)

/** Field 48 subelement carrying the card verification code. */
export const CVV_SUBELEMENT = "92"
/** Field 48 subelement whose first position says whether the terminal takes a partial approval (`0` no, `1` yes). */
export const PARTIAL_APPROVAL_SUBELEMENT = "61"

/** The currency of a message without field 49: 840, US dollars. */
export const DEFAULT_CURRENCY_NUMERIC = "840"

/** ISO 4217 numeric (field 49) → alphabetic, or undefined for a code the list does not have. */
export const currencyOfNumeric = (numeric: string): string | undefined => currencyCodes.number(numeric)?.code

/** ISO 4217 alphabetic → numeric, for clients that build field 49. */
export const numericOfCurrency = (code: string): string | undefined => currencyCodes.code(code.toUpperCase())?.number

/** The merchant of fields 18 (MCC), 42 (acceptor id) and 43 (name 1–25, city 26–38, country 39–40); none without an MCC. */
const merchantOf = (fields: ReadonlyMap<number, string>): CardMessageBody["merchant"] => {
  const mcc = fields.get(18)
  if (mcc === undefined) return undefined
  const location = fields.get(43) ?? ""
  const acceptorId = (fields.get(42) ?? "").trim() || (fields.get(41) ?? "").trim() || acquirerId(fields.get(32) ?? "0")
  const name = location.slice(0, 25).trim() || acceptorId
  const city = location.slice(25, 38).trim()
  const country = location.slice(38, 40).trim().toUpperCase()
  // A country that is not alpha-2 (some acquirers send the numeric code) is left out, not refused.
  return { acceptor_id: acceptorId, name, city: city === "" ? null : city, country: /^[A-Z]{2}$/.test(country) ? country : null, mcc }
}

/** The message type of a card request class, by its processing code (field 3: `20…` a refund) and whether it names an original. */
const typeOf = (requestClassOf: RequestClass, processing: string, linked: boolean): NetworkMessageType | null => {
  const refund = processing.startsWith("20")
  switch (requestClassOf) {
    case "0100":
      return linked ? "INCREMENTAL_AUTHORIZATION" : "AUTHORIZATION"
    case "0200":
      return refund ? "RETURN" : "FINANCIAL_AUTHORIZATION"
    case "0120":
      return "AUTHORIZATION_ADVICE"
    case "0220":
      return refund ? "RETURN" : "CLEARING"
    case "0400":
    case "0420":
      return "AUTHORIZATION_REVERSAL"
    case "0800":
      return null
  }
}

/**
 * What a request asks (docs/iso8583.md#messages): a card message for the ingress, or an answer
 * known at once — network management, or a format error (30) or invalid amount (13) for a request
 * that cannot be a card message. Nothing here reads the database.
 */
export const translate = (message: IsoMessage): Translation => {
  const kind = requestClass(message.mti)
  if (kind === null) return answer("30")
  const { fields } = message
  if (kind === "0800") return answer(Object.hasOwn(NETWORK_MANAGEMENT_CODES, fields.get(70) ?? "") ? "00" : "30")
  const transmittedAt = fields.get(7)
  const stan = fields.get(11)
  const amountText = fields.get(4)
  // Without field 49 the amount is in US dollars, as single-currency acquirers in the US send it.
  const currencyText = fields.get(49) ?? DEFAULT_CURRENCY_NUMERIC
  if (transmittedAt === undefined || stan === undefined || amountText === undefined) return answer("30")
  const currency = currencyOfNumeric(currencyText)
  if (currency === undefined) return answer("30")
  const amount = Number(amountText)
  if (!Number.isSafeInteger(amount) || amount <= 0) return answer("13")
  const acquirer = fields.get(32) ?? "0"
  const original = fields.get(90)
  // A reversal names what it reverses; without field 90 it cannot be linked to anything.
  if ((kind === "0400" || kind === "0420") && original === undefined) return answer("30")
  const type = typeOf(kind, fields.get(3) ?? "000000", original !== undefined)
  if (type === null) return answer("30")
  const linked = original === undefined ? null : originalOf(original)
  const networkTransactionId =
    linked === null ? transactionKey(acquirer, transmittedAt, stan) : transactionKey(linked.acquirer, linked.transmittedAt, linked.stan)
  // A reversal advice (0420) of an unanswered reversal (0400) is that reversal: one message id for both.
  const networkMessageId = `${kind === "0420" ? "0400" : kind}:${transactionKey(acquirer, transmittedAt, stan)}`
  const extra = fields.has(48) ? subelements(fields.get(48)!) : new Map<string, string>()
  if (extra === null) return answer("30")
  const pan = fields.get(2)
  const expiry = fields.get(14)
  const cvv = extra.get(CVV_SUBELEMENT)
  const card =
    pan === undefined
      ? undefined
      : {
          number: pan,
          ...(expiry === undefined ? {} : { exp_year: 2000 + Number(expiry.slice(0, 2)), exp_month: Number(expiry.slice(2, 4)) }),
          ...(cvv === undefined ? {} : { cvv })
        }
  const merchant = merchantOf(fields)
  const body: CardMessageBody = {
    network_message_id: networkMessageId,
    type,
    network_transaction_id: networkTransactionId,
    ...(card === undefined ? {} : { card }),
    amount,
    currency,
    ...(merchant === undefined ? {} : { merchant }),
    // Terminals take a partial approval unless they say otherwise (field 48 subelement 61, position 1 = 0).
    partial_approval_capable: extra.get(PARTIAL_APPROVAL_SUBELEMENT)?.[0] !== "0"
  }
  return { _tag: "CardMessage", body, networkMessageId }
}

/**
 * The response code a card message's refusal stands for (the JSON route's 400 `param`): a card
 * number that is none is an unknown card (14), an expiry that is no date a wrong expiry (54), a
 * code that is no code a wrong code (N7), an amount that is none an invalid amount (13), anything
 * else a format error (30).
 */
export const refusalCode = (param: string | null): ResponseCode => {
  if (param === "card.number") return "14"
  if (param === "card.exp_month" || param === "card.exp_year") return "54"
  if (param === "card.cvv") return "N7"
  if (param === "amount") return "13"
  return "30"
}

/**
 * The response to a request: its response MTI, the fields it echoes, 38 (the authorization code,
 * on approvals) and 39 (the response code); field 4 carries the approved amount on a partial approval.
 */
export const responseOf = (
  request: { readonly mti: string; readonly fields: ReadonlyMap<number, string> },
  responseCode: HostResponseCode,
  answered?: Pick<NetworkCardMessage, "approved_amount" | "authorization_code">
): IsoMessage | null => {
  const mti = responseMti(request.mti)
  if (mti === null) return null
  const fields = new Map<number, string>()
  for (const field of ECHOED) {
    const value = request.fields.get(field)
    if (value !== undefined) fields.set(field, value)
  }
  if (responseCode === "10" && answered !== undefined) fields.set(4, String(answered.approved_amount).padStart(12, "0"))
  if (answered?.authorization_code) fields.set(38, answered.authorization_code)
  fields.set(39, responseCode)
  return { mti, fields }
}
