import { CardholderStore } from "../cardholders/CardholderStore.js"
import { findCardholder } from "../cardholders/Cardholders.js"
import type { SqlError } from "@effect/sql"
import { Effect, type Either, Option } from "effect"
import { Events } from "../events/Events.js"
import { type BusinessRuleViolation, Conflict, type InvalidRequest, type NotFound } from "../platform/Errors.js"
import { findOwned } from "../platform/FindOwned.js"
import { newId } from "../platform/Ids.js"
import { applyMetadataChange, initialMetadata, sameMetadata } from "../platform/Metadata.js"
import { type Page, type PageRequest, type PageWindow, pageOf, toWindow } from "../platform/Paging.js"
import {
  BOOK_TRANSFER_ORDER_FIELDS,
  type BookTransferOrderField,
  FINANCIAL_ACCOUNT_ORDER_FIELDS,
  type FinancialAccountOrderField,
  TRANSACTION_ORDER_FIELDS,
  type TransactionOrderField,
  TRANSFER_ORDER_FIELDS,
  type TransferOrderField,
  WALLET_ORDER_FIELDS,
  type WalletOrderField
} from "./OrderFields.js"
import { nowIso } from "../platform/Time.js"
import { Transactor } from "../sql/Transactor.js"
import { WriteLane } from "../sql/WriteLane.js"
import { WebhookStore } from "../webhooks/WebhookStore.js"
import { makeAccountCache } from "./AccountCache.js"
import { type AccountFilter, type BookTransferFilter, LedgerStore, type TransactionFilter, type TransferFilter } from "./LedgerStore.js"
import { type LedgerDeps, noCard, post, refused, type TransferError } from "./Posting.js"
import type { PostedTransfer } from "./PrepareTransfer.js"
import type {
  BookBalance,
  BookTransfer,
  CreateWallet,
  Currency,
  FinancialAccount,
  ReturnTransfer,
  Transaction,
  Transfer,
  TransferRequest,
  UpdateWallet,
  Wallet,
  WalletFilter
} from "./Records.js"
import { DEFAULT_CURRENCY } from "./Records.js"
import { type CardMessage, type CardMessageOutcome, postCardMessage } from "./CardPosting.js"
import { type SettlementReportQuery, settlementReport } from "./SettlementReports.js"
import { postBatch, type TransferBatchAborted, type TransferItemError } from "./TransferBatch.js"
import { checkReturn, returnPosting } from "./Returns.js"

export type { PostedTransfer } from "./PrepareTransfer.js"

export { CardNotActive, type TransferError } from "./Posting.js"
export { TransferBatchAborted, type TransferItemError } from "./TransferBatch.js"

const WALLET = { resource: "wallet", param: "wallet_id" }
const WALLET_ACCOUNT = { resource: "financial account", param: "wallet_id" }
const ACCOUNT = { resource: "financial account", param: "financial_account_id" }
const TRANSFER = { resource: "transfer", param: "transfer_id" }
const TRANSACTION = { resource: "transaction", param: "transaction_id" }

/** A list's page: the store's rows through the window `toWindow` made of the request (`pageOf`, for `has_more`). */
const page = <F extends string, A, E, R>(
  window: PageWindow<F>,
  read: (window: PageWindow<F>) => Effect.Effect<{ readonly rows: ReadonlyArray<A>; readonly total: number }, E, R>
) => Effect.map(read(window), ({ rows, total }): Page<A> => pageOf(window, rows, total))

/** Creates a wallet and its financial account; emits financial_account.created and wallet.created. */
const createWallet = (ctx: LedgerDeps, programId: string, input: CreateWallet) =>
  ctx.transactor.withTransaction(
    Effect.gen(function* () {
      const cardholder =
        input.cardholder_id === undefined || input.cardholder_id === null
          ? null
          : yield* findCardholder(ctx.cardholders, programId, input.cardholder_id)
      const now = yield* nowIso
      const currency = input.currency ?? DEFAULT_CURRENCY
      const wallet: Wallet = {
        id: newId(),
        object: "wallet",
        program_id: programId,
        holder: { name: input.holder.name, email: input.holder.email ?? null },
        financial_account_id: newId(),
        tag: input.tag ?? null,
        cardholder_id: cardholder?.id ?? null,
        metadata: initialMetadata(input.metadata),
        created_at: now,
        updated_at: now
      }
      const account = { id: wallet.financial_account_id, program_id: programId, wallet_id: wallet.id, kind: "wallet" as const, currency }
      yield* ctx.store.insertAccount({ ...account, created_at: now })
      yield* ctx.store.insertWallet(wallet)
      const record: FinancialAccount = {
        ...account,
        object: "financial_account",
        balance: { amount: 0, currency },
        pending_balance: { amount: 0, currency },
        available_balance: { amount: 0, currency },
        created_at: now,
        updated_at: now
      }
      yield* ctx.events.emit(programId, "financial_account.created", record)
      yield* ctx.events.emit(programId, "wallet.created", wallet)
      return wallet
    })
  )

/**
 * PATCH /v1/wallets/{wallet_id}: a new tag (null clears it) or a metadata change (merged as on
 * cards: docs/api.md#metadata; more than 50 keys after it → 400 `metadata`, nothing written),
 * decided under the wallet's row lock, with `wallet.updated` in the same transaction. A change that
 * changes nothing answers the wallet as it is and emits nothing (as PATCH /v1/cards).
 */
const updateWallet = (ctx: LedgerDeps, programId: string, walletId: string, change: UpdateWallet) =>
  ctx.transactor.withTransaction(
    Effect.gen(function* () {
      const current = yield* findOwned(walletId, WALLET, (id) => ctx.store.lockWallet(programId, id))
      const tag = change.tag === undefined ? current.tag : change.tag
      const metadata = change.metadata === undefined ? current.metadata : yield* applyMetadataChange(current.metadata, change.metadata)
      if (tag === current.tag && sameMetadata(metadata, current.metadata)) return current
      const wallet: Wallet = { ...current, tag, metadata, updated_at: yield* nowIso }
      yield* ctx.store.updateWallet(wallet)
      yield* ctx.events.emit(programId, "wallet.updated", wallet)
      return wallet
    })
  )

/**
 * Settles a PENDING transfer (the rail's outcome: the network's settle and the sandbox's simulation
 * of it run this one path): emits transfer.settled, and
 * transaction.updated when its transaction becomes SETTLED; 409 when already settled. The entries
 * were posted when the transfer was created; settling posts none.
 */
const settleTransfer = (ctx: LedgerDeps, programId: string, transferId: string) =>
  ctx.transactor.withTransaction(
    Effect.gen(function* () {
      const found = yield* findOwned(transferId, TRANSFER, (id) => ctx.store.findTransfer(programId, id, true))
      if (found.status !== "PENDING")
        return yield* new Conflict({ message: `The transfer is already ${found.status}.`, param: "transfer_id" })
      const now = yield* nowIso
      yield* ctx.store.setTransferStatus(found.id, "SETTLED", now)
      const transfer: Transfer = { ...found, status: "SETTLED", updated_at: now }
      yield* ctx.events.emit(programId, "transfer.settled", transfer)
      // An inbound credit becomes available once its rail settles it (it was pending until now).
      const [source, target] = yield* Effect.all([
        findAccount(ctx, programId, found.from_financial_account_id),
        findAccount(ctx, programId, found.to_financial_account_id)
      ])
      if (source.kind === "settlement" && target.kind === "wallet") {
        const wake = yield* ctx.store.releasePending(target.id, found.amount, now, { id: newId(), program_id: programId })
        if (wake) yield* ctx.webhooks.wake
      }
      const transaction = yield* ctx.store.findTransaction(programId, transfer.transaction_id, true)
      if (
        Option.isSome(transaction) &&
        transaction.value.status === "PENDING" &&
        (yield* ctx.store.countPendingTransfers(transaction.value.id)) === 0
      ) {
        yield* ctx.store.setTransactionStatus(transaction.value.id, "SETTLED", now)
        yield* ctx.events.emit(programId, "transaction.updated", { ...transaction.value, status: "SETTLED", updated_at: now })
      }
      return transfer
    })
  )

/**
 * The rail returned a PENDING or SETTLED ach_same_day or wire transfer (docs/ledger.md#returns):
 * under the transfer's and its transaction's locks, the transfer becomes RETURNED with its code and
 * reason and a reversing transfer posts through the store's one posting, with `transfer.returned`
 * in the same transaction. Refused, nothing written: 404 (param transfer_id), 409 (a rail without
 * returns, already returned), 400 (param return_code), 422 balance_limit_exceeded.
 */
const returnTransfer = (ctx: LedgerDeps, programId: string, transferId: string, input: ReturnTransfer) =>
  Effect.flatMap(
    ctx.transactor.withTransaction(
      Effect.gen(function* () {
        const found = yield* findOwned(transferId, TRANSFER, (id) => ctx.store.findTransfer(programId, id, true))
        yield* checkReturn(found, input)
        const transaction = yield* findOwned(found.transaction_id, TRANSACTION, (id) => ctx.store.findTransaction(programId, id, true))
        const [from, to] = yield* Effect.all([
          findAccount(ctx, programId, found.from_financial_account_id),
          findAccount(ctx, programId, found.to_financial_account_id)
        ])
        const now = yield* nowIso
        // The returned transfer is no longer PENDING: the transaction's status counts its others.
        const pendingTransfers = (yield* ctx.store.countPendingTransfers(transaction.id)) - (found.status === "PENDING" ? 1 : 0)
        const returned = returnPosting(found, input, { from, to }, transaction, pendingTransfers, now)
        yield* ctx.store.setTransferReturned(returned.transfer)
        const outcome = yield* ctx.store.postTransfer(returned.posting)
        if (!outcome.posted) return yield* refused(outcome)
        const { release } = returned
        const released =
          release !== null &&
          (yield* ctx.store.releasePending(release.financialAccountId, release.amountMinor, now, {
            id: release.balanceEventId,
            program_id: programId
          }))
        return { transfer: returned.transfer, wake: outcome.wake || released }
      })
    ),
    ({ transfer, wake }) => (wake ? Effect.as(ctx.webhooks.wake, transfer) : Effect.succeed(transfer))
  )

const walletAccount = (ctx: LedgerDeps, programId: string, walletId: string) =>
  Effect.gen(function* () {
    const wallet = yield* findOwned(walletId, WALLET, (id) => ctx.store.findWallet(programId, id))
    const account = yield* findOwned(wallet.financial_account_id, WALLET_ACCOUNT, (id) => ctx.store.findAccount(programId, id))
    return { wallet, account }
  })

const findAccount = (ctx: LedgerDeps, programId: string, accountId: string) =>
  findOwned(accountId, ACCOUNT, (id) => ctx.store.findAccount(programId, id))

/** The currency of an account, from the cache of immutable account attributes (read once per account and process). */
const accountCurrency = (ctx: LedgerDeps, programId: string, accountId: string): Effect.Effect<Currency, NotFound | SqlError.SqlError> => {
  const cached = ctx.accountCache.lookup(programId, [accountId], null)
  if (cached !== undefined) return Effect.succeed(cached[0]!.currency as Currency)
  return Effect.map(findAccount(ctx, programId, accountId), (account) => {
    ctx.accountCache.remember([account])
    // Decoded as a Currency when its wallet was created.
    return account.currency as Currency
  })
}

/** The wallets' use cases. */
const walletOperations = (ctx: LedgerDeps) => ({
  /** A new wallet; NotFound (param cardholder_id) when it names a cardholder the program does not have. */
  createWallet: (programId: string, input: CreateWallet): Effect.Effect<Wallet, NotFound | SqlError.SqlError> =>
    createWallet(ctx, programId, input),
  getWallet: (programId: string, walletId: string): Effect.Effect<Wallet, NotFound | SqlError.SqlError> =>
    findOwned(walletId, WALLET, (id) => ctx.store.findWallet(programId, id)),
  /** A new tag or metadata change; NotFound (param wallet_id), InvalidRequest (param metadata). */
  updateWallet: (
    programId: string,
    walletId: string,
    change: UpdateWallet
  ): Effect.Effect<Wallet, NotFound | InvalidRequest | SqlError.SqlError> => updateWallet(ctx, programId, walletId, change),
  listWallets: (programId: string, filter: WalletFilter, request: PageRequest<WalletOrderField>) =>
    page(toWindow(request, WALLET_ORDER_FIELDS), (window) => ctx.store.listWallets(programId, filter, window)),
  /** The financial account of a wallet with its balance; NotFound (param wallet_id) for an unknown wallet. */
  walletAccount: (
    programId: string,
    walletId: string
  ): Effect.Effect<{ readonly wallet: Wallet; readonly account: FinancialAccount }, NotFound | SqlError.SqlError> =>
    walletAccount(ctx, programId, walletId)
})

/** The financial accounts' use cases: an account, its balances and its book transfers. */
const accountOperations = (ctx: LedgerDeps) => ({
  getFinancialAccount: (programId: string, accountId: string): Effect.Effect<FinancialAccount, NotFound | SqlError.SqlError> =>
    findAccount(ctx, programId, accountId),
  /** The currency of an account of the program, from the account cache; for decisions that need no balance. */
  accountCurrency: (programId: string, accountId: string): Effect.Effect<Currency, NotFound | SqlError.SqlError> =>
    accountCurrency(ctx, programId, accountId),
  listFinancialAccounts: (programId: string, filter: AccountFilter, request: PageRequest<FinancialAccountOrderField>) =>
    page(toWindow(request, FINANCIAL_ACCOUNT_ORDER_FIELDS), (window) => ctx.store.listAccounts(programId, filter, window)),
  /** Debits, credits and balance of every book of an account. */
  balances: (programId: string, accountId: string): Effect.Effect<Page<BookBalance>, NotFound | SqlError.SqlError> =>
    Effect.flatMap(findAccount(ctx, programId, accountId), (account) =>
      Effect.map(ctx.store.balancesOf(account.id), (rows): Page<BookBalance> => ({ data: rows, total_count: rows.length, has_more: false }))
    ),
  /** Book transfers with an entry on an account; 404 param financial_account_id. */
  listAccountBookTransfers: (
    programId: string,
    accountId: string,
    filter: Omit<BookTransferFilter, "financial_account_id">,
    request: PageRequest<BookTransferOrderField>
  ): Effect.Effect<Page<BookTransfer>, InvalidRequest | NotFound | SqlError.SqlError> =>
    Effect.flatMap(findAccount(ctx, programId, accountId), (account) =>
      page(toWindow(request, BOOK_TRANSFER_ORDER_FIELDS), (window) =>
        ctx.store.listBookTransfers(programId, { ...filter, financial_account_id: account.id }, window)
      )
    )
})

/** A wallet's transfers as its account's filter, or none when the wallet cannot have any in this list. */
const walletTransfers = (ctx: LedgerDeps, programId: string, walletId: string, filter: TransferFilter) =>
  Effect.map(ctx.store.findWallet(programId, walletId), (wallet) =>
    Option.filterMap(wallet, (found) =>
      filter.financial_account_id !== undefined && filter.financial_account_id !== found.financial_account_id
        ? Option.none()
        : Option.some({ ...filter, financial_account_id: found.financial_account_id })
    )
  )

/** The transfers' use cases: posting one or a batch, reading, settling. */
const transferOperations = (ctx: LedgerDeps) => ({
  postTransfer: (programId: string, request: TransferRequest): Effect.Effect<PostedTransfer, TransferError> =>
    noCard(post(ctx, programId, { ...request, rail: request.payment_rail, card: null })),
  /** Many transfers in one database transaction, each with its own result (or all-or-nothing when `atomic`). */
  postTransfers: (
    programId: string,
    requests: ReadonlyArray<TransferRequest>,
    atomic: boolean
  ): Effect.Effect<ReadonlyArray<Either.Either<PostedTransfer, TransferItemError>>, TransferBatchAborted | SqlError.SqlError> =>
    postBatch(
      ctx,
      programId,
      requests.map((request) => ({ ...request, rail: request.payment_rail, card: null })),
      atomic
    ),
  getTransfer: (programId: string, transferId: string): Effect.Effect<Transfer, NotFound | SqlError.SqlError> =>
    findOwned(transferId, TRANSFER, (id) => ctx.store.findTransfer(programId, id, false)),
  /**
   * The program's transfers. `wallet_id` is its wallet's financial account's (either side); a
   * wallet of no transfer — unknown, another program's, or another account than a
   * `financial_account_id` also given — lists nothing.
   */
  listTransfers: (
    programId: string,
    { wallet_id, ...filter }: TransferFilter & { readonly wallet_id?: string | undefined },
    request: PageRequest<TransferOrderField>
  ) =>
    Effect.flatMap(
      wallet_id === undefined ? Effect.succeed(Option.some(filter)) : walletTransfers(ctx, programId, wallet_id, filter),
      (found) =>
        Option.match(found, {
          onNone: () => Effect.succeed<Page<Transfer>>({ data: [], total_count: 0, has_more: false }),
          onSome: (filter) => page(toWindow(request, TRANSFER_ORDER_FIELDS), (window) => ctx.store.listTransfers(programId, filter, window))
        })
    ),
  /** The rail settled a PENDING transfer (the sandbox's settle and the network's alike). */
  settleTransfer: (programId: string, transferId: string): Effect.Effect<Transfer, NotFound | Conflict | SqlError.SqlError> =>
    settleTransfer(ctx, programId, transferId),
  /** The rail returned a transfer: RETURNED, the money back by a reversing transfer (docs/ledger.md#returns). */
  returnTransfer: (
    programId: string,
    transferId: string,
    input: ReturnTransfer
  ): Effect.Effect<Transfer, NotFound | Conflict | InvalidRequest | BusinessRuleViolation | SqlError.SqlError> =>
    returnTransfer(ctx, programId, transferId, input)
})

/** The transactions' use cases, and what the card messages (cards/Authorizations.ts) post and lock through. */
const transactionOperations = (ctx: LedgerDeps) => ({
  getTransaction: (programId: string, transactionId: string): Effect.Effect<Transaction, NotFound | SqlError.SqlError> =>
    findOwned(transactionId, TRANSACTION, (id) => ctx.store.findTransaction(programId, id, false)),
  listTransactions: (programId: string, filter: TransactionFilter, request: PageRequest<TransactionOrderField>) =>
    page(toWindow(request, TRANSACTION_ORDER_FIELDS), (window) => ctx.store.listTransactions(programId, filter, window)),
  /** Book transfers of a transaction; 404 param transaction_id for unknown or other-program ids. */
  listTransactionBookTransfers: (
    programId: string,
    transactionId: string,
    filter: Omit<BookTransferFilter, "transaction_id" | "financial_account_id">,
    request: PageRequest<BookTransferOrderField>
  ): Effect.Effect<Page<BookTransfer>, InvalidRequest | NotFound | SqlError.SqlError> =>
    Effect.flatMap(
      findOwned(transactionId, TRANSACTION, (id) => ctx.store.findTransaction(programId, id, false)),
      (found) =>
        page(toWindow(request, BOOK_TRANSFER_ORDER_FIELDS), (window) =>
          ctx.store.listBookTransfers(programId, { ...filter, transaction_id: found.id }, window)
        )
    ),
  /**
   * Writes one message of a card transaction (ledger/CardPosting.ts) in the caller's transaction,
   * or as one atomic store call when it moves no money and there is none. Refused for what the
   * message asked to be checked (funds, the card's state): the outcome says which, nothing written;
   * refused for the ledger's bounds: the 422.
   */
  postCardMessage: (programId: string, message: CardMessage): Effect.Effect<CardMessageOutcome, TransferError> =>
    postCardMessage(ctx, programId, message),
  /** A transaction of the program, locked for the rest of the caller's transaction (PostgreSQL: FOR UPDATE). */
  lockTransaction: (programId: string, transactionId: string): Effect.Effect<Transaction, NotFound | SqlError.SqlError> =>
    findOwned(transactionId, TRANSACTION, (id) => ctx.store.findTransaction(programId, id, true)),
  /** A UTC day's settlement totals of a currency (ledger/SettlementReports.ts); 400 param date or currency. */
  settlementReport: (programId: string, query: SettlementReportQuery) => settlementReport(ctx.store, programId, query),
  /** Card transactions whose hold expired by `now`, claimed for the caller's transaction (see LedgerStore). */
  claimExpiredHolds: (now: string, limit: number) => ctx.store.claimExpiredHolds(now, limit),
  /** Wakes the webhook workers after a commit that queued deliveries. */
  wakeDeliveries: ctx.webhooks.wake
})

/**
 * The ledger's use cases: wallets, financial accounts, transfers, transactions and book transfers
 * (docs/ledger.md). Checks and rows come from PrepareTransfer (pure); the store posts
 * (LedgerPosting, each store its fastest way). A write joins the caller's transaction when there
 * is one (an idempotent request, a card authorization), else goes through the store's WriteLane.
 * Ids from a path are looked up with findOwned: not found (404 naming the param) unless the
 * program's own.
 */
export class Ledger extends Effect.Service<Ledger>()("@issuing/core/Ledger", {
  effect: Effect.gen(function* () {
    const ctx: LedgerDeps = {
      store: yield* LedgerStore,
      transactor: yield* Transactor,
      lane: yield* WriteLane,
      events: yield* Events,
      webhooks: yield* WebhookStore,
      accountCache: makeAccountCache(),
      cardholders: yield* CardholderStore
    }
    return { ...walletOperations(ctx), ...accountOperations(ctx), ...transferOperations(ctx), ...transactionOperations(ctx) }
  })
}) {}
