import type { CardholderStoreService } from "../cardholders/CardholderStore.js"
import { SqlClient, type SqlError } from "@effect/sql"
import { type Context, Data, Effect, Option } from "effect"
import type { Events } from "../events/Events.js"
import { BusinessRuleViolation, type Conflict, type InvalidRequest, type NotFound } from "../platform/Errors.js"
import { findOwned } from "../platform/FindOwned.js"
import { newId } from "../platform/Ids.js"
import { nowIso } from "../platform/Time.js"
import { retryTransient, type TransactorService } from "../sql/Transactor.js"
import { commitWrite, type WriteLaneService } from "../sql/WriteLane.js"
import type { WebhookStore } from "../webhooks/WebhookStore.js"
import type { AccountCache } from "./AccountCache.js"
import type { LedgerStoreService, PostingOutcome } from "./LedgerStore.js"
import {
  accountsToRead,
  checkAttachable,
  type PostedTransfer,
  type PreparedTransfer,
  prepareTransfer,
  type TransactionPlan,
  type TransferOrder,
  transferPosting
} from "./PrepareTransfer.js"
import { MAX_TOTAL_MINOR } from "./Records.js"

/**
 * How the ledger posts one transfer, for single transfers and batch items alike: the accounts
 * (cache or one read), the pure checks, the settlement account and an attached transaction when
 * needed, and the store's one posting call. Ledger.ts and TransferBatch.ts run these.
 */

/** Failures of a transfer. */
export type TransferError = InvalidRequest | NotFound | Conflict | BusinessRuleViolation | SqlError.SqlError

/**
 * A card authorization's card was no longer ACTIVE when its transfer was to be posted (it was
 * frozen or closed after the authorization read it): nothing was written; the authorization
 * declines. Only card orders can meet it.
 */
export class CardNotActive extends Data.TaggedError("CardNotActive")<{ readonly state: "FROZEN" | "CLOSED" }> {}

const TRANSACTION = { resource: "transaction", param: "transaction_id" }

/** A posting of an order that names no card, which cannot be refused for a card's state. */
export const noCard = <A, E>(effect: Effect.Effect<A, E | CardNotActive>): Effect.Effect<A, Exclude<E, CardNotActive>> =>
  Effect.catchIf(
    effect,
    (error): error is CardNotActive => error instanceof CardNotActive,
    (error) => Effect.die(error)
  ) as Effect.Effect<A, Exclude<E, CardNotActive>>

/** Why a card order's posting was refused, or undefined for a ledger refusal. */
const cardRefusal = (outcome: PostingOutcome): CardNotActive | undefined =>
  outcome.refusal === "card_frozen"
    ? new CardNotActive({ state: "FROZEN" })
    : outcome.refusal === "card_closed"
      ? new CardNotActive({ state: "CLOSED" })
      : undefined

/** The 422 of a refused posting: nothing was written. (Not for card orders: see `postPrepared`.) */
export const refused = (outcome: PostingOutcome) =>
  outcome.refusal === "balance_limit_exceeded"
    ? new BusinessRuleViolation({
        code: "balance_limit_exceeded",
        message: `The transfer would take an account's running total past ${MAX_TOTAL_MINOR} minor units.`,
        param: "amount"
      })
    : new BusinessRuleViolation({
        code: "insufficient_funds",
        // Errors never repeat the request's values (docs/api.md#errors): the balance is the account's.
        message: `Insufficient funds: the source account's balance (${outcome.availableMinor} minor units) does not cover the amount.`,
        param: "amount"
      })

/** What the ledger's use cases run against (the feature's dependencies, like `CardDeps` and `WebhookDeps`). */
export interface LedgerDeps {
  readonly store: LedgerStoreService
  readonly transactor: TransactorService
  readonly lane: WriteLaneService
  readonly events: Events
  readonly webhooks: Context.Tag.Service<typeof WebhookStore>
  readonly accountCache: AccountCache
  /** A wallet's cardholder is checked against the program's (docs/cardholders.md). */
  readonly cardholders: CardholderStoreService
}

/** Runs a write: joins the caller's transaction if there is one, else commits through the store's lane. */
export const write = <A, E>(ctx: LedgerDeps, effect: Effect.Effect<A, E>, options?: { readonly atomic?: boolean }) =>
  commitWrite(ctx.lane, ctx.transactor, effect, options)

/**
 * Runs a posting that is one store call (`postsAtOnce`): outside a caller's transaction, by the
 * store itself when it commits new transfers better alone (`commitsNewTransfersItself`: SQLite's
 * writer thread, docs/ledger.md#coalesced-postings-on-sqlite), else as `write` does.
 */
const writeAtOnce = <A, E>(ctx: LedgerDeps, effect: Effect.Effect<A, E>) =>
  ctx.store.commitsNewTransfersItself
    ? Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (outer) =>
        Option.isSome(outer) ? ctx.transactor.withTransaction(effect) : retryTransient(effect)
      )
    : write(ctx, effect, { atomic: true })

/** The program's settlement account of a currency, created (with its event) the first time it is needed. */
export const settlementAccount = (ctx: LedgerDeps, programId: string, currency: string) =>
  Effect.gen(function* () {
    const existing = yield* ctx.store.findSettlementAccount(programId, currency)
    if (Option.isSome(existing)) return existing.value
    const created_at = yield* nowIso
    const inserted = yield* ctx.store.insertSettlementAccountIfMissing({
      id: newId(),
      program_id: programId,
      wallet_id: null,
      kind: "settlement",
      currency,
      created_at
    })
    const account = Option.getOrThrow(yield* ctx.store.findSettlementAccount(programId, currency))
    if (inserted) yield* ctx.events.emit(programId, "financial_account.created", account)
    return account
  })

/**
 * The accounts an order names, from the cache of immutable attributes or one read. A hit is
 * answered without a generator of its own: every transfer asks (docs/operations.md#volume, "The
 * Node side, profiled").
 */
export const accountsOf = (ctx: LedgerDeps, programId: string, order: TransferOrder) => {
  const { ids, settlementCurrency } = accountsToRead(order)
  const cached = ctx.accountCache.lookup(programId, ids, settlementCurrency)
  if (cached !== undefined) return Effect.succeed(cached)
  return Effect.map(ctx.store.findPostingAccounts(programId, ids.length === 0 ? [""] : ids, settlementCurrency), (rows) => {
    ctx.accountCache.remember(rows)
    return rows
  })
}

/** True when an order posts as one atomic store call: a new transaction between accounts all known. */
export const postsAtOnce = (p: PreparedTransfer) =>
  p.order.transaction_id === null && ((p.from !== null && p.to !== null) || p.settlement !== null)

/** The transaction a transfer joins: a new one, or the named one locked, checked and its pending transfers counted. */
const transactionPlan = (ctx: LedgerDeps, p: PreparedTransfer): Effect.Effect<TransactionPlan, TransferError> =>
  p.order.transaction_id === null
    ? Effect.succeed({ _tag: "New" })
    : Effect.gen(function* () {
        const found = yield* findOwned(p.order.transaction_id!, TRANSACTION, (id) => ctx.store.findTransaction(p.programId, id, true))
        const transaction = yield* checkAttachable(found, p.order.currency)
        return { _tag: "Existing", transaction, pendingTransfers: yield* ctx.store.countPendingTransfers(transaction.id) }
      })

/** A posted transfer and whether this process's webhook workers must be woken once it commits. */
export interface Posted {
  readonly posted: PostedTransfer
  readonly wake: boolean
}

/**
 * Posts a prepared transfer with the store's one call. At once (`postsAtOnce`) the call is the whole
 * write; otherwise the settlement account may be created and the named transaction is locked first,
 * so it must run in a transaction (the caller wraps it). A refusal fails: whatever this posting wrote
 * before it (a settlement account) rolls back with it.
 */
export const postPrepared = (ctx: LedgerDeps, p: PreparedTransfer): Effect.Effect<Posted, TransferError | CardNotActive> =>
  postsAtOnce(p)
    ? // The whole write is the store's one call: no settlement account or transaction to look up first.
      Effect.flatMap(nowIso, (now) => {
        const settlement = p.from !== null && p.to !== null ? null : p.settlement
        return postPosting(ctx, transferPosting(p, p.from ?? settlement!, p.to ?? settlement!, { _tag: "New" }, now))
      })
    : Effect.gen(function* () {
        const settlement =
          p.from !== null && p.to !== null ? null : (p.settlement ?? (yield* settlementAccount(ctx, p.programId, p.order.currency)))
        const plan = yield* transactionPlan(ctx, p)
        return yield* postPosting(ctx, transferPosting(p, p.from ?? settlement!, p.to ?? settlement!, plan, yield* nowIso))
      })

/** The store's one call of a posting; a refusal fails. */
const postPosting = (
  ctx: LedgerDeps,
  { posted, posting }: ReturnType<typeof transferPosting>
): Effect.Effect<Posted, TransferError | CardNotActive> =>
  Effect.flatMap(ctx.store.postTransfer(posting), (outcome) =>
    outcome.posted ? Effect.succeed({ posted, wake: outcome.wake }) : Effect.fail(cardRefusal(outcome) ?? refused(outcome))
  )

/** The checks of an order over its accounts (cached immutable attributes, else one read). */
export const prepare = (ctx: LedgerDeps, programId: string, order: TransferOrder) =>
  Effect.flatMap(accountsOf(ctx, programId, order), (accounts) => prepareTransfer(programId, order, accounts))

/**
 * Posts a transfer and its one book transfer (docs/ledger.md); creates its transaction unless the
 * order names one. On failure nothing is written: NotFound (unknown account or transaction),
 * Conflict (declined transaction), BusinessRuleViolation (insufficient_funds, balance_limit_exceeded,
 * currency_mismatch, same_financial_account, settlement_account_not_allowed), InvalidRequest (the
 * sides a rail needs). At once, the store call is submitted as an atomic write (no transaction around it).
 */
export const post = (
  ctx: LedgerDeps,
  programId: string,
  order: TransferOrder
): Effect.Effect<PostedTransfer, TransferError | CardNotActive> =>
  Effect.flatMap(prepare(ctx, programId, order), (p) =>
    Effect.flatMap(postsAtOnce(p) ? writeAtOnce(ctx, postPrepared(ctx, p)) : write(ctx, postPrepared(ctx, p)), ({ posted, wake }) =>
      wake ? Effect.as(ctx.webhooks.wake, posted) : Effect.succeed(posted)
    )
  )
