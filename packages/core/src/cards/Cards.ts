import { CardholderStore } from "../cardholders/CardholderStore.js"
import type { SqlError } from "@effect/sql"
import type { InvalidRequest, NotFound } from "../platform/Errors.js"
import { Effect } from "effect"
import type { ProgramCaller } from "../access/Records.js"
import { ChangeFeed } from "../changes/ChangeFeed.js"
import { makeVersionedCache } from "../changes/VersionedCache.js"
import { Events } from "../events/Events.js"
import { Ledger } from "../ledger/Ledger.js"
import { IssuingConfig } from "../platform/IssuingConfig.js"
import { type Page, type PageRequest, pageOf, toWindow } from "../platform/Paging.js"
import { CARD_AUDIT_ORDER_FIELDS, CARD_ORDER_FIELDS, type CardAuditOrderField, type CardOrderField } from "./OrderFields.js"
import { nowMs } from "../platform/Time.js"
import { Transactor } from "../sql/Transactor.js"
import { Vault } from "../vault/Vault.js"
import { createEmbedSession, openEmbedSession, resealWithCurrentKey, revealCard, searchCardByPan, vaultProblems } from "./CardData.js"
import { CardStore } from "./CardStore.js"
import { updateSpendControls } from "./SpendControlsUpdate.js"
import type { CardDeps } from "./CardDeps.js"
import { changeLifecycle, findCard, issueCard } from "./Issuance.js"
import type { Card, CardAuditQuery, CardAuditRecord, CardListQuery, SpendLimitStatus } from "./Records.js"
import { windowEnd, windowFirstDay, windowStart } from "./SpendRules.js"

export type { CardDeps } from "./CardDeps.js"
export { EMBED_TOKEN_BYTES, RESEAL_BATCH_SIZE } from "./CardData.js"
export { type CardLifecycleAction, LIFECYCLE, MAX_NUMBER_ATTEMPTS } from "./Issuance.js"

/** Bounds of the cache of cards read by GET /v1/cards/{card_id} (retired by any published change). */
export const CARD_CACHE_MAX_ENTRIES = 10_000
export const CARD_CACHE_MAX_AGE_MS = 60_000

/** How long expired embed sessions are kept before the purge deletes them. */
const EXPIRED_SESSION_RETENTION_MS = 24 * 60 * 60 * 1000

/**
 * Cards: issuance with spend controls, the vault (number and code sealed at rest, searchable by
 * keyed fingerprint), lifecycle, reveal, search-by-pan, embed sessions and the audit trail of every
 * access to card data (docs/card-data.md). Inputs arrive decoded (cards/Records.ts).
 */
export class Cards extends Effect.Service<Cards>()("@issuing/core/Cards", {
  effect: Effect.gen(function* () {
    const deps: CardDeps = {
      store: yield* CardStore,
      ledger: yield* Ledger,
      transactor: yield* Transactor,
      vault: yield* Vault,
      events: yield* Events,
      config: yield* IssuingConfig,
      feed: yield* ChangeFeed,
      cardholders: yield* CardholderStore
    }
    const { store } = deps
    // Only the read of one card is served from it: lifecycle, reveal, embed and authorizations
    // read the row themselves (the authorization under its row lock).
    const cardCache = makeVersionedCache<Card>({ maxEntries: CARD_CACHE_MAX_ENTRIES, maxAgeMs: CARD_CACHE_MAX_AGE_MS })

    return {
      /** POST /v1/cards: issues a card on a wallet of the program; emits card.created. */
      issue: issueCard.bind(null, deps),

      /** GET /v1/cards/{card_id}, from the card cache while no change was published since it was read. */
      get: (caller: ProgramCaller, cardId: string) =>
        Effect.gen(function* () {
          const version = yield* deps.feed.version
          const now = yield* nowMs
          const key = `${caller.program.id}/${cardId}`
          const cached = cardCache.get(key, version, now)
          if (cached !== undefined) return cached
          const { card } = yield* findCard(deps, caller.program.id, cardId)
          cardCache.set(key, card, version, now)
          return card
        }),

      /**
       * GET /v1/cards/{card_id}/spend-limits: each limit of the card with its current window's spend
       * and what remains, read from the spend kept per card and day (one row for ALL_TIME, at most
       * 366 for YEARLY, whatever the card's history), as an authorization reads it.
       */
      spendLimits: (caller: ProgramCaller, cardId: string): Effect.Effect<Page<SpendLimitStatus>, NotFound | SqlError.SqlError> =>
        Effect.gen(function* () {
          const { card } = yield* findCard(deps, caller.program.id, cardId)
          const limit = card.spending_period
          if (limit === null) return { data: [], total_count: 0, has_more: false }
          const now = yield* nowMs
          const start = windowStart(limit.interval, now)
          const end = windowEnd(limit.interval, start)
          const perTransaction = limit.interval === "PER_TRANSACTION"
          const spent = perTransaction ? null : yield* store.approvedSpendMinor(card.id, windowFirstDay(limit.interval, now))
          const status: SpendLimitStatus = {
            object: "spend_limit",
            interval: limit.interval,
            amount: limit.amount,
            count: null,
            spent_amount: spent,
            spent_count: null,
            remaining_amount: Math.max(0, limit.amount - (spent ?? 0)),
            remaining_count: null,
            window_start: start?.toISOString() ?? null,
            window_end: end?.toISOString() ?? null
          }
          return { data: [status], total_count: 1, has_more: false }
        }),

      /** GET /v1/cards: the program's cards, filtered by wallet and state. */
      list: (
        caller: ProgramCaller,
        filter: CardListQuery,
        page: PageRequest<CardOrderField>
      ): Effect.Effect<Page<Card>, InvalidRequest | SqlError.SqlError> =>
        Effect.suspend(() => {
          const window = toWindow(page, CARD_ORDER_FIELDS)
          return Effect.map(
            store.listCards(caller.program.id, { walletId: filter.wallet_id, state: filter.state, lastFour: filter.last_four }, window),
            ({ rows, total }) =>
              pageOf(
                window,
                rows.map((row) => row.card),
                total
              )
          )
        }),

      /** Freeze, unfreeze, close or reissue; 409 from an incompatible state; emits card.updated. */
      lifecycle: changeLifecycle.bind(null, deps),

      /** PATCH /v1/cards/{card_id}: new spend controls (not on a closed card); emits card.updated. */
      update: updateSpendControls.bind(null, deps),

      /** POST /v1/cards/{card_id}/reveal: number and code for keys enabled for PAN reveal; audited. */
      reveal: revealCard.bind(null, deps),

      /** POST /v1/cards/search-by-pan: the program's card with this number (digits only); audited. */
      searchByPan: searchCardByPan.bind(null, deps),

      /** POST /v1/cards/{card_id}/embed-sessions: a short-lived token for the embed document; audited. */
      createEmbedSession: createEmbedSession.bind(null, deps),

      /** GET /v1/cards/embed: the card data behind a session token (401 when unusable); audited. */
      openEmbedSession: openEmbedSession.bind(null, deps),

      /** GET /v1/card-audit-records: who accessed card data, newest first. */
      listAudit: (
        caller: ProgramCaller,
        filter: CardAuditQuery,
        page: PageRequest<CardAuditOrderField>
      ): Effect.Effect<Page<CardAuditRecord>, InvalidRequest | SqlError.SqlError> =>
        Effect.suspend(() => {
          const window = toWindow(page, CARD_AUDIT_ORDER_FIELDS)
          return Effect.map(
            store.listAudit(caller.program.id, { cardId: filter.card_id, action: filter.action }, window),
            ({ rows, total }) => pageOf(window, rows, total)
          )
        }),

      /** Deletes embed sessions that expired more than a day ago (a background task runs it). */
      purgeExpiredEmbedSessions: Effect.flatMap(nowMs, (now) =>
        store.purgeEmbedSessions(new Date(now - EXPIRED_SESSION_RETENTION_MS).toISOString())
      ),

      /** Re-seals cards made under an older vault key with the current one; the count re-sealed. */
      resealWithCurrentKey: resealWithCurrentKey(deps),

      /** Start-up check: whether the configured vault keys open the cards held (one per key id); each problem a line. */
      vaultProblems: vaultProblems(deps)
    }
  })
}) {}
