import { Either, ParseResult, Schema } from "effect"
import type * as AST from "effect/SchemaAST"
import { AmountMinor, Currency } from "../ledger/Records.js"
import { CountryCode } from "../platform/Countries.js"
import { Uuid } from "../platform/Ids.js"
import { oneOf } from "../platform/Literals.js"
import { initialMetadata, Metadata, MetadataInput } from "../platform/Metadata.js"
import { normalizePan } from "./CardNumbers.js"

/**
 * Card records and request inputs (docs/card-data.md): one schema each, used by the HTTP API to
 * encode responses and decode requests and, through `typeof X.Type`, by the services and the store.
 * Inputs are decoded once at the edge; the services take the decoded values and check only what
 * needs the database or the caller.
 */

/** Largest number of merchant category codes in one allow or block list. */
export const MAX_MCC_CODES = 500
/** Longest merchant name accepted, in characters. */
export const MAX_MERCHANT_NAME_LENGTH = 200

export const CardType = oneOf("VIRTUAL", "PHYSICAL")
export type CardType = typeof CardType.Type

export const CardState = oneOf("ACTIVE", "FROZEN", "CLOSED")
export type CardState = typeof CardState.Type

/** Windows a spending limit applies to (UTC calendar windows; PER_TRANSACTION caps one amount). */
export const SpendingInterval = oneOf("PER_TRANSACTION", "DAILY", "WEEKLY", "MONTHLY", "YEARLY", "ALL_TIME")
export type SpendingInterval = typeof SpendingInterval.Type

/** A merchant category code: four digits. */
export const MccCode = Schema.String.pipe(
  Schema.pattern(/^\d{4}$/, { message: () => "must be a 4-digit merchant category code" })
).annotations({ description: "A merchant category code (ISO 18245): four digits." })

/** A velocity limit: at most `amount` minor units approved per `interval`. */
export const SpendingPeriod = Schema.Struct({
  interval: SpendingInterval.annotations({
    description: "The UTC calendar window the amount applies to; PER_TRANSACTION caps each authorization on its own."
  }),
  amount: AmountMinor
}).annotations({ identifier: "SpendingPeriod", description: "At most `amount` minor units approved per UTC window." })
export type SpendingPeriod = typeof SpendingPeriod.Type

/** Most countries in one merchant country allow or block list (every assigned alpha-2 code fits). */
export const MAX_MERCHANT_COUNTRIES = 250

/** Most spending limits on one card (docs/card-transactions.md#spending-limits). */
export const MAX_SPENDING_LIMITS = 5

/** How many approved authorizations a spending limit allows per window: a positive integer. */
export const SpendingCount = Schema.Number.pipe(
  Schema.filter((n) => (Number.isSafeInteger(n) && n > 0) || "must be a positive integer: the number of approved authorizations")
).annotations({
  identifier: "SpendingCount",
  jsonSchema: { type: "integer", minimum: 1, description: "A number of approved authorizations: a positive integer." }
})

/**
 * One spending limit of a card (docs/card-transactions.md#spending-limits): at most `amount` minor
 * units and/or at most `count` approved authorizations per UTC window of `interval`; either may be
 * null, not both. PER_TRANSACTION limits one transaction's authorized total (amount only).
 */
export const SpendingLimit = Schema.Struct({
  interval: SpendingInterval.annotations({
    description: "The window: DAILY, WEEKLY (from Monday), MONTHLY, YEARLY (UTC calendar windows), ALL_TIME, or PER_TRANSACTION."
  }),
  amount: Schema.NullOr(Schema.Number).annotations({
    description: "At most this many minor units approved in a window (open holds plus settled amounts); null: no amount limit."
  }),
  count: Schema.NullOr(Schema.Number).annotations({
    description: "At most this many approved authorizations in a window (increments are not counted); null: no count limit."
  })
}).annotations({ identifier: "SpendingLimit", description: "A limit on the sum and/or the number of approved authorizations per window." })
export type SpendingLimit = typeof SpendingLimit.Type

/**
 * The one-limit spelling of a card's limits (`spending_period`, docs/card-transactions.md#spending-limits):
 * the first limit that has an amount, or null.
 */
export const spendingPeriodOf = (limits: ReadonlyArray<SpendingLimit>): SpendingPeriod | null => {
  const limit = limits.find((one) => one.amount !== null)
  return limit === undefined ? null : { interval: limit.interval, amount: limit.amount as AmountMinor }
}

/**
 * A card's spend controls: merchant category and merchant country allow and block lists (sorted, no
 * duplicates; countries ISO 3166-1 alpha-2, docs/card-transactions.md#controls) and its spending
 * limits (up to five, in the order sent).
 */
export const SpendControls = Schema.Struct({
  allowed_mcc_codes: Schema.Array(MccCode).annotations({
    description: "Merchant category codes the card may be used at (empty: any not blocked)."
  }),
  blocked_mcc_codes: Schema.Array(MccCode).annotations({ description: "Merchant category codes the card is declined at." }),
  allowed_merchant_countries: Schema.Array(Schema.String).annotations({
    description: "Merchant countries (ISO 3166-1 alpha-2) the card may be used in (empty: any not blocked)."
  }),
  blocked_merchant_countries: Schema.Array(Schema.String).annotations({
    description: "Merchant countries (ISO 3166-1 alpha-2) the card is declined in."
  }),
  spending_limits: Schema.Array(SpendingLimit).annotations({
    description: "The card's spending limits, up to five, each of another interval, in the order they were sent."
  })
})
export type SpendControls = typeof SpendControls.Type

/** The card as every API response shows it: never the number or the code. */
export const Card = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("card"),
  program_id: Schema.String,
  wallet_id: Schema.String,
  financial_account_id: Schema.String,
  /** The program's cardholder the card is for (docs/cardholders.md): its own, else its wallet's; or null. */
  cardholder_id: Schema.NullOr(Schema.String),
  type: CardType,
  state: CardState,
  last_four: Schema.String,
  exp_month: Schema.Number,
  exp_year: Schema.Number,
  ...SpendControls.fields,
  spending_period: Schema.NullOr(SpendingPeriod).annotations({
    description: "The one-limit spelling of `spending_limits`: its first limit that has an amount, or null."
  }),
  metadata: Metadata,
  created_at: Schema.String,
  updated_at: Schema.String
}).annotations({ identifier: "Card" })
export type Card = typeof Card.Type

/**
 * One of a card's limits as it stands now (GET /v1/cards/{card_id}/spend-limits,
 * docs/card-transactions.md#remaining-spend): the limit, what its current window has spent and
 * what remains. A limit of amount only has `count`, `spent_count` and `remaining_count` null;
 * PER_TRANSACTION has no window (`spent_amount` null: it limits each transaction on its own, and
 * `remaining_amount` is what one new transaction may authorize).
 */
export const SpendLimitStatus = Schema.Struct({
  object: Schema.Literal("spend_limit"),
  interval: SpendingInterval.annotations({ description: "The limit's window (as on the card's `spending_limits`)." }),
  amount: Schema.NullOr(Schema.Number).annotations({
    description: "The limit's amount in minor units; null when it limits the count only."
  }),
  count: Schema.NullOr(Schema.Number).annotations({
    description: "The limit's number of approved authorizations; null when it limits the amount only."
  }),
  spent_amount: Schema.NullOr(Schema.Number).annotations({
    description:
      "What the current window has spent (open holds plus settled amounts of the card's transactions created in it); null for PER_TRANSACTION."
  }),
  spent_count: Schema.NullOr(Schema.Number).annotations({
    description: "Approved authorizations created in the current window, less those reversed or expired whole; null without a count."
  }),
  remaining_amount: Schema.NullOr(Schema.Number).annotations({
    description:
      "max(0, amount − spent_amount): what one more authorization may take; the amount itself for PER_TRANSACTION; null without an amount."
  }),
  remaining_count: Schema.NullOr(Schema.Number).annotations({
    description: "max(0, count − spent_count): how many more authorizations the window approves; null without a count."
  }),
  window_start: Schema.NullOr(Schema.String).annotations({
    description: "Start of the current UTC window (inclusive); null for ALL_TIME and PER_TRANSACTION."
  }),
  window_end: Schema.NullOr(Schema.String).annotations({
    description: "End of the current UTC window (exclusive); null for ALL_TIME and PER_TRANSACTION."
  })
}).annotations({ identifier: "SpendLimitStatus" })
export type SpendLimitStatus = typeof SpendLimitStatus.Type

/**
 * The sensitive part of a card as stored: sealed by the vault, searchable only by keyed fingerprint.
 * Both ciphertexts are bound to their place (`CARD_TABLE`, their column, the card id): moved to
 * another row or column they do not decrypt. Cards sealed before binding (`v1.…`) are bound by
 * `issuing vault reseal`.
 */
export interface SealedCardData {
  /** AES-256-GCM ciphertext of the number (`v2.<keyId>.<…>`). */
  readonly pan_sealed: string
  /** AES-256-GCM ciphertext of the 3-digit code, same format. */
  readonly cvv_sealed: string
  /** HMAC-SHA256 of the number under the fingerprint subkey of `vault_key_id`. */
  readonly pan_fingerprint: string
  /** The vault key both ciphertexts and the fingerprint were made with. */
  readonly vault_key_id: string
}

/** A card row: the public card and its sealed data. */
export interface CardRecord {
  readonly card: Card
  readonly sealed: SealedCardData
}

/** The only JSON that carries number and code (docs/card-data.md, reveal). */
export const CardReveal = Schema.Struct({
  object: Schema.Literal("card_reveal"),
  card_id: Schema.String,
  pan: Schema.String.annotations({ description: "The full card number (PAN)." }),
  exp_month: Schema.Number,
  exp_year: Schema.Number,
  cvv: Schema.String.annotations({ description: "The 3-digit card verification code." })
}).annotations({ identifier: "CardReveal" })
export type CardReveal = typeof CardReveal.Type

/** An embed session as returned once, at creation. */
export const CardEmbedSession = Schema.Struct({
  object: Schema.Literal("card_embed_session"),
  card_id: Schema.String,
  session_token: Schema.String.annotations({
    description: "The session's secret token, shown in this answer only; it authenticates the embed document."
  }),
  expires_at: Schema.String,
  embed_url: Schema.String.annotations({ description: "The URL of the card display document for the iframe, the token included." })
}).annotations({ identifier: "CardEmbedSession" })
export type CardEmbedSession = typeof CardEmbedSession.Type

/** An embed session as stored: the token only as its SHA-256. */
export interface StoredEmbedSession {
  readonly id: string
  readonly program_id: string
  readonly card_id: string
  readonly token_hash: string
  readonly api_key_id: string
  readonly created_at: string
  readonly expires_at: string
}

/** What the embed document shows: the plaintext card data, decrypted for one response. */
export interface CardDisplay {
  readonly card_id: string
  readonly pan: string
  readonly cvv: string
  readonly exp_month: number
  readonly exp_year: number
}

/** Accesses to card data that leave an audit record. */
export const CardAuditAction = oneOf("reveal", "search_by_pan", "embed_session", "embed_view")
export type CardAuditAction = typeof CardAuditAction.Type

/**
 * One access to card data: who (API key, and the client IP the request came from when known),
 * which card (null when a search found none), when, which request.
 */
export const CardAuditRecord = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("card_audit_record"),
  program_id: Schema.String,
  api_key_id: Schema.NullOr(Schema.String).annotations({
    description: "The API key that accessed the card data, or null (an embed view)."
  }),
  card_id: Schema.NullOr(Schema.String),
  action: CardAuditAction.annotations({ description: "The access: reveal, search_by_pan, embed_session or embed_view." }),
  request_id: Schema.String,
  client_ip: Schema.NullOr(Schema.String).annotations({ description: "The IP address the request came from, or null when unknown." }),
  created_at: Schema.String
}).annotations({ identifier: "CardAuditRecord" })
export type CardAuditRecord = typeof CardAuditRecord.Type

/** The request an access to card data comes with, for the audit trail. */
export interface CardRequestContext {
  readonly requestId: string
  /** The peer address of the connection (null when the server cannot tell, e.g. a fetch handler). */
  readonly clientIp: string | null
}

/** Who touches card data, for the audit trail. */
export interface CardAccessContext extends CardRequestContext {
  readonly apiKeyId: string
}

/**
 * Why an authorization was declined. CARD_EXPIRED and INCORRECT_CVV come only with a network
 * message that sent the card's expiry or code (docs/network.md#response-codes).
 */
export const DeclineReason = Schema.Literal(
  "CARD_FROZEN",
  "CARD_CLOSED",
  "MCC_NOT_ALLOWED",
  "MCC_BLOCKED",
  "SPENDING_LIMIT_EXCEEDED",
  "INSUFFICIENT_FUNDS",
  "WEBHOOK_DECLINED",
  "MERCHANT_COUNTRY_NOT_ALLOWED",
  "CARD_EXPIRED",
  "INCORRECT_CVV"
)
export type DeclineReason = typeof DeclineReason.Type

// ---- inputs, decoded once at the edge ---------------------------------------------------------

/** An allow or block list: at most MAX_MCC_CODES codes, decoded without duplicates and sorted (stable responses). */
const MccCodeList = Schema.transform(
  Schema.Array(MccCode)
    .annotations({
      // One message for the list: the offending entry is not echoed (it may be a pasted card number).
      message: () => ({ message: "must hold merchant category codes as 4-digit strings", override: true })
    })
    .pipe(Schema.maxItems(MAX_MCC_CODES, { message: () => `may hold at most ${MAX_MCC_CODES} codes` })),
  Schema.typeSchema(Schema.Array(MccCode)),
  { strict: true, decode: (codes) => [...new Set(codes)].sort(), encode: (codes) => codes }
)

/** A merchant country allow or block list: assigned alpha-2 codes, decoded without duplicates and sorted. */
const CountryList = Schema.transform(
  Schema.Array(CountryCode)
    .annotations({
      message: () => ({ message: "must hold assigned ISO 3166-1 alpha-2 country codes in upper case, e.g. US", override: true })
    })
    .pipe(Schema.maxItems(MAX_MERCHANT_COUNTRIES, { message: () => `may hold at most ${MAX_MERCHANT_COUNTRIES} countries` })),
  Schema.typeSchema(Schema.Array(Schema.String)),
  { strict: true, decode: (codes) => [...new Set(codes)].sort(), encode: (codes) => codes }
)

/** The country lists as sent (snake_case only: they came after the release history's camelCase names). */
const countryListBody = (description: string) =>
  Schema.optional(Schema.NullOr(Schema.Array(Schema.Unknown)).annotations({ description: `${description} null clears it.` }))

/** Decodes a country list sent under `name`; null when absent or null. */
const countryList = (body: Record<string, unknown>, name: string): Either.Either<ReadonlyArray<string> | null, ParseResult.ParseIssue> => {
  const value = body[name]
  if (value === undefined || value === null) return Either.right(null)
  return Either.mapLeft(ParseResult.decodeUnknownEither(CountryList)(value), (issue) => fieldIssue(name, body, issue))
}

/** A country both allowed and blocked is refused, naming the block list (the message never repeats the codes). */
const countryOverlap = (allowed: ReadonlyArray<string>, blocked: ReadonlyArray<string>) => allowed.some((code) => blocked.includes(code))

// The body's own shapes; the values are checked once the alias is resolved, so that a failure
// names the camelCase field whichever name was sent.
const MccCodesBody = Schema.optional(Schema.NullOr(Schema.Array(Schema.String)))
const SpendingPeriodBody = Schema.optional(
  Schema.NullOr(
    Schema.Struct({
      interval: Schema.String.annotations({ description: "The UTC window: PER_TRANSACTION, DAILY, WEEKLY, MONTHLY, YEARLY or ALL_TIME." }),
      amount: Schema.Number
    })
  ).annotations({ description: "A spending limit per window; null clears it." })
)

/** One spending limit as sent: its values decoded in place, so a failure names `spending_limits.N.<field>`. */
const SpendingLimitInput = Schema.Struct({
  interval: SpendingInterval.annotations({
    description: "DAILY, WEEKLY, MONTHLY, YEARLY (UTC calendar windows), ALL_TIME or PER_TRANSACTION."
  }),
  amount: Schema.optional(Schema.NullOr(AmountMinor)).annotations({
    description: "At most this many minor units approved per window (a positive integer)."
  }),
  count: Schema.optional(Schema.NullOr(SpendingCount)).annotations({
    description: "At most this many approved authorizations per window (a positive integer; not with PER_TRANSACTION)."
  })
}).annotations({ identifier: "SpendingLimitInput" })

/** The limits as sent (snake_case only, as the country lists): at most five. */
const SpendingLimitsBody = Schema.optional(
  Schema.NullOr(
    Schema.Array(SpendingLimitInput).pipe(
      Schema.maxItems(MAX_SPENDING_LIMITS, { message: () => `may hold at most ${MAX_SPENDING_LIMITS} limits` })
    )
  ).annotations({
    description:
      "Up to five limits, each on the sum and/or the number of approved authorizations per window, each of another interval; replaces the card's; null or [] clears them. Not with `spending_period`."
  })
)

/**
 * The card's limits from `spending_limits` or the one-limit `spending_period` (either name, decoded
 * as `period`): undefined when neither was sent, [] when cleared. Both spellings at once, a limit
 * with neither amount nor count, a count on PER_TRANSACTION or two limits of one interval → a
 * failure naming the field (docs/card-transactions.md#spending-limits).
 */
const spendingLimits = (
  body: Record<string, unknown>,
  sent: ReadonlyArray<typeof SpendingLimitInput.Type> | null | undefined,
  period: { readonly sent: boolean; readonly value: SpendingPeriod | null },
  ast: AST.AST
): Either.Either<ReadonlyArray<SpendingLimit> | undefined, ParseResult.ParseIssue> => {
  const at = (path: ReadonlyArray<string | number>, actual: unknown, message: string) =>
    Either.left(
      path.reduceRight<ParseResult.ParseIssue>(
        (issue, segment) => new ParseResult.Pointer(segment, actual, issue),
        new ParseResult.Type(ast, actual, message)
      )
    )
  if (sent !== undefined && period.sent) {
    return at(["spending_limits"], body, "conflicting parameters: send spending_limits or spending_period, not both")
  }
  if (period.sent)
    return Either.right(period.value === null ? [] : [{ interval: period.value.interval, amount: period.value.amount, count: null }])
  if (sent === undefined) return Either.right(undefined)
  const limits: Array<SpendingLimit> = []
  for (const [index, limit] of (sent ?? []).entries()) {
    const amount = limit.amount ?? null
    const count = limit.count ?? null
    if (amount === null && count === null) return at(["spending_limits", index], limit, "a limit needs an amount, a count or both")
    if (limit.interval === "PER_TRANSACTION" && count !== null) {
      return at(
        ["spending_limits", index, "count"],
        limit,
        "a PER_TRANSACTION limit takes an amount only: each transaction is one authorization"
      )
    }
    if (limits.some((other) => other.interval === limit.interval)) {
      return at(
        ["spending_limits", index, "interval"],
        limit,
        "two limits of one interval: give each interval one limit, with its amount and count"
      )
    }
    limits.push({ interval: limit.interval, amount, count })
  }
  return Either.right(limits)
}

/**
 * The spend controls as sent (issuance and PATCH alike): camelCase names of the release history,
 * snake_case aliases accepted.
 */
const SpendControlsBody = {
  allowedMccCodes: MccCodesBody,
  allowed_mcc_codes: MccCodesBody,
  blockedMccCodes: MccCodesBody,
  blocked_mcc_codes: MccCodesBody,
  spendingPeriod: SpendingPeriodBody,
  spending_period: SpendingPeriodBody,
  spending_limits: SpendingLimitsBody,
  allowed_merchant_countries: countryListBody("Merchant countries (ISO 3166-1 alpha-2) the card may be used in; empty: any not blocked."),
  blocked_merchant_countries: countryListBody("Merchant countries (ISO 3166-1 alpha-2) the card is declined in.")
}

/** POST /v1/cards as sent. */
const IssueCardBody = Schema.Struct({
  wallet_id: Uuid,
  type: CardType,
  cardholder_id: Schema.optional(Schema.NullOr(Uuid)),
  ...SpendControlsBody,
  metadata: Schema.optional(MetadataInput)
})

/** A failure of one field of the body, at `param`. */
const fieldIssue = (param: string, actual: unknown, issue: ParseResult.ParseIssue) => new ParseResult.Pointer(param, actual, issue)

/**
 * One spend control sent under its camelCase name, its snake_case alias, or both with the same
 * value (different values are a conflict), decoded by `schema`; null when absent. Failures name
 * the camelCase field.
 */
const aliased = <A, I>(
  schema: Schema.Schema<A, I>,
  body: Record<string, unknown>,
  names: readonly [camel: string, snake: string],
  ast: AST.AST
): Either.Either<A | null, ParseResult.ParseIssue> => {
  const [camel, snake] = names
  const camelValue = body[camel]
  const snakeValue = body[snake]
  if (camelValue !== undefined && snakeValue !== undefined && JSON.stringify(camelValue) !== JSON.stringify(snakeValue)) {
    const message = `conflicting parameters: ${camel} and ${snake} were both given, with different values; send one of them`
    return Either.left(fieldIssue(camel, body, new ParseResult.Type(ast, camelValue, message)))
  }
  const value = camelValue ?? snakeValue
  if (value === undefined || value === null) return Either.right(null)
  return Either.mapLeft(ParseResult.decodeUnknownEither(schema)(value), (issue) => fieldIssue(camel, body, issue))
}

/** Whether a control was sent under either of its names (null counts: it clears the control). */
const sent = (body: Record<string, unknown>, [camel, snake]: readonly [string, string]) =>
  body[camel] !== undefined || body[snake] !== undefined

/** A limit as a request sends it (the encoded side of the inputs). */
const limitInput = (limit: SpendingLimit): typeof SpendingLimitInput.Type => ({
  interval: limit.interval,
  amount: limit.amount as AmountMinor | null,
  count: limit.count
})

/** The issuance request, decoded: the wallet (lower case), the kind and the card's spend controls. */
export const IssueCard = Schema.transformOrFail(
  IssueCardBody,
  Schema.typeSchema(
    Schema.Struct({
      wallet_id: Schema.String,
      type: CardType,
      cardholder_id: Schema.NullOr(Schema.String),
      ...SpendControls.fields,
      metadata: Schema.optional(Metadata)
    })
  ),
  {
    strict: true,
    decode: (body, _, ast) =>
      Either.gen(function* () {
        const allowed = (yield* aliased(MccCodeList, body, ["allowedMccCodes", "allowed_mcc_codes"], ast)) ?? []
        const blocked = (yield* aliased(MccCodeList, body, ["blockedMccCodes", "blocked_mcc_codes"], ast)) ?? []
        const both = allowed.filter((code) => blocked.includes(code))
        if (both.length > 0) {
          // Errors never repeat the request's values (docs/api.md#errors).
          const message = "a merchant category code cannot be both allowed and blocked"
          return yield* Either.left(fieldIssue("blockedMccCodes", body, new ParseResult.Type(ast, blocked, message)))
        }
        const PERIOD = ["spendingPeriod", "spending_period"] as const
        const period = { sent: sent(body, PERIOD), value: yield* aliased(SpendingPeriod, body, PERIOD, ast) }
        const limits = (yield* spendingLimits(body, body.spending_limits, period, ast)) ?? []
        const allowedCountries = (yield* countryList(body, "allowed_merchant_countries")) ?? []
        const blockedCountries = (yield* countryList(body, "blocked_merchant_countries")) ?? []
        if (countryOverlap(allowedCountries, blockedCountries)) {
          const message = "a merchant country cannot be both allowed and blocked"
          return yield* Either.left(fieldIssue("blocked_merchant_countries", body, new ParseResult.Type(ast, blockedCountries, message)))
        }
        return {
          wallet_id: body.wallet_id,
          type: body.type,
          cardholder_id: body.cardholder_id ?? null,
          allowed_mcc_codes: allowed,
          blocked_mcc_codes: blocked,
          allowed_merchant_countries: allowedCountries,
          blocked_merchant_countries: blockedCountries,
          spending_limits: limits,
          metadata: initialMetadata(body.metadata)
        }
      }),
    encode: (input) =>
      ParseResult.succeed({
        wallet_id: input.wallet_id,
        type: input.type,
        cardholder_id: input.cardholder_id,
        allowedMccCodes: input.allowed_mcc_codes,
        blockedMccCodes: input.blocked_mcc_codes,
        spending_limits: input.spending_limits.map(limitInput),
        allowed_merchant_countries: input.allowed_merchant_countries,
        blocked_merchant_countries: input.blocked_merchant_countries,
        metadata: input.metadata
      })
  }
)
export type IssueCard = typeof IssueCard.Type

/** PATCH /v1/cards/{card_id} as sent: any spend control, under either name (as at issuance), and metadata. */
const UpdateCardBody = Schema.Struct({ ...SpendControlsBody, metadata: Schema.optional(MetadataInput) })

/**
 * A change of a card's spend controls, decoded with issuance's rules: a control absent is kept, one
 * sent replaces it, `null` clears it (an empty list; no spending limits — `spending_limits` and
 * `spending_period` are two spellings of them, docs/card-transactions.md#spending-limits). Whether the result allows
 * and blocks one code is checked against the card (`Cards.update`). `metadata` is a change of the
 * card's metadata (docs/api.md#metadata).
 */
export const UpdateCard = Schema.transformOrFail(
  UpdateCardBody,
  Schema.typeSchema(
    Schema.Struct({
      allowed_mcc_codes: Schema.optional(Schema.Array(MccCode)),
      blocked_mcc_codes: Schema.optional(Schema.Array(MccCode)),
      allowed_merchant_countries: Schema.optional(Schema.Array(Schema.String)),
      blocked_merchant_countries: Schema.optional(Schema.Array(Schema.String)),
      spending_limits: Schema.optional(Schema.Array(SpendingLimit)),
      metadata: Schema.optional(Schema.NullOr(Metadata))
    })
  ),
  {
    strict: true,
    decode: (body, _, ast) =>
      Either.gen(function* () {
        const ALLOWED = ["allowedMccCodes", "allowed_mcc_codes"] as const
        const BLOCKED = ["blockedMccCodes", "blocked_mcc_codes"] as const
        const PERIOD = ["spendingPeriod", "spending_period"] as const
        const allowed = yield* aliased(MccCodeList, body, ALLOWED, ast)
        const blocked = yield* aliased(MccCodeList, body, BLOCKED, ast)
        const period = { sent: sent(body, PERIOD), value: yield* aliased(SpendingPeriod, body, PERIOD, ast) }
        const limits = yield* spendingLimits(body, body.spending_limits, period, ast)
        const allowedCountries = yield* countryList(body, "allowed_merchant_countries")
        const blockedCountries = yield* countryList(body, "blocked_merchant_countries")
        return {
          ...(body.allowed_merchant_countries !== undefined ? { allowed_merchant_countries: allowedCountries ?? [] } : {}),
          ...(body.blocked_merchant_countries !== undefined ? { blocked_merchant_countries: blockedCountries ?? [] } : {}),
          ...(sent(body, ALLOWED) ? { allowed_mcc_codes: allowed ?? [] } : {}),
          ...(sent(body, BLOCKED) ? { blocked_mcc_codes: blocked ?? [] } : {}),
          ...(limits !== undefined ? { spending_limits: limits } : {}),
          ...(body.metadata !== undefined ? { metadata: body.metadata } : {})
        }
      }),
    encode: (input) =>
      ParseResult.succeed({
        allowedMccCodes: input.allowed_mcc_codes,
        blockedMccCodes: input.blocked_mcc_codes,
        spending_limits: input.spending_limits?.map(limitInput),
        allowed_merchant_countries: input.allowed_merchant_countries,
        blocked_merchant_countries: input.blocked_merchant_countries,
        metadata: input.metadata
      })
  }
).annotations({ identifier: "UpdateCard" })
export type UpdateCard = typeof UpdateCard.Type

/** Filters of GET /v1/cards. */
export const CardListQuery = Schema.Struct({
  wallet_id: Schema.optional(Uuid),
  state: Schema.optional(CardState),
  /** The last four digits of the number (docs/card-data.md#finding-a-card). */
  last_four: Schema.optional(
    Schema.String.pipe(Schema.pattern(/^\d{4}$/, { message: () => "must be the last four digits of a card number" })).annotations({
      description: "Only cards whose number ends with these four digits."
    })
  )
})
export type CardListQuery = typeof CardListQuery.Type

/** Filters of GET /v1/card-audit-records. */
export const CardAuditQuery = Schema.Struct({
  card_id: Schema.optional(Uuid),
  action: Schema.optional(CardAuditAction)
})
export type CardAuditQuery = typeof CardAuditQuery.Type

/** A card number as a person types it (12 to 19 digits, spaces and dashes allowed), decoded to its digits. */
export const CardNumberText = Schema.transformOrFail(Schema.String, Schema.String, {
  strict: true,
  decode: (text, _, ast) => {
    const pan = normalizePan(text)
    return pan === undefined
      ? ParseResult.fail(new ParseResult.Type(ast, text, "must be a card number of 12 to 19 digits"))
      : ParseResult.succeed(pan)
  },
  encode: ParseResult.succeed
})

/** POST /v1/cards/search-by-pan. */
export const SearchByPan = Schema.Struct({
  pan: Schema.propertySignature(CardNumberText).annotations({ description: "The full card number to look for." })
})
export type SearchByPan = typeof SearchByPan.Type

/**
 * GET /v1/cards/embed: the session token is optional here on purpose; a missing or malformed one
 * is an authentication failure (401), decided by the service, never a 400.
 */
export const EmbedDocumentQuery = Schema.Struct({
  session_token: Schema.optional(
    Schema.String.annotations({
      description: "The session's token, from the answer that created the session (401 when unknown or expired)."
    })
  )
})
export type EmbedDocumentQuery = typeof EmbedDocumentQuery.Type

/** A merchant name: 1 to MAX_MERCHANT_NAME_LENGTH characters, not blank. */
const MerchantName = Schema.String.pipe(
  Schema.maxLength(MAX_MERCHANT_NAME_LENGTH, { message: () => `must be 1 to ${MAX_MERCHANT_NAME_LENGTH} characters` }),
  Schema.filter((name) => name.trim().length > 0 || `must be 1 to ${MAX_MERCHANT_NAME_LENGTH} characters`)
)

/** Longest card acceptor id and city accepted, in characters. */
export const MAX_ACCEPTOR_TEXT_LENGTH = 64

/** Text of a merchant field: printable, not blank, at most `max` characters. */
const MerchantText = (max: number) =>
  Schema.String.pipe(
    Schema.maxLength(max, { message: () => `must be 1 to ${max} characters` }),
    Schema.filter((text) => text.trim().length > 0 || `must be 1 to ${max} characters`)
  )

/**
 * The merchant as a card message sends it (docs/network.md#the-merchant): the card acceptor's id
 * and name, its city and country (ISO 3166 alpha-2, upper case) when known, and its category.
 */
export const MerchantInput = Schema.Struct({
  acceptor_id: Schema.propertySignature(MerchantText(MAX_ACCEPTOR_TEXT_LENGTH)).annotations({
    description: `The card acceptor's id at its acquirer, 1 to ${MAX_ACCEPTOR_TEXT_LENGTH} characters.`
  }),
  name: Schema.propertySignature(MerchantName).annotations({
    description: `The merchant's name, 1 to ${MAX_MERCHANT_NAME_LENGTH} characters.`
  }),
  city: Schema.optional(
    Schema.NullOr(MerchantText(MAX_ACCEPTOR_TEXT_LENGTH)).annotations({ description: "The merchant's city, when known." })
  ),
  country: Schema.optional(
    Schema.NullOr(
      Schema.String.pipe(Schema.pattern(/^[A-Z]{2}$/, { message: () => "must be an ISO 3166 alpha-2 code, e.g. US" }))
    ).annotations({ description: "The merchant's country (ISO 3166-1 alpha-2, upper case), when known." })
  ),
  mcc: MccCode
}).annotations({
  identifier: "MerchantInput",
  description:
    "The merchant as a card message sends it: the card acceptor's id and name, its city and country when known, and its category."
})
export type MerchantInput = typeof MerchantInput.Type

/**
 * POST /v1/simulate/authorizations. The currency defaults to the card account's; naming another
 * one is a business-rule failure (422), decided by the service. The merchant is `merchant` (the
 * network message's object) or, as before it, `mcc` and `merchant_name`; one of `mcc` and
 * `merchant` is required, and a `merchant` with them must agree with them (400 otherwise).
 */
export const SimulateAuthorization = Schema.Struct({
  card_id: Uuid,
  amount: AmountMinor,
  mcc: Schema.optional(MccCode),
  currency: Schema.optional(Schema.NullOr(Currency)),
  merchant_name: Schema.optional(
    Schema.NullOr(MerchantName).annotations({ description: "The merchant's name, with `mcc`, when no `merchant` is sent." })
  ),
  merchant: Schema.optional(
    Schema.NullOr(MerchantInput).annotations({ description: "The merchant, as a network message names it; or `mcc` and `merchant_name`." })
  ),
  kind: Schema.optional(
    Schema.NullOr(Schema.Literal("AUTHORIZATION", "FINANCIAL_AUTHORIZATION")).annotations({
      description: "AUTHORIZATION (default) opens a hold; FINANCIAL_AUTHORIZATION (single message) clears at once."
    })
  ),
  partial_approval_capable: Schema.optional(
    Schema.NullOr(Schema.Boolean).annotations({
      description: "Whether the terminal takes a partial approval: with funds short, approve what is available (PARTIALLY_APPROVED)."
    })
  )
})
export type SimulateAuthorization = typeof SimulateAuthorization.Type

/** POST /v1/simulate/transactions/{id}/increment. */
export const SimulateIncrement = Schema.Struct({ amount: AmountMinor })
export type SimulateIncrement = typeof SimulateIncrement.Type

/** POST /v1/simulate/transactions/{id}/clearing: `amount` defaults to the open hold; `final` to true. */
export const SimulateClearing = Schema.Struct({
  amount: Schema.optional(Schema.NullOr(AmountMinor)),
  final: Schema.optional(
    Schema.NullOr(Schema.Boolean).annotations({
      description: "Whether this clearing is the last (default true): the rest of the hold is released; false keeps it open for more."
    })
  )
})
export type SimulateClearing = typeof SimulateClearing.Type

/** POST /v1/simulate/transactions/{id}/reversal and …/return: `amount` defaults to all that may be. */
export const SimulateAmount = Schema.Struct({ amount: Schema.optional(Schema.NullOr(AmountMinor)) })
export type SimulateAmount = typeof SimulateAmount.Type
