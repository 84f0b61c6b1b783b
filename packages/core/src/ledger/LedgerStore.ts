import type { InvalidRequest } from "../platform/Errors.js"
import type { SqlError } from "@effect/sql"
import { Context, type Effect, type Option } from "effect"
import type { IssuingEvent } from "../events/Records.js"
import type { CreatedWindow, PageWindow } from "../platform/Paging.js"
import type {
  BookTransferOrderField,
  FinancialAccountOrderField,
  TransactionOrderField,
  TransferOrderField,
  WalletOrderField
} from "./OrderFields.js"
import type { BalanceDelta } from "./PostingRules.js"
import type {
  AccountKind,
  BookBalance,
  BookTransfer,
  FinancialAccount,
  Transaction,
  TransactionStatus,
  Transfer,
  TransferStatus,
  Wallet,
  WalletFilter
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
  /** A window on created_at (docs/api.md#time-filters); the list is then in created_at order. */
  readonly created?: CreatedWindow | undefined
}

export interface TransactionFilter {
  readonly status?: TransactionStatus | undefined
  readonly card_id?: string | undefined
  /** A window on created_at (docs/api.md#time-filters); the list is then in created_at order. */
  readonly created?: CreatedWindow | undefined
}

/** Filters of the two book-transfer lists (a transaction's and an account's; docs/ledger.md). */
export interface BookTransferFilter {
  readonly transaction_id?: string | undefined
  /** Book transfers with an entry on this account (and in `book`, when given). */
  readonly financial_account_id?: string | undefined
  readonly book?: string | undefined
  readonly transfer_id?: string | undefined
}

/**
 * Everything one transfer writes, computed (and asserted) by the ledger before the write
 * (ledger/PrepareTransfer.ts): the store only writes it, each store its fastest way.
 */
export interface TransferPosting {
  /**
   * The transfer's transaction as it stands after the posting, and what to write of it: `insert`
   * a new one, `update` an existing one's status (the caller holds its row lock), or `none`.
   */
  readonly transaction: Transaction
  readonly transactionWrite: "insert" | "update" | "none"
  readonly transfer: Transfer
  readonly bookTransfer: BookTransfer
  readonly deltas: ReadonlyArray<BalanceDelta>
  /** Refuse (write nothing) unless the source's principal balance covers the amount, checked under lock. */
  readonly checkFunds: boolean
  /**
   * A card authorization's card: refuse (write nothing) unless it is ACTIVE, read under a lock a
   * freeze or close waits for, so an authorization decided without the card's row lock still
   * cannot commit after a freeze that committed before it (docs/ledger.md#card-authorizations).
   */
  readonly activeCardId: string | null
  /** The events of the change, in order; each is fanned out to its webhook subscriptions. */
  readonly events: ReadonlyArray<IssuingEvent>
  /**
   * A `balance.updated` event for each wallet account the posting moves (its id and the account):
   * the store composes its data, the account as the posting leaves it, under the posting's locks.
   */
  readonly balanceEvents: ReadonlyArray<BalanceEvent>
}

/** A `balance.updated` event the store writes with the account as it stands after the write. */
export interface BalanceEvent {
  readonly id: string
  readonly financial_account_id: string
}

/**
 * One message of a card transaction (docs/card-transactions.md), written by the store in one call:
 * the card still ACTIVE (when `activeCardId`), the wallet's principal row locked and its available
 * amount (`credits − debits − pending`) at least `requireAvailable` (when > 0), then the
 * transaction row (insert or update; on update the caller holds the row's lock), the hold's
 * change (`pendingDelta` on the account's pending amount), the clearing's or return's transfer
 * (`transfer`: a TransferPosting with `transactionWrite` "none", no funds check), the events and
 * the account's `balance.updated`. Nothing is written when refused.
 */
export interface CardMessagePosting {
  readonly transaction: Transaction
  readonly transactionWrite: "insert" | "update"
  /** The card's wallet account: the hold's. */
  readonly financialAccountId: string
  readonly pendingDelta: number
  readonly requireAvailable: number
  readonly activeCardId: string | null
  readonly transfer: TransferPosting | null
  readonly events: ReadonlyArray<IssuingEvent>
  /** The account's `balance.updated` event id, when its balance or pending amount changes. */
  readonly balanceEventId: string | null
}

/**
 * Why a posting wrote nothing: the source cannot cover the amount, a running total of an
 * account's book would pass `MAX_TOTAL_MINOR` (docs/ledger.md#money), or a card authorization's
 * card is no longer ACTIVE.
 */
export type PostingRefusal = "insufficient_funds" | "balance_limit_exceeded" | "card_frozen" | "card_closed"

/** What `postTransfer` did. */
export interface PostingOutcome {
  /** False when refused: nothing was written. */
  readonly posted: boolean
  readonly refusal: PostingRefusal | null
  /** The source's principal balance read for the funds check (0 when not checked). */
  readonly availableMinor: number
  /**
   * True when the write queued webhook deliveries: the ledger wakes the workers once it commits —
   * this process's, and on PostgreSQL the others' too (NOTIFY after the commit, not from the SQL;
   * docs/webhooks.md#wake-ups-on-postgresql).
   */
  readonly wake: boolean
}

/**
 * How a store posts a transfer: one call, all or nothing. PostgreSQL: one statement (a plpgsql
 * function that takes the balance-row locks in (account id, book) order); SQLite: one synchronous
 * run of prepared statements inside the current `BEGIN IMMEDIATE` transaction. Checks funds under
 * the lock when asked, and that no (account, book) debit or credit total passes `MAX_TOTAL_MINOR`,
 * then writes the transaction (per `transactionWrite`), the transfer, the book
 * transfer and its entries, the balance deltas, the events and their webhook deliveries. Writes
 * nothing when refused (posted false, with the refusal). Joins the caller's transaction when there is one;
 * outside any, it is its own.
 */
export interface LedgerPostingService {
  readonly postTransfer: (posting: TransferPosting) => Effect.Effect<PostingOutcome, SqlError.SqlError>
  /**
   * Posts many transfers in order, each as `postTransfer` would (a refused one writes nothing and
   * the next goes on), in as few calls as the store can: SQLite one synchronous call, PostgreSQL
   * one statement each. A database failure fails the whole call and writes nothing of it. Runs in
   * the caller's transaction (a batch's).
   */
  readonly postTransfers: (postings: ReadonlyArray<TransferPosting>) => Effect.Effect<ReadonlyArray<PostingOutcome>, SqlError.SqlError>
  /**
   * Posts new transfers (each with its new transaction and no card: every one `isNewTransfer`)
   * decided together, in order, over their balance rows read under the write lock, and written
   * set-based (docs/ledger.md#batches). All-or-nothing by itself — one synchronous call on SQLite,
   * one writing statement on PostgreSQL — so a database failure writes none of it, and it needs
   * no transaction from the caller: outside one it takes its own. `allOrNothing`: when any is
   * refused, none is written (the outcomes still say which were refused). A posting that is not
   * a new transfer is a defect.
   */
  readonly postNewTransfers: (
    postings: ReadonlyArray<TransferPosting>,
    options: { readonly allOrNothing: boolean }
  ) => Effect.Effect<ReadonlyArray<PostingOutcome>, SqlError.SqlError>
  /**
   * True when `postNewTransfers`, and `postTransfer` of a new transfer (`isNewTransfer`), called
   * outside any transaction commit better by themselves than as units of the write lane: SQLite
   * with its writer thread (docs/architecture.md#the-sqlite-writer-thread,
   * docs/ledger.md#coalesced-postings-on-sqlite). A batch, and a single transfer that posts at
   * once, then call the store directly rather than through the lane.
   */
  readonly commitsNewTransfersItself: boolean
  /**
   * Takes, for the rest of the caller's transaction, the locks a posting would take on these
   * accounts' balance rows, all at once in (account id, book) order: a batch that touches many
   * accounts then cannot deadlock with another batch or a single transfer (each takes its locks in
   * the same order). PostgreSQL: FOR UPDATE; SQLite: nothing (BEGIN IMMEDIATE has one writer).
   */
  readonly lockAccounts: (accountIds: ReadonlyArray<string>) => Effect.Effect<void, SqlError.SqlError>
  /**
   * Writes one message of a card transaction (see `CardMessagePosting`). With a transfer it must run in
   * the caller's transaction (PostgreSQL writes the two in two statements); without one it is one
   * statement (an authorization's hold: one round trip).
   */
  readonly postCardMessage: (posting: CardMessagePosting) => Effect.Effect<PostingOutcome, SqlError.SqlError>
  /**
   * Releases an inbound credit's pending amount when its transfer settles on its rail, and writes
   * the account's `balance.updated`; in the caller's transaction.
   */
  readonly releasePending: (
    financialAccountId: string,
    amountMinor: number,
    at: string,
    balanceEvent: { readonly id: string; readonly program_id: string }
  ) => Effect.Effect<boolean, SqlError.SqlError>
}

/** The store's posting strategy (provided by each store package). */
export class LedgerPosting extends Context.Tag("@issuing/core/LedgerPosting")<LedgerPosting, LedgerPostingService>() {}

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
/** One kind's total of a program's card transfers on one UTC day and currency (docs/network.md#reconciliation). */
export interface SettlementTotal {
  readonly kind: "clearing" | "force_post" | "return"
  readonly count: number
  readonly amount: number
}

export interface LedgerStoreService {
  /** Inserts an account and a zero balance row for each book. */
  readonly insertAccount: (account: NewAccount) => Effect.Effect<void, SqlError.SqlError>
  /** Inserts the program's settlement account of a currency unless one exists; true when inserted. */
  readonly insertSettlementAccountIfMissing: (account: NewAccount) => Effect.Effect<boolean, SqlError.SqlError>
  readonly findSettlementAccount: (programId: string, currency: string) => Effect.Effect<Option.Option<FinancialAccount>, SqlError.SqlError>
  readonly findAccount: (programId: string, accountId: string) => Effect.Effect<Option.Option<FinancialAccount>, SqlError.SqlError>
  /** One read for a posting: these accounts of the program and, when `settlementCurrency` is given, its settlement account of that currency. */
  readonly findPostingAccounts: (
    programId: string,
    accountIds: ReadonlyArray<string>,
    settlementCurrency: string | null
  ) => Effect.Effect<ReadonlyArray<FinancialAccount>, SqlError.SqlError>
  readonly listAccounts: (
    programId: string,
    filter: AccountFilter,
    window: PageWindow<FinancialAccountOrderField>
  ) => Effect.Effect<Rows<FinancialAccount>, SqlError.SqlError | InvalidRequest>
  readonly balancesOf: (accountId: string) => Effect.Effect<ReadonlyArray<BookBalance>, SqlError.SqlError>

  readonly insertWallet: (wallet: Wallet) => Effect.Effect<void, SqlError.SqlError>
  readonly findWallet: (programId: string, walletId: string) => Effect.Effect<Option.Option<Wallet>, SqlError.SqlError>
  /** A wallet of the program, locked for the rest of the caller's transaction (PostgreSQL: FOR UPDATE). */
  readonly lockWallet: (programId: string, walletId: string) => Effect.Effect<Option.Option<Wallet>, SqlError.SqlError>
  /** Writes a wallet's tag, metadata and updated_at (its tag's count moves with it: migration 0480). */
  readonly updateWallet: (wallet: Wallet) => Effect.Effect<void, SqlError.SqlError>
  /** The program's wallets, or one tag's (through the tag's partial indexes), with the exact total. */
  readonly listWallets: (
    programId: string,
    filter: WalletFilter,
    window: PageWindow<WalletOrderField>
  ) => Effect.Effect<Rows<Wallet>, SqlError.SqlError | InvalidRequest>

  readonly insertTransaction: (transaction: Transaction) => Effect.Effect<void, SqlError.SqlError>
  /** A transaction of the program; `lock` takes a row lock on PostgreSQL. */
  readonly findTransaction: (
    programId: string,
    transactionId: string,
    lock: boolean
  ) => Effect.Effect<Option.Option<Transaction>, SqlError.SqlError>
  /**
   * The card transactions, of any program, that a network linked by `networkTransactionId` (unique
   * per program; docs/network.md): one probe of its index. The caller keeps those of programs it may reach.
   */
  readonly findTransactionsByNetworkId: (networkTransactionId: string) => Effect.Effect<ReadonlyArray<Transaction>, SqlError.SqlError>
  readonly setTransactionStatus: (transactionId: string, status: TransactionStatus, at: string) => Effect.Effect<void, SqlError.SqlError>
  readonly listTransactions: (
    programId: string,
    filter: TransactionFilter,
    window: PageWindow<TransactionOrderField>
  ) => Effect.Effect<Rows<Transaction>, SqlError.SqlError | InvalidRequest>
  /** Number of PENDING transfers of a transaction. */
  readonly countPendingTransfers: (transactionId: string) => Effect.Effect<number, SqlError.SqlError>

  readonly findTransfer: (programId: string, transferId: string, lock: boolean) => Effect.Effect<Option.Option<Transfer>, SqlError.SqlError>
  readonly setTransferStatus: (transferId: string, status: TransferStatus, at: string) => Effect.Effect<void, SqlError.SqlError>
  /** Writes a returned transfer's status, return code and reason and updated_at (the caller holds its row lock). */
  readonly setTransferReturned: (transfer: Transfer) => Effect.Effect<void, SqlError.SqlError>
  readonly listTransfers: (
    programId: string,
    filter: TransferFilter,
    window: PageWindow<TransferOrderField>
  ) => Effect.Effect<Rows<Transfer>, SqlError.SqlError | InvalidRequest>

  /** Posts a transfer: the store's one posting (see `LedgerPostingService`). */
  readonly postTransfer: LedgerPostingService["postTransfer"]
  /** Posts many transfers in order (see `LedgerPostingService`). */
  readonly postTransfers: LedgerPostingService["postTransfers"]
  /** Posts new transfers decided together, all-or-nothing by itself (see `LedgerPostingService`). */
  readonly postNewTransfers: LedgerPostingService["postNewTransfers"]
  /** Whether new transfers posted outside a transaction bypass the write lane (see `LedgerPostingService`). */
  readonly commitsNewTransfersItself: boolean
  /** Locks accounts' balance rows in order for the rest of the transaction (see `LedgerPostingService`). */
  readonly lockAccounts: LedgerPostingService["lockAccounts"]
  /** Writes one message of a card transaction (see `LedgerPostingService`). */
  readonly postCardMessage: LedgerPostingService["postCardMessage"]
  /** Releases a settled inbound credit's pending amount (see `LedgerPostingService`). */
  readonly releasePending: LedgerPostingService["releasePending"]
  /**
   * The settlement totals of a program's UTC day (`YYYY-MM-DD`) and currency, one row per kind
   * that has any: kept by the stores' trigger on card transfers as they post (migration 0560).
   */
  readonly settlementTotals: (
    programId: string,
    day: string,
    currency: string
  ) => Effect.Effect<ReadonlyArray<SettlementTotal>, SqlError.SqlError>
  /**
   * Card transactions whose hold expired by `now` (PENDING, `expires_at` ≤ now), soonest first, at
   * most `limit`; on PostgreSQL locked FOR UPDATE SKIP LOCKED, so workers in other processes take
   * others (in the caller's transaction).
   */
  readonly claimExpiredHolds: (now: string, limit: number) => Effect.Effect<ReadonlyArray<Transaction>, SqlError.SqlError>
  readonly listBookTransfers: (
    programId: string,
    filter: BookTransferFilter,
    window: PageWindow<BookTransferOrderField>
  ) => Effect.Effect<Rows<BookTransfer>, SqlError.SqlError | InvalidRequest>
}

/** The ledger storage port. */
export class LedgerStore extends Context.Tag("@issuing/core/LedgerStore")<LedgerStore, LedgerStoreService>() {}
