import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ListOf, PagingParams, Timestamp, Uuid } from "./Common.js"
import { Transaction } from "./LedgerApi.js"
import { ProgramAuth } from "./Security.js"

const CardId = Schema.Struct({ card_id: Schema.String })

const SpendingPeriod = Schema.Struct({
  interval: Schema.Literal("PER_TRANSACTION", "DAILY", "WEEKLY", "MONTHLY", "YEARLY", "ALL_TIME"),
  amount: Schema.Number
}).annotations({ identifier: "SpendingPeriod", description: "At most `amount` minor units approved per UTC window." })

/** A card (CONTRACT §4): never the number or the code. */
export const Card = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("card"),
  program_id: Schema.String,
  wallet_id: Schema.String,
  financial_account_id: Schema.String,
  type: Schema.Literal("VIRTUAL", "PHYSICAL"),
  state: Schema.Literal("ACTIVE", "FROZEN", "CLOSED"),
  last_four: Schema.String,
  exp_month: Schema.Number,
  exp_year: Schema.Number,
  allowed_mcc_codes: Schema.Array(Schema.String),
  blocked_mcc_codes: Schema.Array(Schema.String),
  spending_period: Schema.NullOr(SpendingPeriod),
  created_at: Timestamp,
  updated_at: Timestamp
}).annotations({ identifier: "Card" })

/** The only JSON that carries number and code (interface §2). */
export const CardReveal = Schema.Struct({
  object: Schema.Literal("card_reveal"),
  card_id: Schema.String,
  pan: Schema.String,
  exp_month: Schema.Number,
  exp_year: Schema.Number,
  cvv: Schema.String
}).annotations({ identifier: "CardReveal" })

export const CardEmbedSession = Schema.Struct({
  object: Schema.Literal("card_embed_session"),
  card_id: Schema.String,
  session_token: Schema.String,
  expires_at: Timestamp,
  embed_url: Schema.String
}).annotations({ identifier: "CardEmbedSession" })

export const CardAuditRecord = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("card_audit_record"),
  program_id: Schema.String,
  api_key_id: Schema.NullOr(Schema.String),
  card_id: Schema.NullOr(Schema.String),
  action: Schema.Literal("reveal", "search_by_pan", "embed_session", "embed_view"),
  request_id: Schema.String,
  created_at: Timestamp
}).annotations({ identifier: "CardAuditRecord" })

// Interval and amount are checked by core so that errors name the camelCase parameter.
const SpendingPeriodInput = Schema.Struct({ interval: Schema.String, amount: Schema.Number })
const MccCodes = Schema.Array(Schema.String)

/** POST /v1/cards: camelCase names of the release history, snake_case aliases accepted. */
export const IssueCard = Schema.Struct({
  wallet_id: Uuid,
  type: Schema.Literal("VIRTUAL", "PHYSICAL"),
  allowedMccCodes: Schema.optional(Schema.NullOr(MccCodes)),
  allowed_mcc_codes: Schema.optional(Schema.NullOr(MccCodes)),
  blockedMccCodes: Schema.optional(Schema.NullOr(MccCodes)),
  blocked_mcc_codes: Schema.optional(Schema.NullOr(MccCodes)),
  spendingPeriod: Schema.optional(Schema.NullOr(SpendingPeriodInput)),
  spending_period: Schema.optional(Schema.NullOr(SpendingPeriodInput))
})

export const SearchByPan = Schema.Struct({ pan: Schema.String })

const lifecycle = <const Name extends "freeze" | "unfreeze" | "close" | "reissue">(name: Name) =>
  HttpApiEndpoint.post(name, `/cards/:card_id/${name}` as const).setPath(CardId).addSuccess(Card)

/** Program-scoped: issuance, lifecycle, reveal, search-by-pan, embed sessions, the card-data audit trail. */
export class CardsApi extends HttpApiGroup.make("cards")
  .add(HttpApiEndpoint.post("create", "/cards").setPayload(IssueCard).addSuccess(Card))
  .add(
    HttpApiEndpoint.get("list", "/cards")
      .setUrlParams(Schema.Struct({ ...PagingParams, wallet_id: Schema.optional(Schema.String), state: Schema.optional(Schema.String) }))
      .addSuccess(ListOf(Card))
  )
  .add(HttpApiEndpoint.post("searchByPan", "/cards/search-by-pan").setPayload(SearchByPan).addSuccess(Card))
  .add(HttpApiEndpoint.get("get", "/cards/:card_id").setPath(CardId).addSuccess(Card))
  .add(lifecycle("freeze"))
  .add(lifecycle("unfreeze"))
  .add(lifecycle("close"))
  .add(lifecycle("reissue"))
  .add(HttpApiEndpoint.post("reveal", "/cards/:card_id/reveal").setPath(CardId).addSuccess(CardReveal))
  .add(
    HttpApiEndpoint.post("createEmbedSession", "/cards/:card_id/embed-sessions").setPath(CardId).addSuccess(CardEmbedSession)
  )
  .add(
    HttpApiEndpoint.get("listAuditRecords", "/card-audit-records")
      .setUrlParams(Schema.Struct({ ...PagingParams, card_id: Schema.optional(Schema.String), action: Schema.optional(Schema.String) }))
      .addSuccess(ListOf(CardAuditRecord))
  )
  .middleware(ProgramAuth)
  .prefix("/v1")
{}

/** Public: the embed document, authenticated by its session_token alone (interface §4.2). */
export class CardEmbedApi extends HttpApiGroup.make("cardEmbed")
  .add(
    HttpApiEndpoint.get("document", "/cards/embed")
      .setUrlParams(Schema.Struct({ session_token: Schema.optional(Schema.String) }))
      .annotate(OpenApi.Description, "HTML card display for a sandbox=\"allow-scripts\" iframe; 401 when the token is unknown or expired.")
  )
  .prefix("/v1")
{}

export const SimulateAuthorization = Schema.Struct({
  card_id: Uuid,
  amount: Schema.Number,
  currency: Schema.optional(Schema.NullOr(Schema.String)),
  mcc: Schema.String,
  merchant_name: Schema.optional(Schema.NullOr(Schema.String))
})

/** Sandbox simulation of a card authorization (404 in production): an APPROVED or DECLINED transaction. */
export class SimulateAuthorizationsApi extends HttpApiGroup.make("simulateAuthorizations")
  .add(HttpApiEndpoint.post("create", "/simulate/authorizations").setPayload(SimulateAuthorization).addSuccess(Transaction))
  .middleware(ProgramAuth)
  .prefix("/v1")
{}
