import type { SqlError } from "@effect/sql"
import { Effect } from "effect"
import { LedgerStore } from "../ledger/LedgerStore.js"
import type { TransferPosting } from "../ledger/LedgerStore.js"
import type { PostingOutcome } from "../ledger/LedgerStore.js"
import { refused } from "../ledger/Posting.js"
import type { FinancialAccount, Transaction } from "../ledger/Records.js"
import { Events } from "../events/Events.js"
import { BusinessRuleViolation, type Conflict, NotFound } from "../platform/Errors.js"
import { findOwned } from "../platform/FindOwned.js"
import { type Page, type PageRequest, pageOf, toWindow } from "../platform/Paging.js"
import { nowIso } from "../platform/Time.js"
import { Transactor } from "../sql/Transactor.js"
import { WebhookStore } from "../webhooks/WebhookStore.js"
import { checkDispute, checkResolution, type DisputeAccounts, disputableAmount, resolution, submission } from "./DisputeRules.js"
import { DisputeStore } from "./DisputeStore.js"
import { DISPUTE_ORDER_FIELDS, type DisputeOrderField } from "./OrderFields.js"
import type { CreateDispute, Dispute, DisputeFilter, ResolveDispute } from "./Records.js"

const TRANSACTION = { resource: "transaction", param: "transaction_id" }
const DISPUTE = { resource: "dispute", param: "dispute_id" }

/** Failures of a dispute's write. */
export type DisputeError = NotFound | Conflict | BusinessRuleViolation | SqlError.SqlError

/**
 * Disputes of card transactions (docs/disputes.md): a submission claims part of a transaction's
 * settled money and credits it provisionally (settlement → the card's wallet account); a
 * resolution keeps the credit (WON) or takes it back (LOST). Each is one database transaction: the
 * transaction's claim, the dispute, its posting through the ledger's one posting and its events
 * commit together. The claim is decided under the transaction's row lock and written by a
 * conditional update, so concurrent submissions never claim more than is disputable.
 */
export class Disputes extends Effect.Service<Disputes>()("@issuing/core/Disputes", {
  effect: Effect.gen(function* () {
    const store = yield* DisputeStore
    const ledger = yield* LedgerStore
    const transactor = yield* Transactor
    const events = yield* Events
    const webhooks = yield* WebhookStore

    /** The card's wallet account and the program's settlement account of the transaction's currency. */
    const accountsOf = (programId: string, transaction: Transaction) =>
      Effect.gen(function* () {
        const walletId = yield* findOwned(transaction.id, TRANSACTION, store.walletAccountOf)
        const wallet = yield* findOwned(walletId, TRANSACTION, (id) => ledger.findAccount(programId, id))
        const settlement = yield* settlementOf(programId, transaction.currency)
        return { wallet, settlement } satisfies DisputeAccounts
      })

    /**
     * The program's settlement account of `currency`: a card transaction that settled money has
     * posted through it, so it exists; one that settled nothing was refused before this.
     */
    const settlementOf = (programId: string, currency: string): Effect.Effect<FinancialAccount, NotFound | SqlError.SqlError> =>
      Effect.flatMap(ledger.findSettlementAccount(programId, currency), (found) =>
        found._tag === "Some"
          ? Effect.succeed(found.value)
          : Effect.fail(new NotFound({ message: "The program has no settlement account in this currency.", param: "transaction_id" }))
      )

    /** The ledger's one posting; a refusal (a running total past 2^53 − 1) fails and rolls the whole write back. */
    const post = (posting: TransferPosting): Effect.Effect<PostingOutcome, BusinessRuleViolation | SqlError.SqlError> =>
      Effect.flatMap(ledger.postTransfer(posting), (outcome) => (outcome.posted ? Effect.succeed(outcome) : Effect.fail(refused(outcome))))

    /** Wakes the webhook workers once the write committed, when it queued deliveries. */
    const afterCommit = <A>(effect: Effect.Effect<{ readonly value: A; readonly wake: boolean }, DisputeError>) =>
      Effect.flatMap(effect, ({ value, wake }) => (wake ? Effect.as(webhooks.wake, value) : Effect.succeed(value)))

    const create = (programId: string, input: CreateDispute): Effect.Effect<Dispute, DisputeError> =>
      afterCommit(
        transactor.withTransaction(
          Effect.gen(function* () {
            // The row lock (PostgreSQL; SQLite's one writer) orders concurrent submissions and card messages on the transaction.
            const transaction = yield* findOwned(input.transaction_id, TRANSACTION, (id) => ledger.findTransaction(programId, id, true))
            const amount = yield* checkDispute(transaction, input.amount)
            const accounts = yield* accountsOf(programId, transaction)
            const now = yield* nowIso
            const submitted = submission(programId, transaction, input, amount, accounts, now)
            // The claim is exact by itself too: it fits in what is disputable or writes nothing.
            if (!(yield* store.claimDisputable(transaction.id, amount, now))) {
              return yield* new BusinessRuleViolation({
                code: "amount_exceeds_disputable",
                message: `A dispute may claim at most what the transaction settled and was neither returned nor disputed (${disputableAmount(transaction)} minor units).`,
                param: "amount"
              })
            }
            // The credit first: the dispute row names its transfer.
            const outcome = yield* post(submitted.posting)
            yield* store.insertDispute(submitted.dispute)
            return { value: submitted.dispute, wake: outcome.wake }
          })
        )
      )

    const resolve = (programId: string, disputeId: string, input: ResolveDispute): Effect.Effect<Dispute, DisputeError> =>
      afterCommit(
        transactor.withTransaction(
          Effect.gen(function* () {
            const dispute = yield* findOwned(disputeId, DISPUTE, (id) => store.findDispute(programId, id, true))
            yield* checkResolution(dispute)
            const transaction = yield* findOwned(dispute.transaction_id, TRANSACTION, (id) => ledger.findTransaction(programId, id, false))
            const accounts = yield* accountsOf(programId, transaction)
            const resolved = resolution(dispute, input.outcome, transaction, accounts, yield* nowIso)
            if (resolved.posting !== null) {
              // The reversal first: the dispute row names its transfer.
              const outcome = yield* post(resolved.posting)
              yield* store.resolveDispute(resolved.dispute, dispute)
              return { value: resolved.dispute, wake: outcome.wake }
            }
            yield* store.resolveDispute(resolved.dispute, dispute)
            yield* events.emit(programId, "dispute.updated", resolved.dispute)
            return { value: resolved.dispute, wake: true }
          })
        )
      )

    return {
      /** POST /v1/disputes: the dispute SUBMITTED and its provisional credit posted. */
      create,
      /** Resolves a SUBMITTED dispute (the sandbox's simulation and the network's route alike); 409 once resolved. */
      resolve,
      /** One dispute of the program (404 param dispute_id). */
      get: (programId: string, disputeId: string): Effect.Effect<Dispute, NotFound | SqlError.SqlError> =>
        findOwned(disputeId, DISPUTE, (id) => store.findDispute(programId, id, false)),
      /** The program's disputes in time order, filtered by transaction and status. */
      list: (programId: string, filter: DisputeFilter, request: PageRequest<DisputeOrderField>) =>
        Effect.suspend(() => {
          const window = toWindow(request, DISPUTE_ORDER_FIELDS)
          return Effect.map(store.listDisputes(programId, filter, window), ({ rows, total }): Page<Dispute> => pageOf(window, rows, total))
        })
    }
  })
}) {}
