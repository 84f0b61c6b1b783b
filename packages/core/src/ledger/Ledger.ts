import { SqlClient, type SqlError } from "@effect/sql"
import { Effect, Option } from "effect"
import { BusinessRuleViolation, Conflict, InvalidRequest, NotFound } from "../platform/Errors.js"
import { Events } from "../events/Events.js"
import { isUuid, newId } from "../platform/Ids.js"
import { IssuingConfig } from "../platform/IssuingConfig.js"
import { type Page, type PageRequest, toWindow } from "../platform/Paging.js"
import { nowIso } from "../platform/Time.js"
import { Transactor } from "../sql/Transactor.js"
import { makeGroupCommit } from "./GroupCommit.js"
import {
  type AccountFilter,
  type BookTransferFilter,
  LedgerStore,
  type TransactionFilter,
  type TransferFilter
} from "./LedgerStore.js"
import { balanceDeltas, transferEntries } from "./PostingRules.js"
import {
  type BookBalance,
  type BookTransfer,
  type FinancialAccount,
  MAX_AMOUNT_MINOR,
  PAYMENT_RAILS,
  type PaymentRail,
  type Transaction,
  type Transfer,
  type TransferRail,
  type Wallet
} from "./Records.js"

/** Longest description of a transfer, in characters. */
export const MAX_DESCRIPTION_LENGTH = 500
/** Longest holder name / email, in characters. */
export const MAX_HOLDER_NAME_LENGTH = 200
export const MAX_EMAIL_LENGTH = 254
/** The currency of a wallet created without one. */
export const DEFAULT_CURRENCY = "USD"

const CURRENCY_PATTERN = /^[A-Z]{3}$/
const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

/** Input of a transfer (CONTRACT §3), as POST /v1/transfers takes it. */
export interface TransferInput {
  readonly payment_rail: string
  readonly amount: number
  readonly currency: string
  readonly from_financial_account_id?: string | null | undefined
  readonly to_financial_account_id?: string | null | undefined
  /** Attach to this existing transaction instead of creating one. */
  readonly transaction_id?: string | null | undefined
  readonly description?: string | null | undefined
}

/** A posted transfer: the transfer, its transaction (as it stands after the posting) and its book transfer. */
export interface PostedTransfer {
  readonly transfer: Transfer
  readonly transaction: Transaction
  readonly book_transfer: BookTransfer
}

/** A card authorization to approve (see `Ledger.approveCardAuthorization`). */
export interface CardAuthorizationInput {
  readonly card_id: string
  /** The card's wallet account: the account debited. */
  readonly financial_account_id: string
  readonly amount: number
  readonly currency: string
  readonly mcc?: string | null | undefined
  readonly merchant_name?: string | null | undefined
}

/** A declined card authorization to record (see `Ledger.declineCardAuthorization`). */
export interface CardDeclineInput {
  readonly card_id: string
  readonly amount: number
  readonly currency: string
  readonly decline_reason: string
  readonly mcc?: string | null | undefined
  readonly merchant_name?: string | null | undefined
}

export interface CreateWalletInput {
  readonly holder: { readonly name: string; readonly email?: string | null | undefined }
  readonly currency?: string | undefined
}

/** Failures of a transfer. */
export type TransferError = InvalidRequest | NotFound | Conflict | BusinessRuleViolation | SqlError.SqlError

const rule = (code: string, message: string, param: string | null) => new BusinessRuleViolation({ code, message, param })

/** Validates an amount in minor units: a positive safe integer no larger than MAX_AMOUNT_MINOR. */
export const validateAmount = (amount: unknown, param = "amount"): Effect.Effect<number, InvalidRequest> =>
  typeof amount === "number" && Number.isSafeInteger(amount) && amount > 0 && amount <= MAX_AMOUNT_MINOR
    ? Effect.succeed(amount)
    : Effect.fail(new InvalidRequest({
      message: `${param} must be a positive integer in minor units, at most ${MAX_AMOUNT_MINOR}.`,
      param
    }))

/** Validates an ISO 4217 currency code (three upper-case letters). */
export const validateCurrency = (currency: unknown, param = "currency"): Effect.Effect<string, InvalidRequest> =>
  typeof currency === "string" && CURRENCY_PATTERN.test(currency)
    ? Effect.succeed(currency)
    : Effect.fail(new InvalidRequest({ message: `${param} must be an ISO 4217 code in upper case, e.g. USD.`, param }))

const SETTLES_AT_ONCE: ReadonlySet<TransferRail> = new Set(["book", "fednow_instant", "card"])

/**
 * The ledger: wallets, financial accounts, transfers, transactions and book transfers.
 *
 * Every write runs through the Transactor: called inside a caller's transaction (an idempotent
 * request, a card authorization) it joins it; called on its own, a transfer goes through group
 * commit (many transfers, one durable commit, each in its own savepoint).
 */
export class Ledger extends Effect.Service<Ledger>()("@issuing/core/Ledger", {
  scoped: Effect.gen(function*() {
    const store = yield* LedgerStore
    const transactor = yield* Transactor
    const events = yield* Events
    const config = yield* IssuingConfig
    const groupCommit = yield* makeGroupCommit(transactor)
    // SQLite has one connection and one writer: every commit is an fsync nobody shares, so batching
    // concurrent transfers into one commit is what makes it fast. PostgreSQL already shares WAL
    // flushes between concurrent commits, and a single batch lane would serialize its round trips,
    // so there each transfer is its own transaction over the pool.
    const useGroupCommit = (yield* SqlClient.SqlClient).onDialectOrElse({ pg: () => false, orElse: () => true })

    /** Runs a write: joins the caller's transaction if there is one, else its own (or a group) commit. */
    const write = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E | SqlError.SqlError> =>
      Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (outer) =>
        Option.isSome(outer) || !useGroupCommit ? transactor.withTransaction(effect) : groupCommit.submit(effect))

    const missing = (resource: string, param: string) => new NotFound({ message: `No such ${resource}.`, param })

    const accountOf = (programId: string, accountId: string, param: string) =>
      isUuid(accountId)
        ? Effect.flatMap(store.findAccount(programId, accountId.toLowerCase()), Option.match({
          onNone: () => Effect.fail(missing("financial account", param)),
          onSome: Effect.succeed
        }))
        : Effect.fail(missing("financial account", param))

    /** The program's settlement account of a currency, created (with its event) the first time it is needed. */
    const settlementAccount = (programId: string, currency: string) =>
      Effect.gen(function*() {
        const existing = yield* store.findSettlementAccount(programId, currency)
        if (Option.isSome(existing)) return existing.value
        const now = yield* nowIso
        const inserted = yield* store.insertSettlementAccountIfMissing({
          id: newId(),
          program_id: programId,
          wallet_id: null,
          kind: "settlement",
          currency,
          created_at: now
        })
        const account = yield* Effect.flatMap(store.findSettlementAccount(programId, currency), Option.match({
          onNone: () => Effect.dieMessage("settlement account missing after insert"),
          onSome: Effect.succeed
        }))
        if (inserted) yield* events.emit(programId, "financial_account.created", account)
        return account
      })

    const nullable = (value: string | null | undefined) => (value === undefined || value === null ? null : value)

    /** The transfer posting: validation, accounts, funds check under lock, entries, balances, events. */
    const post = (
      programId: string,
      rail: TransferRail,
      input: TransferInput,
      card: { readonly card_id: string; readonly mcc: string | null; readonly merchant_name: string | null } | null
    ): Effect.Effect<PostedTransfer, TransferError> =>
      Effect.gen(function*() {
        const amount = yield* validateAmount(input.amount)
        const currency = yield* validateCurrency(input.currency)
        const description = nullable(input.description)
        if (description !== null && description.length > MAX_DESCRIPTION_LENGTH) {
          return yield* new InvalidRequest({ message: `description is longer than ${MAX_DESCRIPTION_LENGTH} characters.`, param: "description" })
        }
        const fromId = nullable(input.from_financial_account_id)
        const toId = nullable(input.to_financial_account_id)
        const external = rail === "ach_same_day" || rail === "wire" || rail === "fednow_instant"
        if (rail === "book") {
          if (fromId === null) return yield* new InvalidRequest({ message: "A book transfer needs from_financial_account_id.", param: "from_financial_account_id" })
          if (toId === null) return yield* new InvalidRequest({ message: "A book transfer needs to_financial_account_id.", param: "to_financial_account_id" })
        } else if (external) {
          if (fromId !== null && toId !== null) {
            return yield* new InvalidRequest({
              message: `A ${rail} transfer names exactly one account: to_financial_account_id (inbound) or from_financial_account_id (outbound); the other side is the program's settlement account.`,
              param: "to_financial_account_id"
            })
          }
          if (fromId === null && toId === null) {
            return yield* new InvalidRequest({ message: `A ${rail} transfer needs to_financial_account_id (inbound) or from_financial_account_id (outbound).`, param: "to_financial_account_id" })
          }
        }
        const from = fromId === null ? null : yield* accountOf(programId, fromId, "from_financial_account_id")
        const to = toId === null ? null : yield* accountOf(programId, toId, "to_financial_account_id")
        for (const [account, param] of [[from, "from_financial_account_id"], [to, "to_financial_account_id"]] as const) {
          if (account === null) continue
          if (account.kind !== "wallet") {
            return yield* rule("settlement_account_not_allowed", "Settlement accounts move money only as the counterparty of an external rail; name a wallet account.", param)
          }
          if (account.currency !== currency) {
            return yield* rule("currency_mismatch", `The account ${account.id} holds ${account.currency}, not ${currency}.`, "currency")
          }
        }
        if (from !== null && to !== null && from.id === to.id) {
          return yield* rule("same_financial_account", "from_financial_account_id and to_financial_account_id must differ.", "to_financial_account_id")
        }

        // The transaction this transfer belongs to: an existing one (locked), or a new one below.
        let existing: Transaction | null = null
        const transactionId = nullable(input.transaction_id)
        if (transactionId !== null) {
          if (!isUuid(transactionId)) return yield* missing("transaction", "transaction_id")
          const found = yield* store.findTransaction(programId, transactionId.toLowerCase(), true)
          if (Option.isNone(found)) return yield* missing("transaction", "transaction_id")
          existing = found.value
          if (existing.status === "DECLINED") {
            return yield* new Conflict({ message: "The transaction was declined; no transfer can be attached to it.", param: "transaction_id" })
          }
          if (existing.currency !== currency) {
            return yield* rule("currency_mismatch", `The transaction is in ${existing.currency}, not ${currency}.`, "currency")
          }
        }

        const source = from ?? (yield* settlementAccount(programId, currency))
        const target = to ?? (yield* settlementAccount(programId, currency))

        // The funds check reads the balance rows under the locks the posting then updates.
        const locked = yield* store.lockBalances([source.id, target.id])
        if (source.kind === "wallet") {
          const principal = locked.find((row) => row.financial_account_id === source.id && row.book === "principal")
          const available = principal === undefined ? 0 : principal.creditsMinor - principal.debitsMinor
          if (available < amount) {
            return yield* rule("insufficient_funds", `Insufficient funds: the account holds ${available} ${currency} minor units, the transfer needs ${amount}.`, "amount")
          }
        }

        const now = yield* nowIso
        const status = SETTLES_AT_ONCE.has(rail) ? "SETTLED" : "PENDING"
        let transaction: Transaction
        if (existing === null) {
          transaction = {
            id: newId(),
            object: "transaction",
            program_id: programId,
            status: card === null ? status : "APPROVED",
            amount,
            currency,
            card_id: card?.card_id ?? null,
            decline_reason: null,
            mcc: card?.mcc ?? null,
            merchant_name: card?.merchant_name ?? null,
            created_at: now,
            updated_at: now
          }
          yield* store.insertTransaction(transaction)
        } else {
          transaction = existing
        }
        const transfer: Transfer = {
          id: newId(),
          object: "transfer",
          program_id: programId,
          transaction_id: transaction.id,
          payment_rail: rail,
          amount,
          currency,
          from_financial_account_id: source.id,
          to_financial_account_id: target.id,
          status,
          description,
          created_at: now,
          updated_at: now
        }
        yield* store.insertTransfer(transfer)
        const entries = transferEntries(source.id, target.id, amount, currency)
        const bookTransfer: BookTransfer = {
          id: newId(),
          object: "book_transfer",
          transfer_id: transfer.id,
          transaction_id: transaction.id,
          amount: { amount, currency },
          financial_account_ids: [source.id, target.id],
          entries,
          posted_at: now
        }
        yield* store.postBookTransfer(programId, bookTransfer, balanceDeltas(entries))

        yield* events.emit(programId, "transfer.created", transfer)
        if (existing === null) {
          yield* events.emit(programId, "transaction.updated", transaction)
        } else if (existing.status === "PENDING" || existing.status === "SETTLED") {
          // A transfer-driven transaction is SETTLED once every one of its transfers is.
          const next = (yield* store.countPendingTransfers(existing.id)) > 0 ? "PENDING" : "SETTLED"
          if (next !== existing.status) {
            yield* store.setTransactionStatus(existing.id, next, now)
            transaction = { ...existing, status: next, updated_at: now }
            yield* events.emit(programId, "transaction.updated", transaction)
          }
        }
        if (status === "SETTLED") {
          yield* events.emit(programId, rail === "fednow_instant" ? "transfer.settled.instant" : "transfer.settled", transfer)
        }
        return { transfer, transaction, book_transfer: bookTransfer }
      })

    const page = <A>(effect: Effect.Effect<{ readonly rows: ReadonlyArray<A>; readonly total: number }, SqlError.SqlError>) =>
      Effect.map(effect, ({ rows, total }): Page<A> => ({ data: rows, total_count: total }))

    return {
      // ---- wallets -------------------------------------------------------------------------

      /** Creates a wallet and its financial account; emits financial_account.created and wallet.created. */
      createWallet: (programId: string, input: CreateWalletInput): Effect.Effect<Wallet, InvalidRequest | SqlError.SqlError> =>
        Effect.gen(function*() {
          const name = typeof input.holder?.name === "string" ? input.holder.name.trim() : ""
          if (name.length === 0 || name.length > MAX_HOLDER_NAME_LENGTH) {
            return yield* new InvalidRequest({ message: `holder.name must be 1 to ${MAX_HOLDER_NAME_LENGTH} characters.`, param: "holder.name" })
          }
          const email = nullable(input.holder.email)
          if (email !== null && (email.length > MAX_EMAIL_LENGTH || !EMAIL_PATTERN.test(email))) {
            return yield* new InvalidRequest({ message: "holder.email is not a valid email address.", param: "holder.email" })
          }
          const currency = yield* validateCurrency(input.currency ?? DEFAULT_CURRENCY)
          return yield* transactor.withTransaction(Effect.gen(function*() {
            const now = yield* nowIso
            const walletId = newId()
            const accountId = newId()
            yield* store.insertAccount({ id: accountId, program_id: programId, wallet_id: walletId, kind: "wallet", currency, created_at: now })
            const wallet: Wallet = {
              id: walletId,
              object: "wallet",
              program_id: programId,
              holder: { name, email },
              financial_account_id: accountId,
              created_at: now,
              updated_at: now
            }
            yield* store.insertWallet(wallet)
            const account: FinancialAccount = {
              id: accountId,
              object: "financial_account",
              program_id: programId,
              wallet_id: walletId,
              kind: "wallet",
              currency,
              balance: { amount: 0, currency },
              created_at: now,
              updated_at: now
            }
            yield* events.emit(programId, "financial_account.created", account)
            yield* events.emit(programId, "wallet.created", wallet)
            return wallet
          }))
        }),

      /** A wallet of the program (404 param wallet_id otherwise). */
      getWallet: (programId: string, walletId: string): Effect.Effect<Wallet, NotFound | SqlError.SqlError> =>
        isUuid(walletId)
          ? Effect.flatMap(store.findWallet(programId, walletId.toLowerCase()), Option.match({
            onNone: () => Effect.fail(missing("wallet", "wallet_id")),
            onSome: Effect.succeed
          }))
          : Effect.fail(missing("wallet", "wallet_id")),

      listWallets: (programId: string, request: PageRequest) => page(store.listWallets(programId, toWindow(request))),

      /**
       * The financial account of a wallet with its available balance (`account.balance.amount`, minor
       * units). Fails with NotFound (param wallet_id) for an unknown wallet or one of another program.
       */
      walletAccount: (programId: string, walletId: string): Effect.Effect<{ readonly wallet: Wallet; readonly account: FinancialAccount }, NotFound | SqlError.SqlError> =>
        Effect.gen(function*() {
          if (!isUuid(walletId)) return yield* missing("wallet", "wallet_id")
          const wallet = yield* Effect.flatMap(store.findWallet(programId, walletId.toLowerCase()), Option.match({
            onNone: () => Effect.fail(missing("wallet", "wallet_id")),
            onSome: Effect.succeed
          }))
          const account = yield* accountOf(programId, wallet.financial_account_id, "wallet_id")
          return { wallet, account }
        }),

      // ---- financial accounts --------------------------------------------------------------

      /** A financial account of the program with its principal balance (404 param financial_account_id otherwise). */
      getFinancialAccount: (programId: string, accountId: string): Effect.Effect<FinancialAccount, NotFound | SqlError.SqlError> =>
        accountOf(programId, accountId, "financial_account_id"),

      listFinancialAccounts: (programId: string, filter: AccountFilter, request: PageRequest) =>
        page(store.listAccounts(programId, filter, toWindow(request))),

      /** Debits, credits and balance of every book of an account. */
      balances: (programId: string, accountId: string): Effect.Effect<Page<BookBalance>, NotFound | SqlError.SqlError> =>
        Effect.gen(function*() {
          const account = yield* accountOf(programId, accountId, "financial_account_id")
          const rows = yield* store.balancesOf(account.id)
          return { data: rows, total_count: rows.length }
        }),

      // ---- transfers -----------------------------------------------------------------------

      /**
       * Posts a transfer (CONTRACT §3) and its one book transfer; creates its transaction unless
       * `transaction_id` names one. Joins the caller's transaction when called inside one.
       * Fails with InvalidRequest (bad input, param named), NotFound (unknown account or
       * transaction of this program), Conflict (declined transaction) or BusinessRuleViolation
       * (insufficient_funds param amount, currency_mismatch, same_financial_account,
       * settlement_account_not_allowed); on failure nothing is written.
       */
      postTransfer: (programId: string, input: TransferInput): Effect.Effect<PostedTransfer, TransferError> =>
        PAYMENT_RAILS.includes(input.payment_rail as PaymentRail)
          ? write(post(programId, input.payment_rail as PaymentRail, input, null))
          : Effect.fail(new InvalidRequest({ message: `paymentRail must be one of ${PAYMENT_RAILS.join(", ")}.`, param: "paymentRail" })),

      getTransfer: (programId: string, transferId: string): Effect.Effect<Transfer, NotFound | SqlError.SqlError> =>
        isUuid(transferId)
          ? Effect.flatMap(store.findTransfer(programId, transferId.toLowerCase(), false), Option.match({
            onNone: () => Effect.fail(missing("transfer", "transfer_id")),
            onSome: Effect.succeed
          }))
          : Effect.fail(missing("transfer", "transfer_id")),

      listTransfers: (programId: string, filter: TransferFilter, request: PageRequest) =>
        page(store.listTransfers(programId, filter, toWindow(request))),

      /**
       * Settles a PENDING transfer (sandbox simulation of the rail's settlement): emits
       * transfer.settled, and transaction.updated when its transaction becomes SETTLED. 409 when
       * already settled. The entries were posted when the transfer was created; settling posts none.
       */
      settleTransfer: (programId: string, transferId: string): Effect.Effect<Transfer, NotFound | Conflict | SqlError.SqlError> =>
        isUuid(transferId)
          ? transactor.withTransaction(Effect.gen(function*() {
            const found = yield* store.findTransfer(programId, transferId.toLowerCase(), true)
            if (Option.isNone(found)) return yield* missing("transfer", "transfer_id")
            if (found.value.status !== "PENDING") {
              return yield* new Conflict({ message: `The transfer is already ${found.value.status}.`, param: "transfer_id" })
            }
            const now = yield* nowIso
            yield* store.setTransferStatus(found.value.id, "SETTLED", now)
            const transfer: Transfer = { ...found.value, status: "SETTLED", updated_at: now }
            yield* events.emit(programId, "transfer.settled", transfer)
            const transaction = yield* store.findTransaction(programId, transfer.transaction_id, true)
            if (Option.isSome(transaction) && transaction.value.status === "PENDING") {
              if ((yield* store.countPendingTransfers(transaction.value.id)) === 0) {
                yield* store.setTransactionStatus(transaction.value.id, "SETTLED", now)
                yield* events.emit(programId, "transaction.updated", { ...transaction.value, status: "SETTLED", updated_at: now })
              }
            }
            return transfer
          }))
          : Effect.fail(missing("transfer", "transfer_id")),

      /** True when simulation endpoints are served (sandbox only). */
      simulationsEnabled: config.environment === "sandbox",

      // ---- transactions --------------------------------------------------------------------

      getTransaction: (programId: string, transactionId: string): Effect.Effect<Transaction, NotFound | SqlError.SqlError> =>
        isUuid(transactionId)
          ? Effect.flatMap(store.findTransaction(programId, transactionId.toLowerCase(), false), Option.match({
            onNone: () => Effect.fail(missing("transaction", "transaction_id")),
            onSome: Effect.succeed
          }))
          : Effect.fail(missing("transaction", "transaction_id")),

      listTransactions: (programId: string, filter: TransactionFilter, request: PageRequest) =>
        page(store.listTransactions(programId, filter, toWindow(request))),

      /**
       * Approves a card authorization: creates an APPROVED transaction (card_id, mcc, merchant_name)
       * and posts a `card` transfer of the amount from the card's wallet account to the program's
       * settlement account, settled at once. Emits transfer.created, transaction.updated and
       * transfer.settled. Fails with BusinessRuleViolation insufficient_funds (param amount) when
       * the wallet cannot cover it — nothing is written; record the decline with
       * `declineCardAuthorization`. Joins the caller's transaction.
       */
      approveCardAuthorization: (programId: string, input: CardAuthorizationInput): Effect.Effect<PostedTransfer, TransferError> =>
        write(post(programId, "card", {
          payment_rail: "card",
          amount: input.amount,
          currency: input.currency,
          from_financial_account_id: input.financial_account_id,
          to_financial_account_id: null
        }, { card_id: input.card_id, mcc: nullable(input.mcc), merchant_name: nullable(input.merchant_name) })),

      /**
       * Records a DECLINED card authorization (no transfer, no entries) with its decline_reason;
       * emits transaction.updated. Joins the caller's transaction.
       */
      declineCardAuthorization: (programId: string, input: CardDeclineInput): Effect.Effect<Transaction, InvalidRequest | SqlError.SqlError> =>
        Effect.gen(function*() {
          const amount = yield* validateAmount(input.amount)
          const currency = yield* validateCurrency(input.currency)
          return yield* transactor.withTransaction(Effect.gen(function*() {
            const now = yield* nowIso
            const transaction: Transaction = {
              id: newId(),
              object: "transaction",
              program_id: programId,
              status: "DECLINED",
              amount,
              currency,
              card_id: input.card_id,
              decline_reason: input.decline_reason,
              mcc: nullable(input.mcc),
              merchant_name: nullable(input.merchant_name),
              created_at: now,
              updated_at: now
            }
            yield* store.insertTransaction(transaction)
            yield* events.emit(programId, "transaction.updated", transaction)
            return transaction
          }))
        }),

      // ---- book transfers ------------------------------------------------------------------

      /** Book transfers of a transaction (interface §4.6); 404 param transaction_id for unknown or other-program ids. */
      listTransactionBookTransfers: (
        programId: string,
        transactionId: string,
        filter: { readonly book?: string | undefined; readonly transfer_id?: string | undefined },
        request: PageRequest
      ): Effect.Effect<Page<BookTransfer>, NotFound | SqlError.SqlError> =>
        Effect.gen(function*() {
          if (!isUuid(transactionId)) return yield* missing("transaction", "transaction_id")
          const found = yield* store.findTransaction(programId, transactionId.toLowerCase(), false)
          if (Option.isNone(found)) return yield* missing("transaction", "transaction_id")
          return yield* page(store.listBookTransfers(programId, bookTransferFilter({ ...filter, transaction_id: found.value.id }), toWindow(request, "posted_at")))
        }),

      /** Book transfers with an entry on an account (interface §4.7); 404 param financial_account_id. */
      listAccountBookTransfers: (
        programId: string,
        accountId: string,
        filter: { readonly book?: string | undefined; readonly transfer_id?: string | undefined; readonly transaction_id?: string | undefined },
        request: PageRequest
      ): Effect.Effect<Page<BookTransfer>, NotFound | SqlError.SqlError> =>
        Effect.gen(function*() {
          const account = yield* accountOf(programId, accountId, "financial_account_id")
          return yield* page(store.listBookTransfers(programId, bookTransferFilter({ ...filter, financial_account_id: account.id }), toWindow(request, "posted_at")))
        })
    }
  })
}) {}

/** Ids in filters are compared in lower case; a malformed id simply matches nothing. */
const bookTransferFilter = (filter: BookTransferFilter): BookTransferFilter => ({
  ...filter,
  transfer_id: filter.transfer_id?.toLowerCase(),
  transaction_id: filter.transaction_id?.toLowerCase()
})
