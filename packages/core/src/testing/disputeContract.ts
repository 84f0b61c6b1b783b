import { expect, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { submission } from "../disputes/DisputeRules.js"
import { DisputeStore } from "../disputes/DisputeStore.js"
import type { Dispute } from "../disputes/Records.js"
import { LedgerStore, type LedgerStoreService } from "../ledger/LedgerStore.js"
import type { Transaction } from "../ledger/Records.js"
import { newId } from "../platform/Ids.js"
import { Transactor } from "../sql/Transactor.js"
import type { PortContract } from "./Contract.js"
import { freshOrganization } from "./Fixtures.js"
import { expectedListCounts, maintainedListCounts } from "./ListCountChecks.js"

/** A card transaction that settled `settledMinor` on `accountId`'s card, stored with its wallet account. */
const cardTransaction = (ledger: LedgerStoreService, programId: string, accountId: string, settledMinor: number) =>
  Effect.gen(function* () {
    const at = new Date().toISOString()
    const transaction: Transaction = {
      id: newId(),
      object: "transaction",
      program_id: programId,
      status: "SETTLED",
      amount: settledMinor,
      currency: "USD",
      card_id: newId(),
      financial_account_id: accountId,
      decline_reason: null,
      mcc: "5411",
      merchant_name: "Corner Shop",
      merchant: null,
      network_transaction_id: null,
      authorized_amount: settledMinor,
      pending_amount: 0,
      settled_amount: settledMinor,
      disputed_amount: 0,
      expires_at: null,
      card_events: [],
      request_history: [],
      created_at: at,
      updated_at: at
    }
    yield* ledger.insertTransaction(transaction)
    return transaction
  })

/** A wallet account and the settlement account of the program, as FinancialAccount records. */
const accountsOf = (ledger: LedgerStoreService, programId: string) =>
  Effect.gen(function* () {
    const at = new Date().toISOString()
    const walletId = newId()
    yield* ledger.insertAccount({ id: walletId, program_id: programId, wallet_id: null, kind: "wallet", currency: "USD", created_at: at })
    yield* ledger.insertSettlementAccountIfMissing({
      id: newId(),
      program_id: programId,
      wallet_id: null,
      kind: "settlement",
      currency: "USD",
      created_at: at
    })
    const wallet = Option.getOrThrow(yield* ledger.findAccount(programId, walletId))
    const settlement = Option.getOrThrow(yield* ledger.findSettlementAccount(programId, "USD"))
    return { wallet, settlement }
  })

/** Contract of the DisputeStore port: exact claims under concurrency, disputes found, listed and counted within their program. */
export const disputeContract: PortContract = (name, store) =>
  layer(store, { excludeTestServices: true })(name, (it) => {
    it.effect("claims a transaction's disputable amount only while it fits, exactly under concurrent claims", () =>
      Effect.gen(function* () {
        const disputes = yield* DisputeStore
        const ledger = yield* LedgerStore
        const transactor = yield* Transactor
        const { program } = yield* freshOrganization
        const { wallet } = yield* accountsOf(ledger, program.id)
        const transaction = yield* cardTransaction(ledger, program.id, wallet.id, 1_000)
        const at = new Date().toISOString()
        expect(yield* disputes.claimDisputable(transaction.id, 600, at)).toBe(true)
        expect(yield* disputes.claimDisputable(transaction.id, 401, at)).toBe(false)
        expect(yield* disputes.claimDisputable(transaction.id, 400, at)).toBe(true)
        expect(yield* disputes.claimDisputable(transaction.id, 1, at)).toBe(false)
        const read = Option.getOrThrow(yield* ledger.findTransaction(program.id, transaction.id, false))
        expect(read).toMatchObject({ settled_amount: 1_000, disputed_amount: 1_000, updated_at: at })
        expect(Option.getOrThrow(yield* disputes.walletAccountOf(transaction.id))).toBe(wallet.id)
        expect(Option.isNone(yield* disputes.walletAccountOf(newId()))).toBe(true)

        // Ten claims of 150 at once, each in its own transaction and none holding a lock first: six fit.
        const raced = yield* cardTransaction(ledger, program.id, wallet.id, 1_000)
        const claims = yield* Effect.all(
          Array.from({ length: 10 }, () => transactor.withTransaction(disputes.claimDisputable(raced.id, 150, at))),
          { concurrency: "unbounded" }
        )
        expect(claims.filter(Boolean)).toHaveLength(6)
        expect(Option.getOrThrow(yield* ledger.findTransaction(program.id, raced.id, false)).disputed_amount).toBe(900)
      })
    )

    it.effect("stores disputes found and listed within their program, their resolutions moving the counts", () =>
      Effect.gen(function* () {
        const disputes = yield* DisputeStore
        const ledger = yield* LedgerStore
        const transactor = yield* Transactor
        const { program } = yield* freshOrganization
        const other = yield* freshOrganization
        const accounts = yield* accountsOf(ledger, program.id)
        const first = yield* cardTransaction(ledger, program.id, accounts.wallet.id, 500)
        const second = yield* cardTransaction(ledger, program.id, accounts.wallet.id, 500)
        /** A dispute with its credit posted through the ledger's one posting, as the service writes it. */
        const submit = (transaction: Transaction, amount: number) =>
          transactor.withTransaction(
            Effect.gen(function* () {
              const now = new Date().toISOString()
              const submitted = submission(
                program.id,
                transaction,
                { transaction_id: transaction.id, reason: "FRAUD" },
                amount,
                accounts,
                now
              )
              expect((yield* ledger.postTransfer(submitted.posting)).posted).toBe(true)
              yield* disputes.insertDispute(submitted.dispute)
              return submitted.dispute
            })
          )
        const a = yield* submit(first, 100)
        const b = yield* submit(first, 200)
        const c = yield* submit(second, 300)
        expect(Option.getOrThrow(yield* disputes.findDispute(program.id, a.id, false))).toEqual(a)
        expect(Option.getOrThrow(yield* transactor.withTransaction(disputes.findDispute(program.id, a.id, true)))).toEqual(a)
        expect(Option.isNone(yield* disputes.findDispute(other.program.id, a.id, false))).toBe(true)

        const window = { orderBy: "created_at" as const, descending: true, limit: 10, offset: 0 }
        const ids = (rows: ReadonlyArray<Dispute>) => rows.map((d) => d.id)
        const listed = (filter: Parameters<typeof disputes.listDisputes>[1]) =>
          Effect.map(disputes.listDisputes(program.id, filter, window), ({ rows, total }) => ({ ids: ids(rows), total }))
        expect(yield* listed({})).toEqual({ ids: [c.id, b.id, a.id], total: 3 })
        expect(yield* listed({ transaction_id: first.id })).toEqual({ ids: [b.id, a.id], total: 2 })
        expect(yield* listed({ status: "SUBMITTED" })).toEqual({ ids: [c.id, b.id, a.id], total: 3 })
        expect(yield* disputes.listDisputes(other.program.id, {}, window)).toEqual({ rows: [], total: 0 })

        const won: Dispute = { ...b, status: "WON", updated_at: new Date(Date.parse(b.updated_at) + 1000).toISOString() }
        yield* disputes.resolveDispute(won, b)
        expect(Option.getOrThrow(yield* disputes.findDispute(program.id, b.id, false))).toEqual(won)
        expect(yield* listed({ status: "SUBMITTED" })).toEqual({ ids: [c.id, a.id], total: 2 })
        expect(yield* listed({ status: "WON" })).toEqual({ ids: [b.id], total: 1 })
        expect(yield* listed({ transaction_id: first.id, status: "WON" })).toEqual({ ids: [b.id], total: 1 })
        expect(yield* listed({ transaction_id: first.id, status: "SUBMITTED" })).toEqual({ ids: [a.id], total: 1 })
        expect(yield* listed({ transaction_id: second.id, status: "LOST" })).toEqual({ ids: [], total: 0 })
        expect(yield* listed({})).toEqual({ ids: [c.id, b.id, a.id], total: 3 })
        // Every count the store keeps is what the rows call for.
        expect(yield* maintainedListCounts).toEqual(yield* expectedListCounts)
      })
    )
  })
