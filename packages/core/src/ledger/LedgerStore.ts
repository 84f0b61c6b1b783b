import type { SqlError } from "@effect/sql"
import { Context, type Effect, type Option } from "effect"
import type { IssuingEvent } from "../events/Records.js"
import type { PageWindow } from "../platform/Paging.js"
import type { BalanceDelta } from "./PostingRules.js"
import type {
  AccountKind,
  Book,
  BookBalance,
  BookTransfer,
  FinancialAccount,
  Transaction,
  TransactionStatus,
  Transfer,
  TransferStatus,
  Wallet
} from "./Records.js"

/** A page of rows and the total matching the filter. */
export interface Rows<A> {
  readonly rows: ReadonlyArray<A>
  readonly total: number
}

export interface AccountFilter {
  readonly kind?: AccountKind | undefined
  readonly wallet_id?: string | undefined
  readonly currency?: string | undefined
}

export interface TransferFilter {
  readonly status?: TransferStatus | undefined
  readonly payment_rail?: string | undefined
  readonly transaction_id?: string | undefined
  readonly financial_account_id?: string | undefined
}

export interface TransactionFilter {
  readonly status?: TransactionStatus | undefined
  readonly card_id?: string | undefined
}

/** Filters of the two book-transfer lists (interface §4.6, §4.7). */
export interface BookTransferFilter {
  readonly transaction_id?: string | undefined
  /** Book transfers with an entry on this account (and in `book`, when given). */
  readonly financial_account_id?: string | undefined
  readonly book?: string | undefined
  readonly transfer_id?: string | undefined
}

/** The principal and cash totals of an account, as locked for a posting. */
export interface LockedBalance {
  readonly financial_account_id: string
  readonly book: Book
  readonly debitsMinor: number
  readonly creditsMinor: number
}

/**
 * Everything one transfer with a NEW transaction writes, computed (and asserted) by the ledger
 * before the write: the store writes it in one statement (see `postNewTransfer`).
 */
export interface NewTransferPosting {
  readonly transaction: Transaction
  readonly transfer: Transfer
  readonly bookTransfer: BookTransfer
  readonly deltas: ReadonlyArray<BalanceDelta>
  /** Refuse (write nothing) unless the source's principal balance covers the amount, checked under lock. */
  readonly checkFunds: boolean
  /** The events of the change, in order; each is fanned out to its webhook subscriptions. */
  readonly events: ReadonlyArray<IssuingEvent>
}

/** What `postNewTransfer` did. */
export interface PostingOutcome {
  /** False when the source could not cover the amount: nothing was written. */
  readonly posted: boolean
  /** The source's principal balance read for the funds check (0 when not checked). */
  readonly availableMinor: number
  /**
   * True when webhook deliveries were queued and this process's workers should be woken (SQLite;
   * PostgreSQL notifies from SQL itself and reports false).
   */
  readonly wake: boolean
}

/** A new account row (balances start at zero in every book). */
export interface NewAccount {
  readonly id: string
  readonly program_id: string
  readonly wallet_id: string | null
  readonly kind: AccountKind
  readonly currency: string
  readonly created_at: string
}

/**
 * Storage port of the ledger. Postings are append-only: book transfers and entries are inserted,
 * never updated; each posting updates the (account, book) balance rows in the same transaction.
 */
export interface LedgerStoreService {
  /** Inserts an account and a zero balance row for each book. */
  readonly insertAccount: (account: NewAccount) => Effect.Effect<void, SqlError.SqlError>
  /** Inserts the program's settlement account of a currency unless one exists; true when inserted. */
  readonly insertSettlementAccountIfMissing: (account: NewAccount) => Effect.Effect<boolean, SqlError.SqlError>
  readonly findSettlementAccount: (programId: string, currency: string) => Effect.Effect<Option.Option<FinancialAccount>, SqlError.SqlError>
  readonly findAccount: (programId: string, accountId: string) => Effect.Effect<Option.Option<FinancialAccount>, SqlError.SqlError>
  readonly findAccounts: (programId: string, accountIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<FinancialAccount>, SqlError.SqlError>
  /** One read for a posting: these accounts of the program and, when `settlementCurrency` is given, its settlement account of that currency. */
  readonly findPostingAccounts: (
    programId: string,
    accountIds: ReadonlyArray<string>,
    settlementCurrency: string | null
  ) => Effect.Effect<ReadonlyArray<FinancialAccount>, SqlError.SqlError>
  readonly listAccounts: (programId: string, filter: AccountFilter, window: PageWindow) => Effect.Effect<Rows<FinancialAccount>, SqlError.SqlError>
  readonly balancesOf: (accountId: string) => Effect.Effect<ReadonlyArray<BookBalance>, SqlError.SqlError>
  /**
   * Reads the balance rows of these accounts inside the current transaction; on PostgreSQL they are
   * locked FOR UPDATE in (account id, book) order so concurrent postings cannot deadlock each other.
   */
  readonly lockBalances: (accountIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<LockedBalance>, SqlError.SqlError>

  readonly insertWallet: (wallet: Wallet) => Effect.Effect<void, SqlError.SqlError>
  readonly findWallet: (programId: string, walletId: string) => Effect.Effect<Option.Option<Wallet>, SqlError.SqlError>
  readonly listWallets: (programId: string, window: PageWindow) => Effect.Effect<Rows<Wallet>, SqlError.SqlError>

  readonly insertTransaction: (transaction: Transaction) => Effect.Effect<void, SqlError.SqlError>
  /** A transaction of the program; `lock` takes a row lock on PostgreSQL. */
  readonly findTransaction: (programId: string, transactionId: string, lock: boolean) => Effect.Effect<Option.Option<Transaction>, SqlError.SqlError>
  readonly setTransactionStatus: (transactionId: string, status: TransactionStatus, at: string) => Effect.Effect<void, SqlError.SqlError>
  readonly listTransactions: (programId: string, filter: TransactionFilter, window: PageWindow) => Effect.Effect<Rows<Transaction>, SqlError.SqlError>
  /** Number of PENDING transfers of a transaction. */
  readonly countPendingTransfers: (transactionId: string) => Effect.Effect<number, SqlError.SqlError>

  readonly insertTransfer: (transfer: Transfer) => Effect.Effect<void, SqlError.SqlError>
  readonly findTransfer: (programId: string, transferId: string, lock: boolean) => Effect.Effect<Option.Option<Transfer>, SqlError.SqlError>
  readonly setTransferStatus: (transferId: string, status: TransferStatus, at: string) => Effect.Effect<void, SqlError.SqlError>
  readonly listTransfers: (programId: string, filter: TransferFilter, window: PageWindow) => Effect.Effect<Rows<Transfer>, SqlError.SqlError>

  /** Appends a book transfer with its entries and applies `deltas` to the balance rows. */
  readonly postBookTransfer: (
    programId: string,
    bookTransfer: BookTransfer,
    deltas: ReadonlyArray<BalanceDelta>
  ) => Effect.Effect<void, SqlError.SqlError>
  /**
   * True when `postNewTransfer` is available: PostgreSQL (the `issuing_post_transfer` function)
   * and SQLite with the `SyncSql` port (ledger/SqlitePosting.ts).
   */
  readonly oneStatementPosting: boolean
  /**
   * Writes a transfer with a new transaction in ONE call: PostgreSQL one statement (locks both
   * accounts' balance rows in (account id, book) order), SQLite one synchronous call of prepared
   * statements inside the current BEGIN IMMEDIATE transaction; checks funds (under the lock /
   * inside the write transaction) when asked, then writes every row and the events with their
   * webhook deliveries. All-or-nothing; writes nothing when funds are short (posted false).
   * PostgreSQL: autocommit or the caller's transaction; SQLite: the caller's transaction (the
   * group commit's or an outer one), else its own. Only where `oneStatementPosting`.
   */
  readonly postNewTransfer: (posting: NewTransferPosting) => Effect.Effect<PostingOutcome, SqlError.SqlError>
  readonly listBookTransfers: (programId: string, filter: BookTransferFilter, window: PageWindow) => Effect.Effect<Rows<BookTransfer>, SqlError.SqlError>
}

/** The ledger storage port. */
export class LedgerStore extends Context.Tag("@issuing/core/LedgerStore")<LedgerStore, LedgerStoreService>() {}
