import { Either } from "effect"
import { type EventType, type IssuingEvent, newEvent } from "../events/Records.js"
import type { TransferPosting } from "../ledger/LedgerStore.js"
import { balanceDeltas, transferEntries } from "../ledger/PostingRules.js"
import type { BookTransfer, FinancialAccount, Transaction, Transfer } from "../ledger/Records.js"
import { BusinessRuleViolation, Conflict } from "../platform/Errors.js"
import { newId } from "../platform/Ids.js"
import { EMPTY_METADATA } from "../platform/Metadata.js"
import type { CreateDispute, Dispute, DisputeOutcome } from "./Records.js"

/**
 * Disputes as pure decisions (docs/disputes.md), in the shape of ledger/Returns.ts: whether a card
 * transaction may be disputed for an amount, and every row and event a submission or a resolution
 * writes. The money moves by transfers through the ledger's one posting
 * (`LedgerStore.postTransfer`), never by changing what was posted.
 */

/** What a card transaction has left to dispute: settled (cleared − returned) minus what its disputes claim. */
export const disputableAmount = (transaction: Transaction): number =>
  Math.max(0, (transaction.settled_amount ?? 0) - (transaction.disputed_amount ?? 0))

/**
 * The amount a dispute of `transaction` claims (`requested`, or all that is disputable), checked in
 * the order callers see: a card transaction that is not DECLINED (422 transaction_not_disputable,
 * param transaction_id), then an amount no larger than what is disputable (422
 * amount_exceeds_disputable, param amount; a transaction with nothing settled has nothing to dispute).
 * Called under the transaction's row lock, so concurrent submissions see each other's claims.
 */
export const checkDispute = (
  transaction: Transaction,
  requested: number | null | undefined
): Either.Either<number, BusinessRuleViolation> => {
  if (transaction.card_id === null || transaction.status === "DECLINED") {
    return Either.left(
      new BusinessRuleViolation({
        code: "transaction_not_disputable",
        message:
          transaction.card_id === null
            ? "Only a card transaction can be disputed: this one is a transfer's."
            : "A DECLINED card transaction moved no money: there is nothing to dispute.",
        param: "transaction_id"
      })
    )
  }
  const disputable = disputableAmount(transaction)
  const amount = requested ?? disputable
  if (amount <= 0 || amount > disputable) {
    return Either.left(
      new BusinessRuleViolation({
        code: "amount_exceeds_disputable",
        message: `A dispute may claim at most what the transaction settled and was neither returned nor disputed (${disputable} minor units).`,
        param: "amount"
      })
    )
  }
  return Either.right(amount)
}

/** A resolved dispute cannot be resolved again: 409. */
export const checkResolution = (dispute: Dispute): Either.Either<void, Conflict> =>
  dispute.status === "SUBMITTED"
    ? Either.void
    : Either.left(new Conflict({ message: `The dispute is already resolved (${dispute.status}).`, param: "dispute_id" }))

/** The accounts a dispute's money moves between: the card's wallet account and the program's settlement account. */
export interface DisputeAccounts {
  readonly wallet: FinancialAccount
  readonly settlement: FinancialAccount
}

/**
 * A book transfer from `source` to `target` attached to the card transaction (`transactionWrite`
 * "none": the dispute store writes the transaction's disputed amount), SETTLED at once, with no
 * funds check: a provisional credit comes from the settlement account, and a lost dispute's
 * reversal takes the credit back whatever the wallet holds (it may go below zero). Rail `book`:
 * it is the program's own movement, not a network message (the settlement report counts those).
 */
const disputeTransfer = (
  transaction: Transaction,
  source: FinancialAccount,
  target: FinancialAccount,
  amount: number,
  description: string,
  trailing: ReadonlyArray<IssuingEvent>,
  now: string
): TransferPosting => {
  const transfer: Transfer = {
    id: newId(),
    object: "transfer",
    program_id: transaction.program_id,
    transaction_id: transaction.id,
    payment_rail: "book",
    amount,
    currency: transaction.currency,
    from_financial_account_id: source.id,
    to_financial_account_id: target.id,
    status: "SETTLED",
    description,
    metadata: EMPTY_METADATA,
    return_code: null,
    return_reason: null,
    created_at: now,
    updated_at: now
  }
  const entries = transferEntries(source.id, target.id, amount, transaction.currency)
  const bookTransfer: BookTransfer = {
    id: newId(),
    object: "book_transfer",
    transfer_id: transfer.id,
    transaction_id: transaction.id,
    amount: { amount, currency: transaction.currency },
    financial_account_ids: [source.id, target.id],
    entries,
    posted_at: now
  }
  const event = (type: EventType, object: unknown) => newEvent(transaction.program_id, type, now, object)
  return {
    transaction,
    transactionWrite: "none",
    transfer,
    bookTransfer,
    deltas: balanceDeltas(entries),
    checkFunds: false,
    activeCardId: null,
    events: [event("transfer.created", transfer), event("transfer.settled", transfer), ...trailing],
    balanceEvents: [source, target]
      .filter((account) => account.kind === "wallet")
      .map((account) => ({ id: newId(), financial_account_id: account.id }))
  }
}

/** What a submission writes: the dispute, the transaction with its claim added, the provisional credit's posting. */
export interface SubmittedDispute {
  readonly dispute: Dispute
  readonly transaction: Transaction
  readonly posting: TransferPosting
}

/**
 * The submission of a dispute of `amount` (checked by `checkDispute`) on `transaction`: the
 * dispute SUBMITTED, the transaction's `disputed_amount` grown by it, and the provisional credit
 * settlement → wallet, with `dispute.created` and the transaction's `transaction.updated` in the
 * same posting.
 */
export const submission = (
  programId: string,
  transaction: Transaction,
  input: CreateDispute,
  amount: number,
  accounts: DisputeAccounts,
  now: string
): SubmittedDispute => {
  const disputeId = newId()
  const updated: Transaction = { ...transaction, disputed_amount: (transaction.disputed_amount ?? 0) + amount, updated_at: now }
  const posting = disputeTransfer(
    updated,
    accounts.settlement,
    accounts.wallet,
    amount,
    `Provisional credit of dispute ${disputeId}`,
    [newEvent(programId, "transaction.updated", now, updated)],
    now
  )
  const dispute: Dispute = {
    id: disputeId,
    object: "dispute",
    program_id: programId,
    transaction_id: transaction.id,
    amount,
    currency: transaction.currency,
    reason: input.reason,
    explanation: input.explanation ?? null,
    status: "SUBMITTED",
    provisional_credit_transfer_id: posting.transfer.id,
    reversal_transfer_id: null,
    created_at: now,
    updated_at: now
  }
  // dispute.created leads: the dispute is the change, its credit follows from it.
  return {
    dispute,
    transaction: updated,
    posting: { ...posting, events: [newEvent(programId, "dispute.created", now, dispute), ...posting.events] }
  }
}

/** What a resolution writes: the dispute WON or LOST and, when LOST, the reversal's posting. */
export interface ResolvedDispute {
  readonly dispute: Dispute
  /** LOST: the provisional credit taken back (wallet → settlement); WON: null, the credit stays. */
  readonly posting: TransferPosting | null
}

/**
 * The resolution of a SUBMITTED dispute (checked by `checkResolution`): WON keeps the provisional
 * credit; LOST takes it back by a reversing transfer wallet → settlement (no funds check: the
 * wallet may go below zero). The dispute's amount stays in the transaction's `disputed_amount`
 * either way: a lost dispute's amount cannot be disputed again.
 */
export const resolution = (
  dispute: Dispute,
  outcome: DisputeOutcome,
  transaction: Transaction,
  accounts: DisputeAccounts,
  now: string
): ResolvedDispute => {
  if (outcome === "WON") return { dispute: { ...dispute, status: "WON", updated_at: now }, posting: null }
  const posting = disputeTransfer(
    transaction,
    accounts.wallet,
    accounts.settlement,
    dispute.amount,
    `Reversal of the provisional credit of lost dispute ${dispute.id}`,
    [],
    now
  )
  const resolved: Dispute = { ...dispute, status: "LOST", reversal_transfer_id: posting.transfer.id, updated_at: now }
  return {
    dispute: resolved,
    posting: { ...posting, events: [newEvent(dispute.program_id, "dispute.updated", now, resolved), ...posting.events] }
  }
}
