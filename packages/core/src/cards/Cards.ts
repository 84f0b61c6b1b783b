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
import type { Card, CardAuditQuery, CardAuditRecord, CardListQuery, SpendingLimit, SpendLimitStatus } from "./Records.js"
import { limitWindows, windowEnd, windowStart, type WindowSpend } from "./SpendRules.js"

export type { CardDeps } from "./CardDeps.js"
export { EMBED_TOKEN_BYTES, RESEAL_BATCH_SIZE } from "./CardData.js"
export { type CardLifecycleAction, LIFECYCLE, MAX_NUMBER_ATTEMPTS } from "./Issuance.js"

/** Bounds of the cache of cards read by GET /v1/cards/{card_id} (retired by any published change). */
export const CARD_CACHE_MAX_ENTRIES = 10_000
export const CARD_CACHE_MAX_AGE_MS = 60_000

/** How long expired embed sessions are kept before the purge deletes them. */
const EXPIRED_SESSION_RETENTION_MS = 24 * 60 * 60 * 1000

/**
 * One limit as it stands at `nowMillis` (docs/card-transactions.md#remaining-spend): a window's
 * limit with what its running totals hold (nothing written in the window: 0 spent); PER_TRANSACTION
 * with no window, nothing spent and its amount remaining (what one new transaction may authorize).
 */
const spendLimitStatus = (limit: SpendingLimit, spent: ReadonlyArray<WindowSpend>, nowMillis: number): SpendLimitStatus => {
  const start = windowStart(limit.interval, nowMillis)
  const perTransaction = limit.interval === "PER_TRANSACTION"
  const window = spent.find((one) => one.interval === limit.interval)
  const spentAmount = perTransaction ? null : (window?.spent_minor ?? 0)
  const spentCount = perTransaction || limit.count === null ? null : (window?.spent_count ?? 0)
  return {
    object: "spend_limit",
    interval: limit.interval,
    amount: limit.amount,
    count: limit.count,
    spent_amount: spentAmount,
    spent_count: spentCount,
    remaining_amount: limit.amount === null ? null : Math.max(0, limit.amount - (spentAmount ?? 0)),
    remaining_count: limit.count === null ? null : Math.max(0, limit.count - (spentCount ?? 0)),
    window_start: start?.toISOString() ?? null,
    window_end: windowEnd(limit.interval, start)?.toISOString() ?? null
  }
}

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
       * GET /v1/cards/{card_id}/spend-limits: each limit of the card, in the card's order, with its
       * current window's spend and count and what remains, read from the running totals (one row
       * per window, whatever the card's history), as an authorization reads them.
       */
      spendLimits: (caller: ProgramCaller, cardId: string): Effect.Effect<Page<SpendLimitStatus>, NotFound | SqlError.SqlError> =>
        Effect.gen(function* () {
          const { card } = yield* findCard(deps, caller.program.id, cardId)
          const now = yield* nowMs
          const spent = yield* store.windowSpend(card.id, limitWindows(card, now))
          const data = card.spending_limits.map((limit) => spendLimitStatus(limit, spent, now))
          return { data, total_count: data.length, has_more: false }
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
