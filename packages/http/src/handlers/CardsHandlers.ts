import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { CARD_AUDIT_ORDER_FIELDS, CARD_ORDER_FIELDS, CardAuthorizations, type CardLifecycleAction, Cards } from "@issuing/core"
import { Effect, Option } from "effect"
import { IssuingApi } from "../Api.js"
import { EMBED_HEADERS, embedDocument } from "../embed/EmbedDocument.js"
import { mapToApiFailure } from "../errors.js"
import { CurrentProgram, currentRequestId } from "../middleware/Scopes.js"
import { paging } from "./Paging.js"

/**
 * The request's side of a card-data audit record: its id and the peer address of the connection.
 * Forwarding headers are not read: any client can send them (docs/card-data.md#audit-records).
 */
const requestContext = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const requestId = yield* currentRequestId
  // An IPv4 peer of a dual-stack socket reads as ::ffff:a.b.c.d.
  const clientIp = Option.getOrNull(Option.map(request.remoteAddress, (address) => address.replace(/^::ffff:(?=\d+\.)/, "")))
  return { requestId, clientIp }
})

/** The caller and the audit context (API key, request id, client IP) of a card-data access. */
const accessContext = Effect.gen(function* () {
  const caller = yield* CurrentProgram
  const request = yield* requestContext
  return { caller, context: { ...request, apiKeyId: caller.apiKeyId } }
})

export const CardsHandlersLive = HttpApiBuilder.group(IssuingApi, "cards", (handlers) =>
  Effect.gen(function* () {
    const cards = yield* Cards
    const lifecycle =
      (action: CardLifecycleAction) =>
      ({ path }: { readonly path: { readonly card_id: string } }) =>
        Effect.flatMap(CurrentProgram, (caller) => mapToApiFailure(cards.lifecycle(caller, path.card_id, action)))
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(CurrentProgram, (caller) => mapToApiFailure(cards.issue(caller, payload))))
      .handle("list", ({ urlParams }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentProgram
          const page = yield* paging(urlParams, CARD_ORDER_FIELDS)
          return yield* mapToApiFailure(cards.list(caller, urlParams, page))
        })
      )
      .handle("searchByPan", ({ payload }) =>
        Effect.flatMap(accessContext, ({ caller, context }) => mapToApiFailure(cards.searchByPan(caller, payload.pan, context)))
      )
      .handle("get", ({ path }) => Effect.flatMap(CurrentProgram, (caller) => mapToApiFailure(cards.get(caller, path.card_id))))
      .handle("spendLimits", ({ path }) =>
        Effect.flatMap(CurrentProgram, (caller) => mapToApiFailure(cards.spendLimits(caller, path.card_id)))
      )
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentProgram, (caller) => mapToApiFailure(cards.update(caller, path.card_id, payload)))
      )
      .handle("freeze", lifecycle("freeze"))
      .handle("unfreeze", lifecycle("unfreeze"))
      .handle("close", lifecycle("close"))
      .handle("reissue", lifecycle("reissue"))
      .handle("reveal", ({ path }) =>
        Effect.flatMap(accessContext, ({ caller, context }) => mapToApiFailure(cards.reveal(caller, path.card_id, context)))
      )
      .handle("createEmbedSession", ({ path }) =>
        Effect.flatMap(accessContext, ({ caller, context }) => mapToApiFailure(cards.createEmbedSession(caller, path.card_id, context)))
      )
      .handle("listAuditRecords", ({ urlParams }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentProgram
          const page = yield* paging(urlParams, CARD_AUDIT_ORDER_FIELDS)
          return yield* mapToApiFailure(cards.listAudit(caller, urlParams, page))
        })
      )
  })
)

export const CardEmbedHandlersLive = HttpApiBuilder.group(IssuingApi, "cardEmbed", (handlers) =>
  Effect.gen(function* () {
    const cards = yield* Cards
    return handlers.handle("document", ({ urlParams }) =>
      Effect.gen(function* () {
        // Only a GET displays the card: a HEAD (link checkers, prefetchers) writes no embed_view record.
        const displays = (yield* HttpServerRequest.HttpServerRequest).method !== "HEAD"
        const card = yield* mapToApiFailure(cards.openEmbedSession(urlParams.session_token, yield* requestContext, displays))
        return HttpServerResponse.text(embedDocument(card), {
          contentType: "text/html; charset=utf-8",
          headers: EMBED_HEADERS
        })
      })
    )
  })
)

export const SimulateAuthorizationsHandlersLive = HttpApiBuilder.group(IssuingApi, "simulateAuthorizations", (handlers) =>
  Effect.gen(function* () {
    const authorizations = yield* CardAuthorizations
    // Sandbox only: the pipeline answers it as an unknown URL in production (SandboxOnly).
    return handlers.handle("create", ({ payload }) =>
      Effect.flatMap(CurrentProgram, (caller) => mapToApiFailure(authorizations.authorize(caller, payload)))
    )
  })
)

export const SimulateTransactionsHandlersLive = HttpApiBuilder.group(IssuingApi, "simulateTransactions", (handlers) =>
  Effect.gen(function* () {
    const authorizations = yield* CardAuthorizations
    // Sandbox only, like the authorization (SandboxOnly).
    return handlers
      .handle("increment", ({ path, payload }) =>
        Effect.flatMap(CurrentProgram, (caller) => mapToApiFailure(authorizations.increment(caller, path.transaction_id, payload)))
      )
      .handle("clearing", ({ path, payload }) =>
        Effect.flatMap(CurrentProgram, (caller) => mapToApiFailure(authorizations.clear(caller, path.transaction_id, payload)))
      )
      .handle("reversal", ({ path, payload }) =>
        Effect.flatMap(CurrentProgram, (caller) => mapToApiFailure(authorizations.reverse(caller, path.transaction_id, payload)))
      )
      .handle("return", ({ path, payload }) =>
        Effect.flatMap(CurrentProgram, (caller) => mapToApiFailure(authorizations.refund(caller, path.transaction_id, payload)))
      )
  })
)
