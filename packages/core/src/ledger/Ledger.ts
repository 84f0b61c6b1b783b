import { SqlClient, type SqlError } from "@effect/sql"
import { Effect, Option } from "effect"
import { Events } from "../events/Events.js"
import { BusinessRuleViolation, Conflict, type InvalidRequest, type NotFound } from "../platform/Errors.js"
import { findOwned } from "../platform/FindOwned.js"
import { newId } from "../platform/Ids.js"
import { type Page, type PageRequest, toWindow } from "../platform/Paging.js"
import { nowIso } from "../platform/Time.js"
import { Transactor } from "../sql/Transactor.js"
import { WriteLane } from "../sql/WriteLane.js"
import { WebhookStore } from "../webhooks/WebhookStore.js"
import { makeAccountCache } from "./AccountCache.js"
import {
  type AccountFilter,
  type BookTransferFilter,
  LedgerStore,
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

const insufficient = (outcome: PostingOutcome, order: TransferOrder) =>
  new BusinessRuleViolation({
    code: "insufficient_funds",
    message: `Insufficient funds: the account holds ${outcome.availableMinor} ${order.currency} minor units, the transfer needs ${order.amount}.`,
    param: "amount"
  })

const page = <A>(effect: Effect.Effect<{ readonly rows: ReadonlyArray<A>; readonly total: number }, SqlError.SqlError>) =>
  Effect.map(effect, ({ rows, total }): Page<A> => ({ data: rows, total_count: total }))

/**
 * The ledger's use cases: wallets, financial accounts, transfers, transactions and book
 * transfers (docs/ledger.md). Checks and rows come from PrepareTransfer (pure); the store posts
 * (LedgerPosting, each store its fastest way). A write joins the caller's transaction when there
 * is one (an idempotent request, a card authorization), else goes through the store's WriteLane.
 */
export class Ledger extends Effect.Service<Ledger>()("@issuing/core/Ledger", {
  effect: Effect.gen(function*() {
    const store = yield* LedgerStore
    const transactor = yield* Transactor
    const lane = yield* WriteLane
    const events = yield* Events
    const webhooks = yield* WebhookStore
    const accountCache = makeAccountCache()

    const inTransaction = Effect.map(Effect.serviceOption(SqlClient.TransactionConnection), Option.isSome)

    /** Runs a write: joins the caller's transaction if there is one, else commits through the lane. */
    const write = <A, E>(effect: Effect.Effect<A, E>, options?: { readonly atomic?: boolean }) =>
      Effect.flatMap(inTransaction, (joined) => joined ? transactor.withTransaction(effect) : lane.submit(effect, options))

    /** The program's settlement account of a currency, created (with its event) the first time it is needed. */
    const settlementAccount = (programId: string, currency: string) =>
      Effect.gen(function*() {
        const existing = yield* store.findSettlementAccount(programId, currency)
        if (Option.isSome(existing)) return existing.value
        const id = newId()
        const created_at = yield* nowIso
        const inserted = yield* store.insertSettlementAccountIfMissing({ id, program_id: programId, wallet_id: null, kind: "settlement", currency, created_at })
        const account = Option.getOrThrow(yield* store.findSettlementAccount(programId, currency))
        if (inserted) yield* events.emit(programId, "financial_account.created", account)
        return account
      })

    /** The accounts an order names, from the cache of immutable attributes or one read. */
    const accountsOf = (programId: string, order: TransferOrder) =>
      Effect.gen(function*() {
        const { ids, settlementCurrency } = accountsToRead(order)
        const cached = accountCache.lookup(programId, ids, settlementCurrency)
        if (cached !== undefined) return cached
        const rows = yield* store.findPostingAccounts(programId, ids.length === 0 ? [""] : ids, settlementCurrency)
        accountCache.remember(rows)
        return rows
      })

    /** After the commit: wakes this process's webhook workers when the store asks; a refusal is insufficient_funds. */
    const afterCommit = (outcome: PostingOutcome, order: TransferOrder) =>
      Effect.gen(function*() {
        if (outcome.wake) yield* webhooks.wake
        if (!outcome.posted) return yield* insufficient(outcome, order)
      })

    /** A new transaction between accounts all known: one atomic store call, no transaction around it. */
    const postAtOnce = (p: PreparedTransfer, source: FinancialAccount, target: FinancialAccount) =>
      Effect.gen(function*() {
        const { posted, posting } = transferPosting(p, source, target, { _tag: "New" }, yield* nowIso)
        yield* afterCommit(yield* write(store.postTransfer(posting), { atomic: true }), p.order)
        return posted
      })

    /** Attaching to an existing transaction (locked), or a settlement account still to create: one transaction. */
    const postInTransaction = (p: PreparedTransfer) =>
      Effect.gen(function*() {
        const { outcome, posted } = yield* write(Effect.gen(function*() {
          const settlement = p.from !== null && p.to !== null ? null : p.settlement ?? (yield* settlementAccount(p.programId, p.order.currency))
          const plan = yield* transactionPlan(p)
          const { posted, posting } = transferPosting(p, p.from ?? settlement!, p.to ?? settlement!, plan, yield* nowIso)
          const outcome = yield* store.postTransfer(posting)
          // Refused: fail inside, so whatever this transaction wrote (a settlement account) rolls back.
          if (!outcome.posted) return yield* insufficient(outcome, p.order)
          return { outcome, posted }
        }))
        yield* afterCommit(outcome, p.order)
        return posted
      })

    const transactionPlan = (p: PreparedTransfer): Effect.Effect<TransactionPlan, TransferError> =>
      p.order.transaction_id === null
        ? Effect.succeed({ _tag: "New" })
        : Effect.gen(function*() {
          const found = yield* findOwned(p.order.transaction_id!, TRANSACTION, (id) => store.findTransaction(p.programId, id, true))
          const transaction = yield* checkAttachable(found, p.order.currency)
          return { _tag: "Existing", transaction, pendingTransfers: yield* store.countPendingTransfers(transaction.id) }
        })

    const post = (programId: string, order: TransferOrder): Effect.Effect<PostedTransfer, TransferError> =>
      Effect.gen(function*() {
        const p = yield* prepareTransfer(programId, order, yield* accountsOf(programId, order))
        const both = p.from !== null && p.to !== null
        if (order.transaction_id === null && (both || p.settlement !== null)) {
          return yield* postAtOnce(p, p.from ?? p.settlement!, p.to ?? p.settlement!)
        }
        return yield* postInTransaction(p)
      })

    const walletAccount = (programId: string, walletId: string) =>
      Effect.gen(function*() {
        const wallet = yield* findOwned(walletId, WALLET, (id) => store.findWallet(programId, id))
        const account = yield* findOwned(wallet.financial_account_id, WALLET_ACCOUNT, (id) => store.findAccount(programId, id))
        return { wallet, account }
      })

    return {
      /** Creates a wallet and its financial account; emits financial_account.created and wallet.created. */
      createWallet: (programId: string, input: CreateWallet): Effect.Effect<Wallet, SqlError.SqlError> =>
        transactor.withTransaction(Effect.gen(function*() {
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
          yield* store.insertAccount({ ...account, created_at: now })
          yield* store.insertWallet(wallet)
          const record: FinancialAccount = { ...account, object: "financial_account", balance: { amount: 0, currency }, created_at: now, updated_at: now }
          yield* events.emit(programId, "financial_account.created", record)
          yield* events.emit(programId, "wallet.created", wallet)
          return wallet
        })),

      /** A wallet of the program (404 param wallet_id otherwise). */
      getWallet: (programId: string, walletId: string): Effect.Effect<Wallet, NotFound | SqlError.SqlError> =>
        findOwned(walletId, WALLET, (id) => store.findWallet(programId, id)),

      listWallets: (programId: string, request: PageRequest) => page(store.listWallets(programId, toWindow(request))),

      /** The financial account of a wallet with its balance; NotFound (param wallet_id) for an unknown wallet. */
      walletAccount: (programId: string, walletId: string): Effect.Effect<{ readonly wallet: Wallet; readonly account: FinancialAccount }, NotFound | SqlError.SqlError> =>
        walletAccount(programId, walletId),

      /** A financial account of the program with its principal balance (404 param financial_account_id otherwise). */
      getFinancialAccount: (programId: string, accountId: string): Effect.Effect<FinancialAccount, NotFound | SqlError.SqlError> =>
        findOwned(accountId, ACCOUNT, (id) => store.findAccount(programId, id)),

      listFinancialAccounts: (programId: string, filter: AccountFilter, request: PageRequest) =>
        page(store.listAccounts(programId, filter, toWindow(request))),

      /** Debits, credits and balance of every book of an account. */
      balances: (programId: string, accountId: string): Effect.Effect<Page<BookBalance>, NotFound | SqlError.SqlError> =>
        Effect.gen(function*() {
          const account = yield* findOwned(accountId, ACCOUNT, (id) => store.findAccount(programId, id))
          const rows = yield* store.balancesOf(account.id)
          return { data: rows, total_count: rows.length }
        }),

      /**
       * Posts a transfer and its one book transfer (docs/ledger.md); creates its transaction unless
       * `transaction_id` names one. On failure nothing is written: NotFound (unknown account or
       * transaction), Conflict (declined transaction), BusinessRuleViolation (insufficient_funds,
       * currency_mismatch, same_financial_account, settlement_account_not_allowed), InvalidRequest
       * (the sides a rail needs).
       */
      postTransfer: (programId: string, request: TransferRequest): Effect.Effect<PostedTransfer, TransferError> =>
        post(programId, { ...request, rail: request.payment_rail, card: null }),

      getTransfer: (programId: string, transferId: string): Effect.Effect<Transfer, NotFound | SqlError.SqlError> =>
        findOwned(transferId, TRANSFER, (id) => store.findTransfer(programId, id, false)),

      listTransfers: (programId: string, filter: TransferFilter, request: PageRequest) =>
        page(store.listTransfers(programId, filter, toWindow(request))),

      /**
       * Settles a PENDING transfer (sandbox simulation of the rail): emits transfer.settled, and
       * transaction.updated when its transaction becomes SETTLED; 409 when already settled. The
       * entries were posted when the transfer was created; settling posts none.
       */
      settleTransfer: (programId: string, transferId: string): Effect.Effect<Transfer, NotFound | Conflict | SqlError.SqlError> =>
        transactor.withTransaction(Effect.gen(function*() {
          const found = yield* findOwned(transferId, TRANSFER, (id) => store.findTransfer(programId, id, true))
          if (found.status !== "PENDING") return yield* new Conflict({ message: `The transfer is already ${found.status}.`, param: "transfer_id" })
          const now = yield* nowIso
          yield* store.setTransferStatus(found.id, "SETTLED", now)
          const transfer: Transfer = { ...found, status: "SETTLED", updated_at: now }
          yield* events.emit(programId, "transfer.settled", transfer)
          const transaction = yield* store.findTransaction(programId, transfer.transaction_id, true)
          if (Option.isSome(transaction) && transaction.value.status === "PENDING" && (yield* store.countPendingTransfers(transaction.value.id)) === 0) {
            yield* store.setTransactionStatus(transaction.value.id, "SETTLED", now)
            yield* events.emit(programId, "transaction.updated", { ...transaction.value, status: "SETTLED", updated_at: now })
          }
          return transfer
        })),

      getTransaction: (programId: string, transactionId: string): Effect.Effect<Transaction, NotFound | SqlError.SqlError> =>
        findOwned(transactionId, TRANSACTION, (id) => store.findTransaction(programId, id, false)),

      listTransactions: (programId: string, filter: TransactionFilter, request: PageRequest) =>
        page(store.listTransactions(programId, filter, toWindow(request))),

      /**
       * Approves a card authorization: an APPROVED transaction and a `card` transfer of the amount
       * from the card's wallet account to the program's settlement account, settled at once.
       * insufficient_funds (nothing written) when the wallet cannot cover it. Joins the caller's transaction.
       */
      approveCardAuthorization: (programId: string, input: CardAuthorizationInput): Effect.Effect<PostedTransfer, TransferError> =>
        post(programId, {
          rail: "card",
          amount: input.amount,
          currency: input.currency,
          from_financial_account_id: input.financial_account_id,
          to_financial_account_id: null,
          transaction_id: null,
          description: null,
          card: { card_id: input.card_id, mcc: input.mcc, merchant_name: input.merchant_name }
        }),

      /** Records a DECLINED card authorization (no transfer, no entries); emits transaction.updated. Joins the caller's transaction. */
      declineCardAuthorization: (programId: string, input: CardDeclineInput): Effect.Effect<Transaction, SqlError.SqlError> =>
        transactor.withTransaction(Effect.gen(function*() {
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
          yield* store.insertTransaction(transaction)
          yield* events.emit(programId, "transaction.updated", transaction)
          return transaction
        })),

      /** Book transfers of a transaction; 404 param transaction_id for unknown or other-program ids. */
      listTransactionBookTransfers: (
        programId: string,
        transactionId: string,
        filter: Omit<BookTransferFilter, "transaction_id" | "financial_account_id">,
        request: PageRequest
      ): Effect.Effect<Page<BookTransfer>, NotFound | SqlError.SqlError> =>
        Effect.gen(function*() {
          const found = yield* findOwned(transactionId, TRANSACTION, (id) => store.findTransaction(programId, id, false))
          return yield* page(store.listBookTransfers(programId, { ...filter, transaction_id: found.id }, toWindow(request, "posted_at")))
        }),

      /** Book transfers with an entry on an account; 404 param financial_account_id. */
      listAccountBookTransfers: (
        programId: string,
        accountId: string,
        filter: Omit<BookTransferFilter, "financial_account_id">,
        request: PageRequest
      ): Effect.Effect<Page<BookTransfer>, NotFound | SqlError.SqlError> =>
        Effect.gen(function*() {
          const account = yield* findOwned(accountId, ACCOUNT, (id) => store.findAccount(programId, id))
          return yield* page(store.listBookTransfers(programId, { ...filter, financial_account_id: account.id }, toWindow(request, "posted_at")))
        })
    }
  })
}) {}
