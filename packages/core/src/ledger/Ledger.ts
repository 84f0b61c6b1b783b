import { SqlClient, type SqlError } from "@effect/sql"
import { Effect, Option, Schedule } from "effect"
import { BusinessRuleViolation, Conflict, InvalidRequest, NotFound } from "../platform/Errors.js"
import { Events } from "../events/Events.js"
import { type EventType, newEvent } from "../events/Records.js"
import { isUuid, newId } from "../platform/Ids.js"
import { IssuingConfig } from "../platform/IssuingConfig.js"
import { type Page, type PageRequest, toWindow } from "../platform/Paging.js"
import { nowIso } from "../platform/Time.js"
import { isRetryableSqlError, MAX_TRANSACTION_ATTEMPTS, Transactor } from "../sql/Transactor.js"
import { WebhookStore } from "../webhooks/WebhookStore.js"
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

const rule = (code: BusinessRuleViolation["code"], message: string, param: string | null) => new BusinessRuleViolation({ code, message, param })

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

/** Most accounts whose immutable attributes the one-statement path keeps in memory. */
export const ACCOUNT_CACHE_SIZE = 10_000

/**
 * The attributes of financial accounts that never change after creation (id, program, kind,
 * currency, wallet), so the PostgreSQL one-statement posting can validate a transfer without a
 * read. Balances in the cached records are stale and are never used: that path checks funds in
 * SQL under the row locks. Accounts are never deleted, so an entry cannot go wrong; a miss reads.
 */
const makeAccountCache = (capacity: number) => {
  const byId = new Map<string, FinancialAccount>()
  const settlements = new Map<string, FinancialAccount>()
  const put = <K>(map: Map<K, FinancialAccount>, key: K, account: FinancialAccount) => {
    if (map.size >= capacity) map.delete(map.keys().next().value!)
    map.set(key, account)
  }
  return {
    /** Every wanted account (of this program) and the settlement account, or undefined on any miss. */
    lookup: (programId: string, ids: ReadonlyArray<string>, settlementCurrency: string | null) => {
      const found: Array<FinancialAccount> = []
      for (const id of ids) {
        const account = byId.get(id)
        if (account === undefined || account.program_id !== programId) return undefined
        found.push(account)
      }
      if (settlementCurrency !== null) {
        const settlement = settlements.get(`${programId}\u0000${settlementCurrency}`)
        if (settlement === undefined) return undefined
        found.push(settlement)
      }
      return found
    },
    remember: (accounts: ReadonlyArray<FinancialAccount>) => {
      for (const account of accounts) {
        put(byId, account.id, account)
        if (account.kind === "settlement") put(settlements, `${account.program_id}\u0000${account.currency}`, account)
      }
    }
  }
}

/** Retries of a one-statement posting in autocommit: the Transactor's policy for an outermost transaction. */
const ONE_STATEMENT_RETRY = Schedule.exponential("2 millis", 2).pipe(
  Schedule.jittered,
  Schedule.intersect(Schedule.recurs(MAX_TRANSACTION_ATTEMPTS - 1))
)

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
    const webhooks = yield* WebhookStore
    const groupCommit = yield* makeGroupCommit(transactor)
    // SQLite has one connection and one writer: every commit is an fsync nobody shares, so batching
    // concurrent transfers into one commit is what makes it fast. PostgreSQL already shares WAL
    // flushes between concurrent commits, and a single batch lane would serialize its round trips,
    // so there each transfer is its own transaction over the pool.
    const useGroupCommit = (yield* SqlClient.SqlClient).onDialectOrElse({ pg: () => false, orElse: () => true })
    // Every write transaction on SQLite is BEGIN IMMEDIATE: reads inside it see the state it commits over.
    const serializedWrites = useGroupCommit

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

    const accountCache = makeAccountCache(ACCOUNT_CACHE_SIZE)

    type CardFields = { readonly card_id: string; readonly mcc: string | null; readonly merchant_name: string | null }

    /** A validated transfer request: its accounts read (one statement), nothing written yet. */
    interface Prepared {
      readonly programId: string
      readonly rail: TransferRail
      readonly amount: number
      readonly currency: string
      readonly description: string | null
      readonly from: FinancialAccount | null
      readonly to: FinancialAccount | null
      /** The program's settlement account of the currency when the rail needs one and it exists. */
      readonly settlement: FinancialAccount | null
      readonly transactionId: string | null
      readonly card: CardFields | null
    }

    /** Validation and the account read. Account kind, currency and program never change, so this read needs no lock. */
    const prepare = (
      programId: string,
      rail: TransferRail,
      input: TransferInput,
      card: CardFields | null
    ): Effect.Effect<Prepared, TransferError> =>
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
        // One read for both accounts and, for an external rail, the settlement account (none when
        // the one-statement path finds them all in its cache of immutable account attributes).
        const wanted = [fromId, toId].filter((id): id is string => id !== null && isUuid(id)).map((id) => id.toLowerCase())
        const needsSettlement = rail !== "book"
        const cached = store.oneStatementPosting ? accountCache.lookup(programId, wanted, needsSettlement ? currency : null) : undefined
        const rows = cached ?? (wanted.length === 0 && !needsSettlement
          ? []
          : yield* store.findPostingAccounts(programId, wanted.length === 0 ? [""] : wanted, needsSettlement ? currency : null))
        if (store.oneStatementPosting && cached === undefined) accountCache.remember(rows)
        const resolve = (id: string | null, param: string) =>
          id === null
            ? Effect.succeed(null)
            : Option.match(Option.fromNullable(isUuid(id) ? rows.find((row) => row.id === id.toLowerCase()) : undefined), {
              onNone: () => Effect.fail(missing("financial account", param)),
              onSome: (account) => Effect.succeed<FinancialAccount | null>(account)
            })
        const from = yield* resolve(fromId, "from_financial_account_id")
        const to = yield* resolve(toId, "to_financial_account_id")
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
        const transactionId = nullable(input.transaction_id)
        if (transactionId !== null && !isUuid(transactionId)) return yield* missing("transaction", "transaction_id")
        const settlement = needsSettlement
          ? rows.find((row) => row.kind === "settlement" && row.currency === currency) ?? null
          : null
        return {
          programId,
          rail,
          amount,
          currency,
          description,
          from,
          to,
          settlement,
          transactionId: transactionId === null ? null : transactionId.toLowerCase(),
          card
        }
      })

    const insufficient = (available: number, amount: number, currency: string) =>
      rule("insufficient_funds", `Insufficient funds: the account holds ${available} ${currency} minor units, the transfer needs ${amount}.`, "amount")

    /** The new transaction of a transfer (the same on every path). */
    const newTransaction = (p: Prepared, now: string): Transaction => {
      const status = SETTLES_AT_ONCE.has(p.rail) ? "SETTLED" : "PENDING"
      return {
        id: newId(),
        object: "transaction",
        program_id: p.programId,
        status: p.card === null ? status : "APPROVED",
        amount: p.amount,
        currency: p.currency,
        card_id: p.card?.card_id ?? null,
        decline_reason: null,
        mcc: p.card?.mcc ?? null,
        merchant_name: p.card?.merchant_name ?? null,
        created_at: now,
        updated_at: now
      }
    }

    const transferRows = (p: Prepared, source: FinancialAccount, target: FinancialAccount, transactionId: string, now: string) => {
      const status = SETTLES_AT_ONCE.has(p.rail) ? "SETTLED" as const : "PENDING" as const
      const transfer: Transfer = {
        id: newId(),
        object: "transfer",
        program_id: p.programId,
        transaction_id: transactionId,
        payment_rail: p.rail,
        amount: p.amount,
        currency: p.currency,
        from_financial_account_id: source.id,
        to_financial_account_id: target.id,
        status,
        description: p.description,
        created_at: now,
        updated_at: now
      }
      // PostingRules asserts debits = credits per currency before anything is written.
      const entries = transferEntries(source.id, target.id, p.amount, p.currency)
      const bookTransfer: BookTransfer = {
        id: newId(),
        object: "book_transfer",
        transfer_id: transfer.id,
        transaction_id: transactionId,
        amount: { amount: p.amount, currency: p.currency },
        financial_account_ids: [source.id, target.id],
        entries,
        posted_at: now
      }
      return { transfer, entries, bookTransfer }
    }

    const settledEvent = (rail: TransferRail) => (rail === "fednow_instant" ? "transfer.settled.instant" : "transfer.settled")

    /**
     * The general posting, inside a transaction: lazily created settlement account, attaching to an
     * existing transaction (locked), funds check under the balance-row locks, entries, balances, events.
     * `serialized`: `p` was read inside this same write transaction on a store with one writer
     * (SQLite BEGIN IMMEDIATE), so its balances are current.
     */
    const postPrepared = (p: Prepared, serialized: boolean): Effect.Effect<PostedTransfer, TransferError> =>
      Effect.gen(function*() {
        const { amount, currency, programId, rail } = p
        // The transaction this transfer belongs to: an existing one (locked), or a new one below.
        let existing: Transaction | null = null
        if (p.transactionId !== null) {
          const found = yield* store.findTransaction(programId, p.transactionId, true)
          if (Option.isNone(found)) return yield* missing("transaction", "transaction_id")
          existing = found.value
          if (existing.status === "DECLINED") {
            return yield* new Conflict({ message: "The transaction was declined; no transfer can be attached to it.", param: "transaction_id" })
          }
          if (existing.currency !== currency) {
            return yield* rule("currency_mismatch", `The transaction is in ${existing.currency}, not ${currency}.`, "currency")
          }
        }

        const settlement = p.from !== null && p.to !== null ? null : p.settlement ?? (yield* settlementAccount(programId, currency))
        const source = p.from ?? settlement!
        const target = p.to ?? settlement!

        if (serialized) {
          // SQLite: `prepare` read the source's principal balance inside this same BEGIN IMMEDIATE
          // transaction (one writer at a time), so that read is current and no lock read is needed.
          if (source.kind === "wallet" && source.balance.amount < amount) return yield* insufficient(source.balance.amount, amount, currency)
        } else {
          // The funds check reads the balance rows under the locks the posting then updates.
          const locked = yield* store.lockBalances([source.id, target.id])
          if (source.kind === "wallet") {
            const principal = locked.find((row) => row.financial_account_id === source.id && row.book === "principal")
            const available = principal === undefined ? 0 : principal.creditsMinor - principal.debitsMinor
            if (available < amount) return yield* insufficient(available, amount, currency)
          }
        }

        const now = yield* nowIso
        let transaction: Transaction
        if (existing === null) {
          transaction = newTransaction(p, now)
          yield* store.insertTransaction(transaction)
        } else {
          transaction = existing
        }
        const { bookTransfer, entries, transfer } = transferRows(p, source, target, transaction.id, now)
        yield* store.insertTransfer(transfer)
        yield* store.postBookTransfer(programId, bookTransfer, balanceDeltas(entries))

        // The events, in order, written together: one insert and one webhook fan-out statement.
        const emitted: Array<{ readonly type: EventType; readonly object: unknown }> = [{ type: "transfer.created", object: transfer }]
        if (existing === null) {
          emitted.push({ type: "transaction.updated", object: transaction })
        } else if (existing.status === "PENDING" || existing.status === "SETTLED") {
          // A transfer-driven transaction is SETTLED once every one of its transfers is.
          const next = (yield* store.countPendingTransfers(existing.id)) > 0 ? "PENDING" : "SETTLED"
          if (next !== existing.status) {
            yield* store.setTransactionStatus(existing.id, next, now)
            transaction = { ...existing, status: next, updated_at: now }
            emitted.push({ type: "transaction.updated", object: transaction })
          }
        }
        if (transfer.status === "SETTLED") emitted.push({ type: settledEvent(rail), object: transfer })
        yield* events.emitAll(programId, emitted)
        return { transfer, transaction, book_transfer: bookTransfer }
      })

    /**
     * A transfer with a new transaction in ONE store call (`postNewTransfer`), which checks funds
     * and writes every row, event and webhook delivery, all or nothing. PostgreSQL: one statement
     * (`issuing_post_transfer`, locks taken inside); in autocommit it is its own transaction
     * (retried on deadlock / serialization failure like the Transactor's outermost transaction).
     * SQLite: one synchronous call inside BEGIN IMMEDIATE, submitted to group commit as an atomic
     * unit (it rolls itself back to its own savepoint on failure, so the batch needs none for it).
     * Inside a caller's transaction it joins it. A refusal writes nothing, and no partial transfer
     * can ever commit.
     */
    const postOneStatement = (p: Prepared, source: FinancialAccount, target: FinancialAccount, inTransaction: boolean) =>
      Effect.gen(function*() {
        const now = yield* nowIso
        const transaction = newTransaction(p, now)
        const { bookTransfer, entries, transfer } = transferRows(p, source, target, transaction.id, now)
        const event = (type: EventType, object: unknown) => newEvent(p.programId, type, now, object)
        const emitted = [event("transfer.created", transfer), event("transaction.updated", transaction)]
        if (transfer.status === "SETTLED") emitted.push(event(settledEvent(p.rail), transfer))
        const write = store.postNewTransfer({
          transaction,
          transfer,
          bookTransfer,
          deltas: balanceDeltas(entries),
          checkFunds: source.kind === "wallet",
          events: emitted
        })
        const result = yield* (inTransaction
          ? write
          : useGroupCommit
          ? groupCommit.submit(write, { atomic: true })
          : Effect.retry(write, { schedule: ONE_STATEMENT_RETRY, while: isRetryableSqlError }))
        if (result.wake) yield* webhooks.wake
        if (!result.posted) return yield* insufficient(result.availableMinor, p.amount, p.currency)
        return { transfer, transaction, book_transfer: bookTransfer }
      })

    /** A transfer: validation and accounts, then the one-call write (PostgreSQL, SQLite) or the general posting. */
    const post = (
      programId: string,
      rail: TransferRail,
      input: TransferInput,
      card: CardFields | null
    ): Effect.Effect<PostedTransfer, TransferError> =>
      store.oneStatementPosting
        ? Effect.gen(function*() {
          const p = yield* prepare(programId, rail, input, card)
          const inTransaction = Option.isSome(yield* Effect.serviceOption(SqlClient.TransactionConnection))
          const settlement = p.from !== null && p.to !== null ? null : p.settlement
          // Attaching to an existing transaction, or creating the settlement account, takes the general path.
          if (p.transactionId === null && (settlement !== null || (p.from !== null && p.to !== null))) {
            return yield* postOneStatement(p, p.from ?? settlement!, p.to ?? settlement!, inTransaction)
          }
          return yield* write(postPrepared(p, false))
        })
        : write(Effect.flatMap(prepare(programId, rail, input, card), (p) => postPrepared(p, serializedWrites)))

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
          ? post(programId, input.payment_rail as PaymentRail, input, null)
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
        post(programId, "card", {
          payment_rail: "card",
          amount: input.amount,
          currency: input.currency,
          from_financial_account_id: input.financial_account_id,
          to_financial_account_id: null
        }, { card_id: input.card_id, mcc: nullable(input.mcc), merchant_name: nullable(input.merchant_name) }),

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
