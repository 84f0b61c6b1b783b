import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Deferred, Effect, Fiber, Option, Schedule } from "effect"
import { CardStore } from "../cards/CardStore.js"
import { EventStore } from "../events/EventStore.js"
import { type IssuingEvent, newEvent } from "../events/Records.js"
import type { WalletOrderField } from "../ledger/OrderFields.js"
import { LedgerStore, type LedgerStoreService, type PostingOutcome, type TransferPosting } from "../ledger/LedgerStore.js"
import { balanceDeltas, transferEntries } from "../ledger/PostingRules.js"
import {
  type Book,
  type BookTransfer,
  MAX_TOTAL_MINOR,
  type Transaction,
  type Transfer,
  type TransferRail,
  type Wallet
} from "../ledger/Records.js"
import { newId } from "../platform/Ids.js"
import type { PageWindow } from "../platform/Paging.js"
import { Transactor } from "../sql/Transactor.js"
import { sampleCard } from "./cardContract.js"
import type { PortContract } from "./Contract.js"
import { awaitSuspended, freshOrganization } from "./Fixtures.js"

// Every ledger list accepts created_at (book transfers as an alias of posted_at).
const newestFirst = <F extends string = "created_at">(limit = 100, offset = 0, orderBy = "created_at" as F): PageWindow<F> => ({
  orderBy,
  descending: true,
  limit,
  offset
})
const oldestFirst = <F extends string = "created_at">(limit = 100, offset = 0, orderBy = "created_at" as F): PageWindow<F> => ({
  orderBy,
  descending: false,
  limit,
  offset
})

/** Ids sorted as the store must break ties (plain string order). */
const sorted = (ids: ReadonlyArray<string>) => [...ids].sort()

/** Stores a wallet with its account; the account's balances start at zero. */
const storeWallet = (
  ledger: LedgerStoreService,
  programId: string,
  at = new Date().toISOString(),
  currency = "USD",
  tag: string | null = null
) =>
  Effect.gen(function* () {
    const wallet: Wallet = {
      id: newId(),
      object: "wallet",
      program_id: programId,
      holder: { name: "Ada Lovelace", email: "ada@example.com" },
      financial_account_id: newId(),
      tag,
      cardholder_id: null,
      // Read back equal by the checks below: the metadata column round-trips, keys and values as sent.
      metadata: { customer: "c_42", ["__proto__"]: "kept as a key", "ünïcode 🙂": "" },
      created_at: at,
      updated_at: at
    }
    yield* ledger.insertAccount({
      id: wallet.financial_account_id,
      program_id: programId,
      wallet_id: wallet.id,
      kind: "wallet",
      currency,
      created_at: at
    })
    yield* ledger.insertWallet(wallet)
    return wallet
  })

/** The program's settlement account of a currency (created when missing). */
const settlementOf = (ledger: LedgerStoreService, programId: string, currency = "USD") =>
  Effect.gen(function* () {
    yield* ledger.insertSettlementAccountIfMissing({
      id: newId(),
      program_id: programId,
      wallet_id: null,
      kind: "settlement",
      currency,
      created_at: new Date().toISOString()
    })
    return Option.getOrThrow(yield* ledger.findSettlementAccount(programId, currency)).id
  })

/** The rows of one transfer with a new transaction, built by the posting rules as the ledger does. */
const transferRows = (
  programId: string,
  from: string,
  to: string,
  amountMinor: number,
  options: { readonly at?: string; readonly rail?: TransferRail; readonly checkFunds?: boolean; readonly activeCardId?: string } = {}
): TransferPosting => {
  const at = options.at ?? new Date().toISOString()
  const transaction: Transaction = {
    id: newId(),
    object: "transaction",
    program_id: programId,
    status: "SETTLED",
    amount: amountMinor,
    currency: "USD",
    card_id: null,
    financial_account_id: null,
    decline_reason: null,
    mcc: null,
    merchant_name: null,
    merchant: null,
    network_transaction_id: null,
    authorized_amount: null,
    pending_amount: null,
    settled_amount: null,
    disputed_amount: null,
    expires_at: null,
    card_events: [],
    request_history: [],
    created_at: at,
    updated_at: at
  }
  const transfer: Transfer = {
    id: newId(),
    object: "transfer",
    program_id: programId,
    transaction_id: transaction.id,
    payment_rail: options.rail ?? "book",
    amount: amountMinor,
    currency: "USD",
    from_financial_account_id: from,
    to_financial_account_id: to,
    status: "SETTLED",
    description: "contract",
    metadata: { order: "o_1" },
    return_code: null,
    return_reason: null,
    created_at: at,
    updated_at: at
  }
  const entries = transferEntries(from, to, amountMinor, "USD")
  const bookTransfer: BookTransfer = {
    id: newId(),
    object: "book_transfer",
    transfer_id: transfer.id,
    transaction_id: transaction.id,
    amount: { amount: amountMinor, currency: "USD" },
    financial_account_ids: [from, to],
    entries,
    posted_at: at
  }
  const event = (type: IssuingEvent["type"], object: unknown) => newEvent(programId, type, at, object)
  return {
    transaction,
    transactionWrite: "insert",
    transfer,
    bookTransfer,
    deltas: balanceDeltas(entries),
    checkFunds: options.checkFunds ?? false,
    activeCardId: options.activeCardId ?? null,
    events: [event("transfer.created", transfer), event("transaction.updated", transaction), event("transfer.settled", transfer)],
    balanceEvents: []
  }
}

/** The posting in a transaction of its own. */
const postGeneral = (posting: TransferPosting) =>
  Effect.gen(function* () {
    const ledger = yield* LedgerStore
    const transactor = yield* Transactor
    expect(yield* transactor.withTransaction(ledger.postTransfer(posting))).toMatchObject({ posted: true })
  })

/** Principal balance of an account (credits − debits), read through `balancesOf`. */
/** A fresh program's settlement account and two wallet accounts, `a` funded from the settlement account. */
const fundedPair = (ledger: LedgerStoreService, amountMinor: number) =>
  Effect.gen(function* () {
    const { program } = yield* freshOrganization
    const settlement = yield* settlementOf(ledger, program.id)
    const a = (yield* storeWallet(ledger, program.id)).financial_account_id
    const b = (yield* storeWallet(ledger, program.id)).financial_account_id
    yield* ledger.postTransfer(transferRows(program.id, settlement, a, amountMinor))
    return { program, settlement, a, b }
  })

const principalOf = (ledger: LedgerStoreService, accountId: string) =>
  Effect.map(ledger.balancesOf(accountId), (rows) => rows.find((row) => row.book === "principal")!.balance.amount)

/** Contract of the LedgerStore port: accounts, wallets, append-only postings with their balances. */
export const ledgerContract: PortContract = (name, store) =>
  layer(store, { excludeTestServices: true })(name, (it) => {
    it.effect("stores wallets and accounts with zero balances, found only within their program", () =>
      Effect.gen(function* () {
        const ledger = yield* LedgerStore
        const { program } = yield* freshOrganization
        const other = yield* freshOrganization
        const wallet = yield* storeWallet(ledger, program.id, undefined, "EUR")
        const accountId = wallet.financial_account_id

        expect(Option.getOrThrow(yield* ledger.findWallet(program.id, wallet.id))).toEqual(wallet)
        const account = Option.getOrThrow(yield* ledger.findAccount(program.id, accountId))
        expect(account).toEqual({
          id: accountId,
          object: "financial_account",
          program_id: program.id,
          wallet_id: wallet.id,
          kind: "wallet",
          currency: "EUR",
          balance: { amount: 0, currency: "EUR" },
          pending_balance: { amount: 0, currency: "EUR" },
          available_balance: { amount: 0, currency: "EUR" },
          created_at: wallet.created_at,
          updated_at: wallet.created_at
        })
        const balances = yield* ledger.balancesOf(accountId)
        expect(balances.map((row) => [row.book, row.debits.amount, row.credits.amount, row.balance.amount, row.balance.currency])).toEqual([
          ["principal", 0, 0, 0, "EUR"],
          ["cash", 0, 0, 0, "EUR"]
        ])
        expect(yield* ledger.findPostingAccounts(program.id, [accountId, newId()], null)).toEqual([account])
        expect(yield* ledger.findPostingAccounts(program.id, [accountId], null)).toEqual([account])

        // Another program sees none of it.
        expect(Option.isNone(yield* ledger.findWallet(other.program.id, wallet.id))).toBe(true)
        expect(Option.isNone(yield* ledger.findAccount(other.program.id, accountId))).toBe(true)
        expect(yield* ledger.findPostingAccounts(other.program.id, [accountId], "EUR")).toEqual([])
        expect((yield* ledger.listWallets(other.program.id, {}, newestFirst())).total).toBe(0)
        expect((yield* ledger.listAccounts(other.program.id, {}, newestFirst())).total).toBe(0)

        const filtered = yield* ledger.listAccounts(program.id, { wallet_id: wallet.id, kind: "wallet", currency: "EUR" }, newestFirst())
        expect(filtered).toEqual({ rows: [account], total: 1 })
        expect((yield* ledger.listAccounts(program.id, { currency: "USD" }, newestFirst())).total).toBe(0)
      })
    )

    it.effect("keeps a wallet's tag: stored, changed under its lock, listed and counted by tag within the program", () =>
      Effect.gen(function* () {
        const ledger = yield* LedgerStore
        const transactor = yield* Transactor
        const { program } = yield* freshOrganization
        const other = yield* freshOrganization
        const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString()
        const gold = [
          yield* storeWallet(ledger, program.id, at(1), "USD", "gold"),
          yield* storeWallet(ledger, program.id, at(2), "USD", "gold")
        ]
        const silver = yield* storeWallet(ledger, program.id, at(3), "USD", "silver")
        const untagged = yield* storeWallet(ledger, program.id, at(4))
        yield* storeWallet(ledger, other.program.id, at(5), "USD", "gold")
        expect(Option.getOrThrow(yield* ledger.findWallet(program.id, silver.id)).tag).toBe("silver")
        expect(Option.getOrThrow(yield* ledger.findWallet(program.id, untagged.id)).tag).toBeNull()
        const listed = (tag: string | undefined, window: PageWindow<WalletOrderField> = newestFirst()) =>
          Effect.map(ledger.listWallets(program.id, { tag }, window), ({ rows, total }) => ({ ids: rows.map((row) => row.id), total }))
        expect(yield* listed("gold")).toEqual({ ids: [gold[1]!.id, gold[0]!.id], total: 2 })
        expect(yield* listed("gold", oldestFirst(1, 1))).toEqual({ ids: [gold[1]!.id], total: 2 })
        expect(yield* listed("silver")).toEqual({ ids: [silver.id], total: 1 })
        expect(yield* listed("bronze")).toEqual({ ids: [], total: 0 })
        expect((yield* listed(undefined)).total).toBe(4)

        // Re-tagged under the lock: the count moves from the old tag to the new; cleared: out of both.
        yield* transactor.withTransaction(
          Effect.gen(function* () {
            const locked = Option.getOrThrow(yield* ledger.lockWallet(program.id, gold[0]!.id))
            yield* ledger.updateWallet({ ...locked, tag: "silver", metadata: { moved: "yes" }, updated_at: at(10) })
          })
        )
        yield* ledger.updateWallet({ ...silver, tag: null, updated_at: at(11) })
        yield* ledger.updateWallet({ ...untagged, metadata: { note: "same tag" }, updated_at: at(12) })
        expect(Option.getOrThrow(yield* ledger.findWallet(program.id, gold[0]!.id))).toEqual({
          ...gold[0]!,
          tag: "silver",
          metadata: { moved: "yes" },
          updated_at: at(10)
        })
        expect(yield* listed("gold")).toEqual({ ids: [gold[1]!.id], total: 1 })
        expect(yield* listed("silver")).toEqual({ ids: [gold[0]!.id], total: 1 })
        expect(yield* listed("silver", newestFirst(10, 0, "updated_at"))).toEqual({ ids: [gold[0]!.id], total: 1 })
        expect((yield* listed(undefined)).total).toBe(4)
        // Another program's wallet is neither locked nor listed here.
        expect(Option.isNone(yield* ledger.lockWallet(other.program.id, gold[1]!.id))).toBe(true)
        expect((yield* ledger.listWallets(other.program.id, { tag: "gold" }, newestFirst())).total).toBe(1)
      })
    )

    it.effect("creates a program's settlement account of a currency once, even when asked concurrently", () =>
      Effect.gen(function* () {
        const ledger = yield* LedgerStore
        const transactor = yield* Transactor
        const { program } = yield* freshOrganization
        const other = yield* freshOrganization
        expect(Option.isNone(yield* ledger.findSettlementAccount(program.id, "USD"))).toBe(true)

        const candidates = Array.from({ length: 8 }, () => newId())
        const inserted = yield* Effect.all(
          candidates.map((id) =>
            transactor.withTransaction(
              ledger.insertSettlementAccountIfMissing({
                id,
                program_id: program.id,
                wallet_id: null,
                kind: "settlement",
                currency: "USD",
                created_at: new Date().toISOString()
              })
            )
          ),
          { concurrency: "unbounded" }
        )
        expect(inserted.filter(Boolean)).toHaveLength(1)
        const winner = candidates[inserted.indexOf(true)]!
        const settlement = Option.getOrThrow(yield* ledger.findSettlementAccount(program.id, "USD"))
        expect(settlement).toMatchObject({ id: winner, kind: "settlement", wallet_id: null, currency: "USD", balance: { amount: 0 } })
        expect(yield* ledger.balancesOf(winner)).toHaveLength(2)
        expect((yield* ledger.listAccounts(program.id, { kind: "settlement" }, newestFirst())).rows.map((row) => row.id)).toEqual([winner])
        for (const loser of candidates.filter((id) => id !== winner)) {
          expect(Option.isNone(yield* ledger.findAccount(program.id, loser))).toBe(true)
        }

        // The one read of a posting returns it beside the named accounts.
        const wallet = yield* storeWallet(ledger, program.id)
        const posting = yield* ledger.findPostingAccounts(program.id, [wallet.financial_account_id], "USD")
        expect(sorted(posting.map((row) => row.id))).toEqual(sorted([wallet.financial_account_id, winner]))

        // One per (program, currency): another currency and another program get their own.
        expect(
          yield* ledger.insertSettlementAccountIfMissing({
            id: newId(),
            program_id: program.id,
            wallet_id: null,
            kind: "settlement",
            currency: "EUR",
            created_at: new Date().toISOString()
          })
        ).toBe(true)
        expect(Option.isNone(yield* ledger.findSettlementAccount(other.program.id, "USD"))).toBe(true)
        expect(
          yield* ledger.insertSettlementAccountIfMissing({
            id: newId(),
            program_id: other.program.id,
            wallet_id: null,
            kind: "settlement",
            currency: "USD",
            created_at: new Date().toISOString()
          })
        ).toBe(true)
      })
    )

    it.effect("posts a transfer and reads back its transaction, transfer, book transfer, entries and balances", () =>
      Effect.gen(function* () {
        const ledger = yield* LedgerStore
        const { program } = yield* freshOrganization
        const settlement = yield* settlementOf(ledger, program.id)
        const a = (yield* storeWallet(ledger, program.id)).financial_account_id
        const b = (yield* storeWallet(ledger, program.id)).financial_account_id

        const funding = transferRows(program.id, settlement, a, 1_000, { rail: "ach_same_day" })
        yield* postGeneral(funding)
        expect(Option.getOrThrow(yield* ledger.findTransaction(program.id, funding.transaction.id, false))).toEqual(funding.transaction)
        expect(Option.getOrThrow(yield* ledger.findTransfer(program.id, funding.transfer.id, false))).toEqual(funding.transfer)
        const booked = yield* ledger.listBookTransfers(program.id, { transfer_id: funding.transfer.id }, newestFirst())
        expect(booked).toEqual({ rows: [funding.bookTransfer], total: 1 })

        const move = transferRows(program.id, a, b, 300)
        yield* postGeneral(move)
        // In autocommit (no caller transaction) the posting is a transaction of its own.
        const back = transferRows(program.id, b, a, 50, { checkFunds: true })
        expect(yield* ledger.postTransfer(back)).toMatchObject({ posted: true, availableMinor: 300 })
        for (const posting of [move, back]) {
          expect(Option.getOrThrow(yield* ledger.findTransfer(program.id, posting.transfer.id, false))).toEqual(posting.transfer)
          expect(Option.getOrThrow(yield* ledger.findTransaction(program.id, posting.transaction.id, false))).toEqual(posting.transaction)
          const { rows } = yield* ledger.listBookTransfers(program.id, { transaction_id: posting.transaction.id }, newestFirst())
          expect(rows).toEqual([posting.bookTransfer])
        }

        expect(yield* principalOf(ledger, settlement)).toBe(-1_000)
        expect(yield* principalOf(ledger, a)).toBe(750)
        expect(yield* principalOf(ledger, b)).toBe(250)
        expect(Option.getOrThrow(yield* ledger.findAccount(program.id, a)).balance).toEqual({ amount: 750, currency: "USD" })

        // Every balance row equals the sum of the entries on its (account, book).
        for (const account of [settlement, a, b]) {
          const { rows } = yield* ledger.listBookTransfers(program.id, { financial_account_id: account }, newestFirst())
          const sums: Record<Book, { debits: number; credits: number }> = {
            principal: { debits: 0, credits: 0 },
            cash: { debits: 0, credits: 0 }
          }
          for (const entry of rows.flatMap((row) => row.entries)) {
            if (entry.financial_account_id !== account) continue
            if (entry.entry_type === "DEBIT") sums[entry.book].debits += entry.amount.amount
            else sums[entry.book].credits += entry.amount.amount
          }
          for (const balance of yield* ledger.balancesOf(account)) {
            expect([balance.book, balance.debits.amount, balance.credits.amount]).toEqual([
              balance.book,
              sums[balance.book].debits,
              sums[balance.book].credits
            ])
          }
          // Principal is carried on the credit side, cash on the debit side: each transfer moves both alike.
          const [principal, cash] = yield* ledger.balancesOf(account)
          expect(cash!.balance.amount).toBe(principal!.balance.amount)
        }
        const onA = yield* ledger.listBookTransfers(program.id, { financial_account_id: a, book: "principal" }, newestFirst())
        expect(onA.total).toBe(3)
        expect((yield* ledger.listTransfers(program.id, { financial_account_id: b }, newestFirst())).total).toBe(2)
        expect(
          (yield* ledger.listTransfers(program.id, { payment_rail: "ach_same_day" }, newestFirst())).rows.map((row) => row.id)
        ).toEqual([funding.transfer.id])

        // Status changes of transfers and transactions.
        expect(yield* ledger.countPendingTransfers(move.transaction.id)).toBe(0)
        const later = new Date(Date.now() + 1_000).toISOString()
        yield* ledger.setTransferStatus(move.transfer.id, "PENDING", later)
        yield* ledger.setTransactionStatus(move.transaction.id, "PENDING", later)
        expect(yield* ledger.countPendingTransfers(move.transaction.id)).toBe(1)
        expect(Option.getOrThrow(yield* ledger.findTransfer(program.id, move.transfer.id, true))).toMatchObject({
          status: "PENDING",
          updated_at: later
        })
        expect((yield* ledger.listTransactions(program.id, { status: "PENDING" }, newestFirst())).rows.map((row) => row.id)).toEqual([
          move.transaction.id
        ])
        expect((yield* ledger.listTransfers(program.id, { status: "PENDING" }, newestFirst())).total).toBe(1)

        // A transfer attached to an existing transaction: its status updated with the posting, or left alone.
        const attached = transferRows(program.id, a, b, 25, { checkFunds: true })
        const pendingAgain = { ...move.transaction, status: "PENDING" as const, updated_at: later }
        const settledNow = { ...pendingAgain, status: "SETTLED" as const, updated_at: attached.transfer.created_at }
        yield* postGeneral({
          ...attached,
          transaction: settledNow,
          transactionWrite: "update",
          transfer: { ...attached.transfer, transaction_id: move.transaction.id },
          bookTransfer: { ...attached.bookTransfer, transaction_id: move.transaction.id }
        })
        expect(Option.getOrThrow(yield* ledger.findTransaction(program.id, move.transaction.id, false))).toEqual(settledNow)
        const untouched = transferRows(program.id, b, a, 5, { checkFunds: true })
        yield* postGeneral({
          ...untouched,
          transaction: { ...settledNow, status: "PENDING" },
          transactionWrite: "none",
          transfer: { ...untouched.transfer, transaction_id: move.transaction.id },
          bookTransfer: { ...untouched.bookTransfer, transaction_id: move.transaction.id }
        })
        expect(Option.getOrThrow(yield* ledger.findTransaction(program.id, move.transaction.id, false))).toEqual(settledNow)
        expect(Option.isNone(yield* ledger.findTransaction(program.id, untouched.transaction.id, false))).toBe(true)
        expect((yield* ledger.listTransfers(program.id, { transaction_id: move.transaction.id }, newestFirst())).total).toBe(3)
        expect(yield* principalOf(ledger, a)).toBe(730)
      })
    )

    it.effect("refuses to UPDATE or DELETE book transfers and entries (database triggers)", () =>
      Effect.gen(function* () {
        const ledger = yield* LedgerStore
        const sql = yield* SqlClient.SqlClient
        const { program } = yield* freshOrganization
        const settlement = yield* settlementOf(ledger, program.id)
        const a = (yield* storeWallet(ledger, program.id)).financial_account_id
        const posting = transferRows(program.id, settlement, a, 500)
        yield* postGeneral(posting)
        const id = posting.bookTransfer.id

        const refused = [
          sql`UPDATE issuing_book_entries SET amount_minor = 1 WHERE book_transfer_id = ${id}`,
          sql`DELETE FROM issuing_book_entries WHERE book_transfer_id = ${id}`,
          sql`UPDATE issuing_book_transfers SET amount_minor = 1 WHERE id = ${id}`,
          sql`DELETE FROM issuing_book_transfers WHERE id = ${id}`
        ]
        for (const statement of refused) {
          const error = yield* Effect.flip(statement)
          expect(String(error.cause ?? error.message)).toMatch(/immutable/)
        }
        expect((yield* ledger.listBookTransfers(program.id, { transfer_id: posting.transfer.id }, newestFirst())).rows).toEqual([
          posting.bookTransfer
        ])
      })
    )

    it.effect("lists newest first by default field, ties broken on id in the same direction, in windows that partition", () =>
      Effect.gen(function* () {
        const ledger = yield* LedgerStore
        const { program } = yield* freshOrganization
        const at = new Date().toISOString()
        // Same timestamp for every row: only the id orders them. Inserted in reverse id order.
        const ids = Array.from({ length: 5 }, () => newId())
        const wallets: Array<Wallet> = []
        for (const id of [...ids].reverse()) {
          const wallet: Wallet = {
            id,
            object: "wallet",
            program_id: program.id,
            holder: { name: "Holder", email: null },
            financial_account_id: newId(),
            tag: null,
            cardholder_id: null,
            metadata: {},
            created_at: at,
            updated_at: at
          }
          yield* ledger.insertAccount({
            id: wallet.financial_account_id,
            program_id: program.id,
            wallet_id: id,
            kind: "wallet",
            currency: "USD",
            created_at: at
          })
          yield* ledger.insertWallet(wallet)
          wallets.push(wallet)
        }
        const listed = yield* ledger.listWallets(program.id, {}, newestFirst())
        expect(listed.total).toBe(5)
        expect(listed.rows.map((row) => row.id)).toEqual(sorted(ids).reverse())
        expect((yield* ledger.listWallets(program.id, {}, oldestFirst())).rows.map((row) => row.id)).toEqual(sorted(ids))
        const pages: Array<string> = []
        for (let offset = 0; offset < 5; offset += 2) {
          pages.push(...(yield* ledger.listWallets(program.id, {}, newestFirst(2, offset))).rows.map((row) => row.id))
        }
        expect(pages).toEqual(sorted(ids).reverse())
        const accountIds = wallets.map((wallet) => wallet.financial_account_id)
        expect((yield* ledger.listAccounts(program.id, {}, newestFirst())).rows.map((row) => row.id)).toEqual(sorted(accountIds).reverse())

        // Transfers, transactions and book transfers at one instant.
        const settlement = yield* settlementOf(ledger, program.id)
        const postings = Array.from({ length: 4 }, (_, index) =>
          transferRows(program.id, settlement, accountIds[index]!, 10 + index, { at })
        )
        for (const posting of [...postings].reverse()) yield* postGeneral(posting)
        const transferIds = postings.map((posting) => posting.transfer.id)
        expect((yield* ledger.listTransfers(program.id, {}, newestFirst())).rows.map((row) => row.id)).toEqual(
          sorted(transferIds).reverse()
        )
        expect((yield* ledger.listTransactions(program.id, {}, newestFirst())).rows.map((row) => row.id)).toEqual(
          sorted(postings.map((posting) => posting.transaction.id)).reverse()
        )
        expect((yield* ledger.listBookTransfers(program.id, {}, newestFirst(100, 0, "posted_at"))).rows.map((row) => row.id)).toEqual(
          sorted(postings.map((posting) => posting.bookTransfer.id)).reverse()
        )
        // Oldest first: the ties at one instant in id order.
        expect((yield* ledger.listTransfers(program.id, {}, oldestFirst())).rows.map((row) => row.id)).toEqual(sorted(transferIds))
        const window = yield* ledger.listBookTransfers(program.id, {}, newestFirst(3, 3))
        expect(window.total).toBe(4)
        expect(window.rows).toHaveLength(1)
      })
    )

    it.effect("finds card transactions by the network's transaction id, in every program, with their merchant", () =>
      Effect.gen(function* () {
        const ledger = yield* LedgerStore
        const { program } = yield* freshOrganization
        const other = yield* freshOrganization
        const at = new Date().toISOString()
        const networkId = `ntx-${newId()}`
        const merchant = { acceptor_id: "ACQ-1", name: "Corner Cafe", city: null, country: "US", mcc: "5812" }
        const card = (programId: string): Transaction => ({
          ...transferRows(programId, "fa_x", "fa_y", 10).transaction,
          status: "DECLINED",
          card_id: newId(),
          decline_reason: "CARD_FROZEN",
          mcc: "5812",
          merchant_name: "Corner Cafe",
          merchant,
          network_transaction_id: networkId,
          authorized_amount: 10,
          pending_amount: 0,
          settled_amount: 0,
          disputed_amount: 0,
          created_at: at,
          updated_at: at
        })
        const mine = card(program.id)
        const theirs = card(other.program.id)
        yield* ledger.insertTransaction(mine)
        yield* ledger.insertTransaction(theirs)
        const found = yield* ledger.findTransactionsByNetworkId(networkId)
        expect([...found].sort((a, b) => (a.id < b.id ? -1 : 1))).toEqual([mine, theirs].sort((a, b) => (a.id < b.id ? -1 : 1)))
        expect(Option.getOrThrow(yield* ledger.findTransaction(program.id, mine.id, false)).merchant).toEqual(merchant)
        expect(yield* ledger.findTransactionsByNetworkId(`ntx-${newId()}`)).toEqual([])
        // Unique per program: a second transaction of the program with the id is refused.
        expect((yield* Effect.either(ledger.insertTransaction({ ...card(program.id), id: newId() })))._tag).toBe("Left")
      })
    )

    it.effect("keeps programs apart: another program's transfers, transactions and book transfers are not found", () =>
      Effect.gen(function* () {
        const ledger = yield* LedgerStore
        const { program } = yield* freshOrganization
        const other = yield* freshOrganization
        const settlement = yield* settlementOf(ledger, program.id)
        const a = (yield* storeWallet(ledger, program.id)).financial_account_id
        const posting = transferRows(program.id, settlement, a, 70)
        yield* postGeneral(posting)

        expect(Option.isNone(yield* ledger.findTransfer(other.program.id, posting.transfer.id, false))).toBe(true)
        expect(Option.isNone(yield* ledger.findTransaction(other.program.id, posting.transaction.id, true))).toBe(true)
        expect(Option.isNone(yield* ledger.findAccount(other.program.id, settlement))).toBe(true)
        expect((yield* ledger.listTransfers(other.program.id, { financial_account_id: a }, newestFirst())).total).toBe(0)
        expect((yield* ledger.listTransactions(other.program.id, {}, newestFirst())).total).toBe(0)
        expect((yield* ledger.listBookTransfers(other.program.id, { transfer_id: posting.transfer.id }, newestFirst())).total).toBe(0)
        expect((yield* ledger.listBookTransfers(other.program.id, { financial_account_id: a }, newestFirst())).total).toBe(0)
      })
    )

    it.effect("posting: writes every row and event, refuses insufficient funds writing nothing, joins a caller's transaction", () =>
      Effect.gen(function* () {
        const ledger = yield* LedgerStore
        const events = yield* EventStore
        const transactor = yield* Transactor
        const { program } = yield* freshOrganization
        const settlement = yield* settlementOf(ledger, program.id)
        const a = (yield* storeWallet(ledger, program.id)).financial_account_id
        const b = (yield* storeWallet(ledger, program.id)).financial_account_id

        const funding = transferRows(program.id, settlement, a, 100)
        expect((yield* ledger.postTransfer(funding)).posted).toBe(true)
        for (const event of funding.events) expect(Option.getOrThrow(yield* events.find(program.id, event.id))).toEqual(event)

        const tooMuch = transferRows(program.id, a, b, 150, { checkFunds: true })
        expect(yield* ledger.postTransfer(tooMuch)).toMatchObject({ posted: false, availableMinor: 100 })
        expect(Option.isNone(yield* ledger.findTransfer(program.id, tooMuch.transfer.id, false))).toBe(true)
        expect(Option.isNone(yield* ledger.findTransaction(program.id, tooMuch.transaction.id, false))).toBe(true)
        expect((yield* ledger.listBookTransfers(program.id, { transfer_id: tooMuch.transfer.id }, newestFirst())).total).toBe(0)
        for (const event of tooMuch.events) expect(Option.isNone(yield* events.find(program.id, event.id))).toBe(true)
        expect(yield* principalOf(ledger, a)).toBe(100)
        expect(yield* principalOf(ledger, b)).toBe(0)

        // Inside a caller's transaction that then fails, nothing of the posting stays.
        const undone = transferRows(program.id, a, b, 40, { checkFunds: true })
        yield* Effect.flip(transactor.withTransaction(Effect.zipRight(ledger.postTransfer(undone), Effect.fail("rollback" as const))))
        expect(Option.isNone(yield* ledger.findTransfer(program.id, undone.transfer.id, false))).toBe(true)
        expect(yield* principalOf(ledger, a)).toBe(100)

        const exact = transferRows(program.id, a, b, 100, { checkFunds: true })
        expect(yield* transactor.withTransaction(ledger.postTransfer(exact))).toMatchObject({ posted: true, availableMinor: 100 })
        expect(yield* principalOf(ledger, a)).toBe(0)
        expect(yield* principalOf(ledger, b)).toBe(100)
      })
    )

    it.effect("posts many transfers in order in one call: a refused one writes nothing and the next goes on", () =>
      Effect.gen(function* () {
        const ledger = yield* LedgerStore
        const events = yield* EventStore
        const transactor = yield* Transactor
        const { program } = yield* freshOrganization
        const settlement = yield* settlementOf(ledger, program.id)
        const a = (yield* storeWallet(ledger, program.id)).financial_account_id
        const b = (yield* storeWallet(ledger, program.id)).financial_account_id
        const funding = transferRows(program.id, settlement, a, 100)
        const first = transferRows(program.id, a, b, 60, { checkFunds: true })
        const tooMuch = transferRows(program.id, a, b, 60, { checkFunds: true }) // 40 left
        const rest = transferRows(program.id, a, b, 40, { checkFunds: true })
        const outcomes = yield* transactor.withTransaction(
          Effect.zipRight(ledger.lockAccounts([a, b, settlement]), ledger.postTransfers([funding, first, tooMuch, rest]))
        )
        expect(outcomes.map((outcome) => [outcome.posted, outcome.refusal])).toEqual([
          [true, null],
          [true, null],
          [false, "insufficient_funds"],
          [true, null]
        ])
        expect(outcomes[2]!.availableMinor).toBe(40)
        expect(Option.isNone(yield* ledger.findTransfer(program.id, tooMuch.transfer.id, false))).toBe(true)
        for (const event of tooMuch.events) expect(Option.isNone(yield* events.find(program.id, event.id))).toBe(true)
        for (const posting of [funding, first, rest]) {
          expect(Option.getOrThrow(yield* ledger.findTransfer(program.id, posting.transfer.id, false))).toEqual(posting.transfer)
          for (const event of posting.events) expect(Option.isSome(yield* events.find(program.id, event.id))).toBe(true)
        }
        expect(yield* principalOf(ledger, a)).toBe(0)
        expect(yield* principalOf(ledger, b)).toBe(100)
        expect(yield* ledger.postTransfers([])).toEqual([])
      })
    )

    it.effect("posts new transfers decided together in one call of its own; all-or-nothing writes none when one is refused", () =>
      Effect.gen(function* () {
        const ledger = yield* LedgerStore
        const events = yield* EventStore
        const { program } = yield* freshOrganization
        const settlement = yield* settlementOf(ledger, program.id)
        const a = (yield* storeWallet(ledger, program.id)).financial_account_id
        const b = (yield* storeWallet(ledger, program.id)).financial_account_id
        const absent = (posting: TransferPosting) =>
          Effect.gen(function* () {
            expect(Option.isNone(yield* ledger.findTransfer(program.id, posting.transfer.id, false))).toBe(true)
            expect(Option.isNone(yield* ledger.findTransaction(program.id, posting.transaction.id, false))).toBe(true)
            expect((yield* ledger.listBookTransfers(program.id, { transfer_id: posting.transfer.id }, newestFirst())).total).toBe(0)
            for (const event of posting.events) expect(Option.isNone(yield* events.find(program.id, event.id))).toBe(true)
          })

        // All-or-nothing: the third is refused, so the two that would post are not written either.
        const doomed = [
          transferRows(program.id, settlement, a, 100),
          transferRows(program.id, a, b, 70, { checkFunds: true }),
          transferRows(program.id, a, b, 70, { checkFunds: true })
        ]
        const refusedAll = yield* ledger.postNewTransfers(doomed, { allOrNothing: true })
        expect(refusedAll.map((outcome) => [outcome.posted, outcome.refusal])).toEqual([
          [true, null],
          [true, null],
          [false, "insufficient_funds"]
        ])
        for (const posting of doomed) yield* absent(posting)
        expect(yield* principalOf(ledger, a)).toBe(0)

        // Otherwise each is decided over the totals the earlier ones left (outside any transaction: its own).
        const funding = transferRows(program.id, settlement, a, 100)
        const first = transferRows(program.id, a, b, 60, { checkFunds: true })
        const tooMuch = transferRows(program.id, a, b, 60, { checkFunds: true }) // 40 left
        const rest = transferRows(program.id, a, b, 40, { checkFunds: true })
        const outcomes = yield* ledger.postNewTransfers([funding, first, tooMuch, rest], { allOrNothing: false })
        expect(outcomes.map((outcome) => [outcome.posted, outcome.refusal, outcome.availableMinor])).toEqual([
          [true, null, 0],
          [true, null, 100],
          [false, "insufficient_funds", 40],
          [true, null, 40]
        ])
        yield* absent(tooMuch)
        for (const posting of [funding, first, rest]) {
          expect(Option.getOrThrow(yield* ledger.findTransfer(program.id, posting.transfer.id, false))).toEqual(posting.transfer)
          expect(Option.getOrThrow(yield* ledger.findTransaction(program.id, posting.transaction.id, false))).toEqual(posting.transaction)
          const [bookTransfer] = (yield* ledger.listBookTransfers(program.id, { transfer_id: posting.transfer.id }, newestFirst())).rows
          expect(bookTransfer).toEqual(posting.bookTransfer)
          for (const event of posting.events) expect(Option.getOrThrow(yield* events.find(program.id, event.id))).toEqual(event)
        }
        expect(yield* principalOf(ledger, a)).toBe(0)
        expect(yield* principalOf(ledger, b)).toBe(100)
        expect(yield* ledger.postNewTransfers([], { allOrNothing: true })).toEqual([])

        // The 2^53 − 1 limit is decided over the running totals too.
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE issuing_balances SET credits_minor = ${MAX_TOTAL_MINOR - 5} WHERE financial_account_id = ${b} AND book = 'principal'`
        const limited = yield* ledger.postNewTransfers(
          [
            transferRows(program.id, settlement, b, 3),
            transferRows(program.id, settlement, b, 3),
            transferRows(program.id, settlement, b, 2)
          ],
          { allOrNothing: false }
        )
        expect(limited.map((outcome) => outcome.refusal)).toEqual([null, "balance_limit_exceeded", null])
        expect(yield* principalOf(ledger, b)).toBe(MAX_TOTAL_MINOR)

        // A posting that is not a new transfer is a caller's defect, and nothing is written.
        const existing = { ...transferRows(program.id, settlement, a, 5), transactionWrite: "update" as const }
        const exit = yield* Effect.exit(
          ledger.postNewTransfers([transferRows(program.id, settlement, a, 5), existing], { allOrNothing: false })
        )
        expect(exit._tag === "Failure" && exit.cause._tag === "Die").toBe(true)
        expect(yield* principalOf(ledger, a)).toBe(0)
      })
    )

    it.effect("new transfers are decided over the balances as they are at the write, not as an earlier read saw them", () =>
      Effect.gen(function* () {
        const ledger = yield* LedgerStore
        const events = yield* EventStore
        const transactor = yield* Transactor
        const sql = yield* SqlClient.SqlClient
        const { program, a, b } = yield* fundedPair(ledger, 100)
        // Another writer takes 70 of a's 100 and holds its transaction open…
        // (its PostgreSQL backend's pid, to tell whose lock the batch waits for; 0 on SQLite)
        const taken = yield* Deferred.make<number>()
        const release = yield* Deferred.make<void>()
        const writer = yield* Effect.fork(
          transactor.withTransaction(
            Effect.gen(function* () {
              yield* sql`UPDATE issuing_balances SET debits_minor = debits_minor + 70
                         WHERE financial_account_id = ${a} AND book = 'principal'`
              const pid = yield* sql.onDialectOrElse({
                pg: () => Effect.map(sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`, (rows) => Number(rows[0]!.pid)),
                orElse: () => Effect.succeed(0)
              })
              yield* Deferred.succeed(taken, pid)
              yield* Deferred.await(release)
            })
          )
        )
        const writerPid = yield* Deferred.await(taken)
        // …while a batch reads a's balance (PostgreSQL: 100, the committed one; it then writes its
        // rows and waits for the balance row's lock) or waits for the write lock (SQLite). The
        // writer lets go only once the batch is seen waiting: the race happens every run.
        const debit = transferRows(program.id, a, b, 60, { checkFunds: true })
        const batch = yield* Effect.fork(ledger.postNewTransfers([debit], { allOrNothing: false }))
        yield* sql.onDialectOrElse({
          // A backend of this database waits for a lock the writer's backend holds.
          pg: () =>
            Effect.repeat(
              sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
                                 WHERE datname = current_database() AND ${writerPid} = ANY(pg_blocking_pids(pid))`,
              { until: (rows) => rows[0]!.n > 0, schedule: Schedule.spaced("10 millis") }
            ).pipe(Effect.timeoutFail({ duration: "20 seconds", onTimeout: () => "the batch never waited for the writer's lock" })),
          // One writer at a time in the process: the batch is parked until the writer's transaction ends.
          orElse: () => awaitSuspended(batch)
        })
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(writer)
        // Under the lock a holds 30: the debit of 60 is refused and none of its rows stays.
        expect(yield* Fiber.join(batch)).toEqual([{ posted: false, refusal: "insufficient_funds", availableMinor: 30, wake: false }])
        expect(Option.isNone(yield* ledger.findTransfer(program.id, debit.transfer.id, false))).toBe(true)
        expect(Option.isNone(yield* ledger.findTransaction(program.id, debit.transaction.id, false))).toBe(true)
        for (const event of debit.events) expect(Option.isNone(yield* events.find(program.id, event.id))).toBe(true)
        expect(yield* principalOf(ledger, a)).toBe(30)
        expect(yield* principalOf(ledger, b)).toBe(0)
      })
    )

    it.effect("posting refuses, writing nothing, when a running total would pass 2^53 − 1", () =>
      Effect.gen(function* () {
        const ledger = yield* LedgerStore
        const sql = yield* SqlClient.SqlClient
        const { program } = yield* freshOrganization
        const settlement = yield* settlementOf(ledger, program.id)
        const a = (yield* storeWallet(ledger, program.id)).financial_account_id
        // The wallet's principal credits sit 5 below the limit (as if after many postings).
        yield* sql`UPDATE issuing_balances SET credits_minor = ${MAX_TOTAL_MINOR - 5} WHERE financial_account_id = ${a} AND book = 'principal'`
        const over = transferRows(program.id, settlement, a, 6)
        expect(yield* ledger.postTransfer(over)).toMatchObject({ posted: false, refusal: "balance_limit_exceeded" })
        expect(Option.isNone(yield* ledger.findTransfer(program.id, over.transfer.id, false))).toBe(true)
        expect(yield* principalOf(ledger, a)).toBe(MAX_TOTAL_MINOR - 5)
        const exact = transferRows(program.id, settlement, a, 5)
        expect(yield* ledger.postTransfer(exact)).toMatchObject({ posted: true, refusal: null })
        expect(yield* principalOf(ledger, a)).toBe(MAX_TOTAL_MINOR)
      })
    )

    it.effect("a card authorization's posting is refused, writing nothing, unless its card is ACTIVE", () =>
      Effect.gen(function* () {
        const ledger = yield* LedgerStore
        const cards = yield* CardStore
        const { program } = yield* freshOrganization
        const settlement = yield* settlementOf(ledger, program.id)
        const wallet = yield* storeWallet(ledger, program.id)
        const a = wallet.financial_account_id
        yield* postGeneral(transferRows(program.id, settlement, a, 1_000))
        const card = (state: "ACTIVE" | "FROZEN" | "CLOSED") =>
          Effect.gen(function* () {
            const record = sampleCard(program.id, { state, wallet_id: wallet.id, financial_account_id: a, spending_limits: [] })
            yield* cards.insertCard(record)
            return record.card.id
          })
        for (const [state, refusal] of [
          ["FROZEN", "card_frozen"],
          ["CLOSED", "card_closed"]
        ] as const) {
          const refused = transferRows(program.id, a, settlement, 10, { rail: "card", checkFunds: true, activeCardId: yield* card(state) })
          expect(yield* ledger.postTransfer(refused)).toMatchObject({ posted: false, refusal })
          expect(Option.isNone(yield* ledger.findTransfer(program.id, refused.transfer.id, false))).toBe(true)
          expect(yield* principalOf(ledger, a)).toBe(1_000)
        }
        const approved = transferRows(program.id, a, settlement, 10, {
          rail: "card",
          checkFunds: true,
          activeCardId: yield* card("ACTIVE")
        })
        expect(yield* ledger.postTransfer(approved)).toMatchObject({ posted: true, refusal: null })
        expect(yield* principalOf(ledger, a)).toBe(990)
      })
    )

    it.effect("posting checks funds under its lock: concurrent debits never overdraw", () =>
      Effect.gen(function* () {
        const ledger = yield* LedgerStore
        const { program, a, b } = yield* fundedPair(ledger, 100)

        const outcomes = yield* Effect.all(
          Array.from({ length: 6 }, () => ledger.postTransfer(transferRows(program.id, a, b, 30, { checkFunds: true }))),
          { concurrency: "unbounded" }
        )
        expect(outcomes.filter((outcome) => outcome.posted)).toHaveLength(3)
        expect(outcomes.filter((outcome) => !outcome.posted).every((outcome) => outcome.availableMinor === 10)).toBe(true)
        expect(yield* principalOf(ledger, a)).toBe(10)
        expect(yield* principalOf(ledger, b)).toBe(90)
        expect((yield* ledger.listTransfers(program.id, { financial_account_id: b }, newestFirst())).total).toBe(3)
      })
    )

    it.effect("concurrent postings each get their own outcome: one the database refuses fails alone", () =>
      Effect.gen(function* () {
        const ledger = yield* LedgerStore
        const { program, settlement, a, b } = yield* fundedPair(ledger, 5_000)

        // 40 at once (PostgreSQL writes those that wait in batches): thirty of 10 and ten of 900
        // over 5,000, so in any order all the 10s and exactly five 900s post; and one names an
        // account that does not exist (a foreign-key failure).
        const amounts = Array.from({ length: 40 }, (_, i) => (i % 4 === 3 ? 900 : 10))
        const postings = amounts.map((amount) => transferRows(program.id, a, b, amount, { checkFunds: true }))
        const broken = transferRows(program.id, settlement, b, 5)
        const ghost = {
          ...broken,
          bookTransfer: {
            ...broken.bookTransfer,
            entries: broken.bookTransfer.entries.map((e) => ({ ...e, financial_account_id: newId() }))
          }
        }
        // The broken one among the others, so it is not one of the first, which run alone.
        const exits = yield* Effect.all(
          [...postings.slice(0, 20), ghost, ...postings.slice(20)].map((posting) => Effect.exit(ledger.postTransfer(posting))),
          { concurrency: "unbounded" }
        )
        expect(exits[20]!._tag).toBe("Failure")
        const outcomes = [...exits.slice(0, 20), ...exits.slice(21)].map((exit) => {
          expect(exit._tag).toBe("Success")
          return exit._tag === "Success"
            ? exit.value
            : ({ posted: false, refusal: null, availableMinor: 0, wake: false } satisfies PostingOutcome)
        })
        const posted = outcomes.filter((outcome) => outcome.posted)
        expect(amounts.filter((_, i) => outcomes[i]!.posted).reduce((sum, n) => sum + n, 0)).toBe(4_800)
        expect(posted).toHaveLength(35)
        expect(outcomes.filter((outcome) => !outcome.posted).every((outcome) => outcome.refusal === "insufficient_funds")).toBe(true)
        expect(yield* principalOf(ledger, a)).toBe(200)
        expect(yield* principalOf(ledger, b)).toBe(4_800)
        expect((yield* ledger.listTransfers(program.id, { financial_account_id: b }, newestFirst())).total).toBe(posted.length)
        const events = yield* EventStore
        for (const [i, posting] of postings.entries()) {
          const found = yield* ledger.findTransfer(program.id, posting.transfer.id, false)
          expect(Option.isSome(found)).toBe(outcomes[i]!.posted)
          // Its events with it, or none of them.
          for (const event of [...posting.events, ...posting.balanceEvents]) {
            expect(Option.isSome(yield* events.find(program.id, event.id))).toBe(outcomes[i]!.posted)
          }
        }
      })
    )
  })
