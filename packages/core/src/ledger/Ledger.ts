import { SqlClient, SqlError } from "@effect/sql"
import { type Context, Data, Effect, Either, Option } from "effect"
import { Events } from "../events/Events.js"
import { BusinessRuleViolation, Conflict, type InvalidRequest, type NotFound } from "../platform/Errors.js"
import { findOwned } from "../platform/FindOwned.js"
import { newId } from "../platform/Ids.js"
import { type Page, type PageRequest, toWindow } from "../platform/Paging.js"
import { nowIso } from "../platform/Time.js"
import { Transactor, type TransactorService } from "../sql/Transactor.js"
import { WriteLane, type WriteLaneService } from "../sql/WriteLane.js"
import { WebhookStore } from "../webhooks/WebhookStore.js"
import { type AccountCache, makeAccountCache } from "./AccountCache.js"
import {
  type AccountFilter,
  type BookTransferFilter,
  LedgerStore,
  type LedgerStoreService,
  type PostingOutcome,
  type TransactionFilter,
  type TransferFilter
} from "./LedgerStore.js"
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
import {
  type AmountMinor,
  type BookBalance,
  type BookTransfer,
  type CreateWallet,
  type Currency,
  DEFAULT_CURRENCY,
  type FinancialAccount,
  MAX_TOTAL_MINOR,
  type Transaction,
  type Transfer,
  type TransferRequest,
  type Wallet
} from "./Records.js"

export type { PostedTransfer } from "./PrepareTransfer.js"

/** A card authorization to approve (see `Ledger.approveCardAuthorization`). */
export interface CardAuthorizationInput {
  readonly card_id: string
  /** The card's wallet account: the account debited. */
  readonly financial_account_id: string
  readonly amount: AmountMinor
  readonly currency: Currency
  readonly mcc: string | null
  readonly merchant_name: string | null
}

/** A declined card authorization to record (see `Ledger.declineCardAuthorization`). */
export interface CardDeclineInput {
  readonly card_id: string
  readonly amount: AmountMinor
  readonly currency: Currency
  readonly decline_reason: string
  readonly mcc: string | null
  readonly merchant_name: string | null
}

/** Failures of a transfer. */
export type TransferError = InvalidRequest | NotFound | Conflict | BusinessRuleViolation | SqlError.SqlError

const WALLET = { resource: "wallet", param: "wallet_id" }
const WALLET_ACCOUNT = { resource: "financial account", param: "wallet_id" }
const ACCOUNT = { resource: "financial account", param: "financial_account_id" }
const TRANSFER = { resource: "transfer", param: "transfer_id" }
const TRANSACTION = { resource: "transaction", param: "transaction_id" }

/** The 422 of a refused posting: nothing was written. */
const refused = (outcome: PostingOutcome, order: TransferOrder) =>
  outcome.refusal === "balance_limit_exceeded"
    ? new BusinessRuleViolation({
      code: "balance_limit_exceeded",
      message: `The transfer would take an account's running total past ${MAX_TOTAL_MINOR} minor units.`,
      param: "amount"
    })
    : new BusinessRuleViolation({
      code: "insufficient_funds",
      message: `Insufficient funds: the account holds ${outcome.availableMinor} ${order.currency} minor units, the transfer needs ${order.amount}.`,
      param: "amount"
    })

const page = <A>(effect: Effect.Effect<{ readonly rows: ReadonlyArray<A>; readonly total: number }, SqlError.SqlError>) =>
  Effect.map(effect, ({ rows, total }): Page<A> => ({ data: rows, total_count: total }))

/** What the ledger's use cases run against. */
interface LedgerContext {
  readonly store: LedgerStoreService
  readonly transactor: TransactorService
  readonly lane: WriteLaneService
  readonly events: Events
  readonly webhooks: Context.Tag.Service<typeof WebhookStore>
  readonly accountCache: AccountCache
}

const inTransaction = Effect.map(Effect.serviceOption(SqlClient.TransactionConnection), Option.isSome)

/** Runs a write: joins the caller's transaction if there is one, else commits through the store's lane. */
const write = <A, E>(ctx: LedgerContext, effect: Effect.Effect<A, E>, options?: { readonly atomic?: boolean }) =>
  Effect.flatMap(inTransaction, (joined) => joined ? ctx.transactor.withTransaction(effect) : ctx.lane.submit(effect, options))

/** The program's settlement account of a currency, created (with its event) the first time it is needed. */
const settlementAccount = (ctx: LedgerContext, programId: string, currency: string) =>
  Effect.gen(function*() {
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

/** The accounts an order names, from the cache of immutable attributes or one read. */
const accountsOf = (ctx: LedgerContext, programId: string, order: TransferOrder) =>
  Effect.gen(function*() {
    const { ids, settlementCurrency } = accountsToRead(order)
    const cached = ctx.accountCache.lookup(programId, ids, settlementCurrency)
    if (cached !== undefined) return cached
    const rows = yield* ctx.store.findPostingAccounts(programId, ids.length === 0 ? [""] : ids, settlementCurrency)
    ctx.accountCache.remember(rows)
    return rows
  })

/** True when an order posts as one atomic store call: a new transaction between accounts all known. */
const postsAtOnce = (p: PreparedTransfer) =>
  p.order.transaction_id === null && ((p.from !== null && p.to !== null) || p.settlement !== null)

/** The transaction a transfer joins: a new one, or the named one locked, checked and its pending transfers counted. */
const transactionPlan = (ctx: LedgerContext, p: PreparedTransfer): Effect.Effect<TransactionPlan, TransferError> =>
  p.order.transaction_id === null
    ? Effect.succeed({ _tag: "New" })
    : Effect.gen(function*() {
      const found = yield* findOwned(p.order.transaction_id!, TRANSACTION, (id) => ctx.store.findTransaction(p.programId, id, true))
      const transaction = yield* checkAttachable(found, p.order.currency)
      return { _tag: "Existing", transaction, pendingTransfers: yield* ctx.store.countPendingTransfers(transaction.id) }
    })

/** A posted transfer and whether this process's webhook workers must be woken once it commits. */
interface Posted {
  readonly posted: PostedTransfer
  readonly wake: boolean
}

/**
 * Posts a prepared transfer with the store's one call. At once (`postsAtOnce`) the call is the whole
 * write; otherwise the settlement account may be created and the named transaction is locked first,
 * so it must run in a transaction (the caller wraps it). A refusal fails: whatever this posting wrote
 * before it (a settlement account) rolls back with it.
 */
const postPrepared = (ctx: LedgerContext, p: PreparedTransfer): Effect.Effect<Posted, TransferError> =>
  Effect.gen(function*() {
    const atOnce = postsAtOnce(p)
    const settlement = p.from !== null && p.to !== null
      ? null
      : atOnce ? p.settlement : p.settlement ?? (yield* settlementAccount(ctx, p.programId, p.order.currency))
    const plan: TransactionPlan = atOnce ? { _tag: "New" } : yield* transactionPlan(ctx, p)
    const { posted, posting } = transferPosting(p, p.from ?? settlement!, p.to ?? settlement!, plan, yield* nowIso)
    const outcome = yield* ctx.store.postTransfer(posting)
    if (!outcome.posted) return yield* refused(outcome, p.order)
    return { posted, wake: outcome.wake }
  })

/** The checks of an order over its accounts (cached immutable attributes, else one read). */
const prepare = (ctx: LedgerContext, programId: string, order: TransferOrder) =>
  Effect.flatMap(accountsOf(ctx, programId, order), (accounts) => prepareTransfer(programId, order, accounts))

/**
 * Posts a transfer and its one book transfer (docs/ledger.md); creates its transaction unless the
 * order names one. On failure nothing is written: NotFound (unknown account or transaction),
 * Conflict (declined transaction), BusinessRuleViolation (insufficient_funds, balance_limit_exceeded,
 * currency_mismatch, same_financial_account, settlement_account_not_allowed), InvalidRequest (the
 * sides a rail needs). At once, the store call is submitted as an atomic write (no transaction around it).
 */
const post = (ctx: LedgerContext, programId: string, order: TransferOrder): Effect.Effect<PostedTransfer, TransferError> =>
  Effect.gen(function*() {
    const p = yield* prepare(ctx, programId, order)
    const { posted, wake } = yield* write(ctx, postPrepared(ctx, p), { atomic: postsAtOnce(p) })
    if (wake) yield* ctx.webhooks.wake
    return posted
  })

/** A failure of one batch item that is the item's own (its result), as opposed to the database's (the batch's). */
export type TransferItemError = Exclude<TransferError, SqlError.SqlError>

const isItemError = (error: TransferError): error is TransferItemError => !(error instanceof SqlError.SqlError)

/** An atomic batch stopped at one item: nothing of the batch was written. */
export class TransferBatchAborted extends Data.TaggedError("TransferBatchAborted")<{
  readonly index: number
  readonly error: TransferItemError
}> {}

/** Reads, in one statement per kind, the accounts a batch names that the cache lacks. */
const warmAccounts = (ctx: LedgerContext, programId: string, orders: ReadonlyArray<TransferOrder>) =>
  Effect.gen(function*() {
    const ids = new Set<string>()
    const currencies = new Set<string>()
    for (const order of orders) {
      const wanted = accountsToRead(order)
      for (const id of wanted.ids) if (ctx.accountCache.lookup(programId, [id], null) === undefined) ids.add(id)
      if (wanted.settlementCurrency !== null && ctx.accountCache.lookup(programId, [], wanted.settlementCurrency) === undefined) {
        currencies.add(wanted.settlementCurrency)
      }
    }
    if (ids.size > 0) ctx.accountCache.remember(yield* ctx.store.findPostingAccounts(programId, [...ids], null))
    for (const currency of currencies) {
      ctx.accountCache.remember(Option.toArray(yield* ctx.store.findSettlementAccount(programId, currency)))
    }
  })

type ItemResult = Either.Either<Posted, TransferItemError>

/** A database failure is the batch's; any other failure is the item's result, or aborts an atomic batch. */
const itemFailure = (atomic: boolean, index: number) => (error: TransferError): Effect.Effect<ItemResult, TransferBatchAborted | SqlError.SqlError> =>
  !isItemError(error)
    ? Effect.fail(error)
    : atomic
    ? Effect.fail(new TransferBatchAborted({ index, error }))
    : Effect.succeed(Either.left(error))

/**
 * Posts a run of consecutive items that post at once with ONE store call (`postTransfers`: on
 * SQLite one synchronous call, no savepoint per item), in order; a refused item wrote nothing.
 */
const postRun = (ctx: LedgerContext, run: ReadonlyArray<{ readonly index: number; readonly p: PreparedTransfer }>, atomic: boolean) =>
  Effect.gen(function*() {
    const now = yield* nowIso
    const built = run.map(({ p }) => transferPosting(p, p.from ?? p.settlement!, p.to ?? p.settlement!, { _tag: "New" }, now))
    const outcomes = yield* ctx.store.postTransfers(built.map((item) => item.posting))
    return yield* Effect.forEach(run, ({ index, p }, i) =>
      outcomes[i]!.posted
        ? Effect.succeed<ItemResult>(Either.right({ posted: built[i]!.posted, wake: outcomes[i]!.wake }))
        : itemFailure(atomic, index)(refused(outcomes[i]!, p.order)))
  })

/**
 * The accounts a batch will post to: the named ones of this program (warmed into the cache; an id
 * of another program is never locked) and the settlement accounts the cache knows.
 */
const batchAccounts = (ctx: LedgerContext, programId: string, orders: ReadonlyArray<TransferOrder>) => {
  const ids = new Set<string>()
  for (const order of orders) {
    const wanted = accountsToRead(order)
    for (const id of wanted.ids) if (ctx.accountCache.lookup(programId, [id], null) !== undefined) ids.add(id)
    if (wanted.settlementCurrency !== null) {
      for (const account of ctx.accountCache.lookup(programId, [], wanted.settlementCurrency) ?? []) ids.add(account.id)
    }
  }
  return [...ids].sort()
}

/** The items in order, inside the batch's transaction: runs of at-once items in one call each, the others in a savepoint each. */
const postItems = (ctx: LedgerContext, programId: string, orders: ReadonlyArray<TransferOrder>, atomic: boolean) =>
  Effect.gen(function*() {
    // Every balance row the batch may touch, locked first and in one order: no deadlock with another batch.
    yield* ctx.store.lockAccounts(batchAccounts(ctx, programId, orders))
    const results: Array<ItemResult> = []
    let run: Array<{ readonly index: number; readonly p: PreparedTransfer }> = []
    const flush = Effect.suspend(() => {
      const pending = run
      run = []
      return pending.length === 0 ? Effect.void : Effect.map(postRun(ctx, pending, atomic), (posted) => void results.push(...posted))
    })
    for (const [index, order] of orders.entries()) {
      const prepared = yield* Effect.either(prepare(ctx, programId, order))
      if (Either.isRight(prepared) && postsAtOnce(prepared.right)) {
        run.push({ index, p: prepared.right })
        continue
      }
      yield* flush
      const posting: Effect.Effect<Posted, TransferError> = Either.isLeft(prepared)
        ? Effect.fail(prepared.left)
        : ctx.transactor.withTransaction(postPrepared(ctx, prepared.right))
      results.push(yield* Effect.catchAll(Effect.map(posting, (posted): ItemResult => Either.right(posted)), itemFailure(atomic, index)))
    }
    yield* flush
    return results
  })

/**
 * Posts many transfers in ONE database transaction (docs/ledger.md#batches), each exactly as
 * `post` would. Not atomic: each item has its own result — its transfer, or its failure with
 * nothing of it written — and the others commit. Atomic: the first failing item aborts the batch
 * and nothing is written (TransferBatchAborted naming it). A database failure fails the batch.
 */
const postBatch = (ctx: LedgerContext, programId: string, orders: ReadonlyArray<TransferOrder>, atomic: boolean) =>
  Effect.gen(function*() {
    yield* warmAccounts(ctx, programId, orders)
    // A transaction of its own (or the caller's), never a unit of the write lane: a batch already
    // shares one commit among its items, and inside a group commit each unit runs in a savepoint,
    // under which SQLite wrote these rows four times slower (measured at 8 concurrent batches of
    // 100: 1,240/s as lane units, 5,200/s each in its own transaction).
    const results = yield* ctx.transactor.withTransaction(postItems(ctx, programId, orders, atomic))
    if (results.some((result) => Either.isRight(result) && result.right.wake)) yield* ctx.webhooks.wake
    return results.map(Either.map((item) => item.posted))
  })

/** Creates a wallet and its financial account; emits financial_account.created and wallet.created. */
const createWallet = (ctx: LedgerContext, programId: string, input: CreateWallet) =>
  ctx.transactor.withTransaction(Effect.gen(function*() {
    const now = yield* nowIso
    const currency = input.currency ?? DEFAULT_CURRENCY
    const wallet: Wallet = {
      id: newId(),
      object: "wallet",
      program_id: programId,
      holder: { name: input.holder.name, email: input.holder.email ?? null },
      financial_account_id: newId(),
      created_at: now,
      updated_at: now
    }
    const account = { id: wallet.financial_account_id, program_id: programId, wallet_id: wallet.id, kind: "wallet" as const, currency }
    yield* ctx.store.insertAccount({ ...account, created_at: now })
    yield* ctx.store.insertWallet(wallet)
    const record: FinancialAccount = { ...account, object: "financial_account", balance: { amount: 0, currency }, created_at: now, updated_at: now }
    yield* ctx.events.emit(programId, "financial_account.created", record)
    yield* ctx.events.emit(programId, "wallet.created", wallet)
    return wallet
  }))

/**
 * Settles a PENDING transfer (sandbox simulation of the rail): emits transfer.settled, and
 * transaction.updated when its transaction becomes SETTLED; 409 when already settled. The entries
 * were posted when the transfer was created; settling posts none.
 */
const settleTransfer = (ctx: LedgerContext, programId: string, transferId: string) =>
  ctx.transactor.withTransaction(Effect.gen(function*() {
    const found = yield* findOwned(transferId, TRANSFER, (id) => ctx.store.findTransfer(programId, id, true))
    if (found.status !== "PENDING") return yield* new Conflict({ message: `The transfer is already ${found.status}.`, param: "transfer_id" })
    const now = yield* nowIso
    yield* ctx.store.setTransferStatus(found.id, "SETTLED", now)
    const transfer: Transfer = { ...found, status: "SETTLED", updated_at: now }
    yield* ctx.events.emit(programId, "transfer.settled", transfer)
    const transaction = yield* ctx.store.findTransaction(programId, transfer.transaction_id, true)
    if (Option.isSome(transaction) && transaction.value.status === "PENDING" && (yield* ctx.store.countPendingTransfers(transaction.value.id)) === 0) {
      yield* ctx.store.setTransactionStatus(transaction.value.id, "SETTLED", now)
      yield* ctx.events.emit(programId, "transaction.updated", { ...transaction.value, status: "SETTLED", updated_at: now })
    }
    return transfer
  }))

/** Records a DECLINED card authorization (no transfer, no entries); emits transaction.updated. Joins the caller's transaction. */
const declineCardAuthorization = (ctx: LedgerContext, programId: string, input: CardDeclineInput) =>
  ctx.transactor.withTransaction(Effect.gen(function*() {
    const now = yield* nowIso
    const transaction: Transaction = {
      id: newId(),
      object: "transaction",
      program_id: programId,
      status: "DECLINED",
      amount: input.amount,
      currency: input.currency,
      card_id: input.card_id,
      decline_reason: input.decline_reason,
      mcc: input.mcc,
      merchant_name: input.merchant_name,
      created_at: now,
      updated_at: now
    }
    yield* ctx.store.insertTransaction(transaction)
    yield* ctx.events.emit(programId, "transaction.updated", transaction)
    return transaction
  }))

/** Approves a card authorization: a `card` transfer from the card's wallet account to the settlement account, settled at once. */
const cardOrder = (input: CardAuthorizationInput): TransferOrder => ({
  rail: "card",
  amount: input.amount,
  currency: input.currency,
  from_financial_account_id: input.financial_account_id,
  to_financial_account_id: null,
  transaction_id: null,
  description: null,
  card: { card_id: input.card_id, mcc: input.mcc, merchant_name: input.merchant_name }
})

const walletAccount = (ctx: LedgerContext, programId: string, walletId: string) =>
  Effect.gen(function*() {
    const wallet = yield* findOwned(walletId, WALLET, (id) => ctx.store.findWallet(programId, id))
    const account = yield* findOwned(wallet.financial_account_id, WALLET_ACCOUNT, (id) => ctx.store.findAccount(programId, id))
    return { wallet, account }
  })

const findAccount = (ctx: LedgerContext, programId: string, accountId: string) =>
  findOwned(accountId, ACCOUNT, (id) => ctx.store.findAccount(programId, id))

/**
 * The ledger's use cases: wallets, financial accounts, transfers, transactions and book transfers
 * (docs/ledger.md). Checks and rows come from PrepareTransfer (pure); the store posts
 * (LedgerPosting, each store its fastest way). A write joins the caller's transaction when there
 * is one (an idempotent request, a card authorization), else goes through the store's WriteLane.
 * Ids from a path are looked up with findOwned: not found (404 naming the param) unless the
 * program's own.
 */
export class Ledger extends Effect.Service<Ledger>()("@issuing/core/Ledger", {
  effect: Effect.gen(function*() {
    const ctx: LedgerContext = {
      store: yield* LedgerStore,
      transactor: yield* Transactor,
      lane: yield* WriteLane,
      events: yield* Events,
      webhooks: yield* WebhookStore,
      accountCache: makeAccountCache()
    }
    const { store } = ctx
    return {
      createWallet: (programId: string, input: CreateWallet): Effect.Effect<Wallet, SqlError.SqlError> => createWallet(ctx, programId, input),
      getWallet: (programId: string, walletId: string): Effect.Effect<Wallet, NotFound | SqlError.SqlError> =>
        findOwned(walletId, WALLET, (id) => store.findWallet(programId, id)),
      listWallets: (programId: string, request: PageRequest) => page(store.listWallets(programId, toWindow(request))),
      /** The financial account of a wallet with its balance; NotFound (param wallet_id) for an unknown wallet. */
      walletAccount: (programId: string, walletId: string): Effect.Effect<{ readonly wallet: Wallet; readonly account: FinancialAccount }, NotFound | SqlError.SqlError> =>
        walletAccount(ctx, programId, walletId),
      getFinancialAccount: (programId: string, accountId: string): Effect.Effect<FinancialAccount, NotFound | SqlError.SqlError> =>
        findAccount(ctx, programId, accountId),
      listFinancialAccounts: (programId: string, filter: AccountFilter, request: PageRequest) =>
        page(store.listAccounts(programId, filter, toWindow(request))),
      /** Debits, credits and balance of every book of an account. */
      balances: (programId: string, accountId: string): Effect.Effect<Page<BookBalance>, NotFound | SqlError.SqlError> =>
        Effect.flatMap(findAccount(ctx, programId, accountId), (account) => page(Effect.map(store.balancesOf(account.id), (rows) => ({ rows, total: rows.length })))),
      postTransfer: (programId: string, request: TransferRequest): Effect.Effect<PostedTransfer, TransferError> =>
        post(ctx, programId, { ...request, rail: request.payment_rail, card: null }),
      /** Many transfers in one database transaction, each with its own result (or all-or-nothing when `atomic`). */
      postTransfers: (
        programId: string,
        requests: ReadonlyArray<TransferRequest>,
        atomic: boolean
      ): Effect.Effect<ReadonlyArray<Either.Either<PostedTransfer, TransferItemError>>, TransferBatchAborted | SqlError.SqlError> =>
        postBatch(ctx, programId, requests.map((request) => ({ ...request, rail: request.payment_rail, card: null })), atomic),
      getTransfer: (programId: string, transferId: string): Effect.Effect<Transfer, NotFound | SqlError.SqlError> =>
        findOwned(transferId, TRANSFER, (id) => store.findTransfer(programId, id, false)),
      listTransfers: (programId: string, filter: TransferFilter, request: PageRequest) =>
        page(store.listTransfers(programId, filter, toWindow(request))),
      settleTransfer: (programId: string, transferId: string): Effect.Effect<Transfer, NotFound | Conflict | SqlError.SqlError> =>
        settleTransfer(ctx, programId, transferId),
      getTransaction: (programId: string, transactionId: string): Effect.Effect<Transaction, NotFound | SqlError.SqlError> =>
        findOwned(transactionId, TRANSACTION, (id) => store.findTransaction(programId, id, false)),
      listTransactions: (programId: string, filter: TransactionFilter, request: PageRequest) =>
        page(store.listTransactions(programId, filter, toWindow(request))),
      /** An APPROVED card transaction and its transfer; insufficient_funds (nothing written) when the wallet cannot cover it. Joins the caller's transaction. */
      approveCardAuthorization: (programId: string, input: CardAuthorizationInput): Effect.Effect<PostedTransfer, TransferError> =>
        post(ctx, programId, cardOrder(input)),
      declineCardAuthorization: (programId: string, input: CardDeclineInput): Effect.Effect<Transaction, SqlError.SqlError> =>
        declineCardAuthorization(ctx, programId, input),
      /** Book transfers of a transaction; 404 param transaction_id for unknown or other-program ids. */
      listTransactionBookTransfers: (programId: string, transactionId: string, filter: Omit<BookTransferFilter, "transaction_id" | "financial_account_id">, request: PageRequest): Effect.Effect<Page<BookTransfer>, NotFound | SqlError.SqlError> =>
        Effect.flatMap(findOwned(transactionId, TRANSACTION, (id) => store.findTransaction(programId, id, false)), (found) =>
          page(store.listBookTransfers(programId, { ...filter, transaction_id: found.id }, toWindow(request, "posted_at")))),
      /** Book transfers with an entry on an account; 404 param financial_account_id. */
      listAccountBookTransfers: (programId: string, accountId: string, filter: Omit<BookTransferFilter, "financial_account_id">, request: PageRequest): Effect.Effect<Page<BookTransfer>, NotFound | SqlError.SqlError> =>
        Effect.flatMap(findAccount(ctx, programId, accountId), (account) =>
          page(store.listBookTransfers(programId, { ...filter, financial_account_id: account.id }, toWindow(request, "posted_at"))))
    }
  })
}) {}
