import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { CardAuthorizations, type CardLifecycleAction, Cards } from "@issuing/core"
import { Effect, FiberRef } from "effect"
import { IssuingApi } from "../Api.js"
import { CurrentProgram } from "../api/Security.js"
import { EMBED_HEADERS, embedDocument } from "../embed/EmbedDocument.js"
import { handle } from "../errors.js"
import { CurrentRequestId } from "../middleware/RequestPipeline.js"
import { paging } from "./Paging.js"

/** Order fields of GET /v1/cards. */
export const CARD_ORDER_FIELDS = ["created_at", "updated_at"]
/** Order fields of GET /v1/card-audit-records. */
export const CARD_AUDIT_ORDER_FIELDS = ["created_at"]

/** The caller and the audit context (API key and request id) of a card-data access. */
const accessContext = Effect.gen(function*() {
  const caller = yield* CurrentProgram
  const requestId = yield* FiberRef.get(CurrentRequestId)
  return { caller, context: { apiKeyId: caller.apiKeyId, requestId } }
})

export const CardsHandlersLive = HttpApiBuilder.group(IssuingApi, "cards", (handlers) =>
  Effect.gen(function*() {
    const cards = yield* Cards
    const lifecycle = (action: CardLifecycleAction) => ({ path }: { readonly path: { readonly card_id: string } }) =>
      Effect.flatMap(CurrentProgram, (caller) => handle(cards.lifecycle(caller, path.card_id, action)))
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(CurrentProgram, (caller) => handle(cards.issue(caller, payload))))
      .handle("list", ({ urlParams }) =>
        Effect.gen(function*() {
          const caller = yield* CurrentProgram
          const page = yield* paging(urlParams, CARD_ORDER_FIELDS)
          return yield* handle(cards.list(caller, urlParams, page))
        }))
      .handle("searchByPan", ({ payload }) =>
        Effect.flatMap(accessContext, ({ caller, context }) => handle(cards.searchByPan(caller, payload.pan, context))))
      .handle("get", ({ path }) => Effect.flatMap(CurrentProgram, (caller) => handle(cards.get(caller, path.card_id))))
      .handle("freeze", lifecycle("freeze"))
      .handle("unfreeze", lifecycle("unfreeze"))
      .handle("close", lifecycle("close"))
      .handle("reissue", lifecycle("reissue"))
      .handle("reveal", ({ path }) =>
        Effect.flatMap(accessContext, ({ caller, context }) => handle(cards.reveal(caller, path.card_id, context))))
      .handle("createEmbedSession", ({ path }) =>
        Effect.flatMap(accessContext, ({ caller, context }) =>
          handle(cards.createEmbedSession(caller, path.card_id, context))))
      .handle("listAuditRecords", ({ urlParams }) =>
        Effect.gen(function*() {
          const caller = yield* CurrentProgram
          const page = yield* paging(urlParams, CARD_AUDIT_ORDER_FIELDS)
          return yield* handle(cards.listAudit(caller, urlParams, page))
        }))
  }))

export const CardEmbedHandlersLive = HttpApiBuilder.group(IssuingApi, "cardEmbed", (handlers) =>
  Effect.gen(function*() {
    const cards = yield* Cards
    return handlers.handle("document", ({ urlParams }) =>
      Effect.gen(function*() {
        const requestId = yield* FiberRef.get(CurrentRequestId)
        const card = yield* handle(cards.openEmbedSession(urlParams.session_token, requestId))
        return HttpServerResponse.text(embedDocument(card), {
          contentType: "text/html; charset=utf-8",
          headers: EMBED_HEADERS
        })
      }))
  }))

export const SimulateAuthorizationsHandlersLive = HttpApiBuilder.group(IssuingApi, "simulateAuthorizations", (handlers) =>
  Effect.gen(function*() {
    const authorizations = yield* CardAuthorizations
    // Sandbox only: the pipeline answers it as an unknown URL in production (SandboxOnly).
    return handlers.handle("create", ({ payload }) =>
      Effect.flatMap(CurrentProgram, (caller) => handle(authorizations.simulate(caller, payload))))
  }))
