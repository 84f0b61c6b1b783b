import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import {
  Card,
  CardAuditQuery,
  CardAuditRecord,
  CardEmbedSession,
  CardListQuery,
  CardReveal,
  EmbedDocumentQuery,
  IssueCard,
  SearchByPan,
  SimulateAmount,
  SimulateAuthorization,
  SimulateClearing,
  SimulateIncrement,
  SpendLimitStatus,
  Transaction,
  UpdateCard
} from "@issuing/core"
import { Schema } from "effect"
import { BusinessRules, CallsOut, RequiredScope, SandboxOnly } from "./Annotations.js"
import { ListOf, PagingParams, patch, post } from "./Common.js"
import { ProgramScoped } from "./Security.js"
import { AuthenticationFailure, BusinessRuleFailure, ConflictFailure, NotFoundFailure } from "../errors.js"

/** A card id in the path: any text, looked up by core's findOwned (a malformed id is a 404). */
const CardPath = Schema.Struct({ card_id: Schema.String })

const lifecycle = <const Name extends "freeze" | "unfreeze" | "close" | "reissue">(name: Name) =>
  post(name, `/cards/:card_id/${name}` as const)
    .setPath(CardPath)
    .addError(NotFoundFailure)
    .addSuccess(Card)
    // reissue draws a new number (card_number_space_exhausted); the four share one handler.
    .addError(BusinessRuleFailure)
    .annotate(BusinessRules, name === "reissue" ? ["card_number_space_exhausted"] : [])

/** Program-scoped: issuance, lifecycle, reveal, search-by-pan, embed sessions, the card-data audit trail (docs/card-data.md). */
export class CardsApi extends HttpApiGroup.make("cards")
  .add(
    post("create", "/cards")
      .setPayload(IssueCard)
      .addSuccess(Card)
      // The wallet named in the body; a BIN whose number space is spent; a cardholder not VERIFIED.
      .addError(NotFoundFailure)
      .addError(BusinessRuleFailure)
      .annotate(BusinessRules, ["card_number_space_exhausted", "cardholder_not_verified"])
  )
  .add(
    HttpApiEndpoint.get("list", "/cards")
      .setUrlParams(Schema.Struct({ ...PagingParams, ...CardListQuery.fields }))
      .addSuccess(ListOf(Card))
  )
  .add(post("searchByPan", "/cards/search-by-pan").setPayload(SearchByPan).addSuccess(Card).addError(NotFoundFailure))
  .add(HttpApiEndpoint.get("get", "/cards/:card_id").setPath(CardPath).addError(NotFoundFailure).addSuccess(Card))
  .add(
    HttpApiEndpoint.get("spendLimits", "/cards/:card_id/spend-limits")
      .setPath(CardPath)
      .addError(NotFoundFailure)
      .addSuccess(ListOf(SpendLimitStatus))
  )
  .add(
    patch("update", "/cards/:card_id")
      .setPath(CardPath)
      .setPayload(UpdateCard)
      .addSuccess(Card)
      .addError(NotFoundFailure)
      .addError(ConflictFailure)
      .annotate(OpenApi.Description, "Changes the spend controls of a card that is not closed; a control left out is kept, null clears it.")
  )
  .add(lifecycle("freeze"))
  .add(lifecycle("unfreeze"))
  .add(lifecycle("close"))
  .add(lifecycle("reissue"))
  .add(
    post("reveal", "/cards/:card_id/reveal")
      .setPath(CardPath)
      .addError(NotFoundFailure)
      .addSuccess(CardReveal)
      // An OAuth access token reveals with the pan_reveal scope (docs/oauth.md#access-tokens-on-v1).
      .annotate(RequiredScope, "pan_reveal")
  )
  .add(
    post("createEmbedSession", "/cards/:card_id/embed-sessions").setPath(CardPath).addError(NotFoundFailure).addSuccess(CardEmbedSession)
  )
  .add(
    HttpApiEndpoint.get("listAuditRecords", "/card-audit-records")
      .setUrlParams(Schema.Struct({ ...PagingParams, ...CardAuditQuery.fields }))
      .addSuccess(ListOf(CardAuditRecord))
  )
  .middleware(ProgramScoped)
  .prefix("/v1") {}

/** Public: the embed document, authenticated by its session_token alone (docs/card-data.md). */
export class CardEmbedApi extends HttpApiGroup.make("cardEmbed")
  .add(
    HttpApiEndpoint.get("document", "/cards/embed")
      .setUrlParams(EmbedDocumentQuery)
      .addError(AuthenticationFailure)
      .annotate(OpenApi.Description, 'HTML card display for a sandbox="allow-scripts" iframe; 401 when the token is unknown or expired.')
  )
  .prefix("/v1") {}

/**
 * Sandbox simulation of a card authorization (404 in production): a PENDING transaction holding the
 * amount (AUTHORIZATION), a SETTLED one (FINANCIAL_AUTHORIZATION) or a DECLINED one
 * (docs/card-transactions.md). It may ask the program's authorization endpoint, so it runs
 * outside any transaction and posts at its commit point, with its Idempotency-Key answer (CallsOut).
 */
export class SimulateAuthorizationsApi extends HttpApiGroup.make("simulateAuthorizations")
  .add(
    post("create", "/simulate/authorizations")
      .setPayload(SimulateAuthorization)
      .addSuccess(Transaction)
      // A currency other than the card account's; a decline is a 200 DECLINED transaction.
      .addError(BusinessRuleFailure)
      .annotate(BusinessRules, ["currency_mismatch"])
      .annotate(CallsOut, true)
  )
  .annotate(SandboxOnly, true)
  // Sandbox-only: unknown in production; and the card it names.
  .addError(NotFoundFailure)
  .middleware(ProgramScoped)
  .prefix("/v1") {}

const TransactionPath = Schema.Struct({ transaction_id: Schema.String })

/** One card network message on an existing card transaction (sandbox simulation). */
const message = <const Name extends "increment" | "clearing" | "reversal" | "return">(name: Name) =>
  post(name, `/simulate/transactions/:transaction_id/${name}` as const)
    .setPath(TransactionPath)
    .addSuccess(Transaction)
    .addError(NotFoundFailure)
    .addError(BusinessRuleFailure)
    .annotate(BusinessRules, name === "reversal" ? ["amount_exceeds_pending"] : name === "return" ? ["amount_exceeds_settled"] : [])

/**
 * Sandbox simulations of the messages that follow an authorization (404 in production; docs/card-transactions.md):
 * an incremental authorization (decided like a new one, so it may call out), a clearing, a
 * reversal, a return. Wrong state: 409; an amount beyond the hold or the settled amount: 422.
 */
export class SimulateTransactionsApi extends HttpApiGroup.make("simulateTransactions")
  .add(message("increment").setPayload(SimulateIncrement).annotate(CallsOut, true))
  .add(message("clearing").setPayload(SimulateClearing))
  .add(message("reversal").setPayload(SimulateAmount))
  .add(message("return").setPayload(SimulateAmount))
  .annotate(SandboxOnly, true)
  .middleware(ProgramScoped)
  .prefix("/v1") {}
