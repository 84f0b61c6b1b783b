import { Either } from "effect"
import { type EventType, newEvent } from "../events/Records.js"
import { Conflict, InvalidRequest } from "../platform/Errors.js"
import { newId } from "../platform/Ids.js"
import { EMPTY_METADATA } from "../platform/Metadata.js"
import type { TransferPosting } from "./LedgerStore.js"
import { balanceDeltas, transferEntries } from "./PostingRules.js"
import { attachedTransactionAfter, type PostedTransfer } from "./PrepareTransfer.js"
import {
  type BookTransfer,
  type FinancialAccount,
  MAX_RETURN_CODE_LENGTH,
  RETURNABLE_RAILS,
  type ReturnTransfer,
  type Transaction,
  type Transfer,
  type TransferRail
} from "./Records.js"

/**
 * A rail's return of a transfer (docs/ledger.md#returns), as pure functions: whether the transfer
 * may be returned with that code, and every row and event the return writes. The money goes back
 * by a reversing transfer through the one posting (`LedgerStore.postTransfer`), never by changing
 * what was posted: postings are immutable.
 */

const isReturnable = (rail: TransferRail): rail is (typeof RETURNABLE_RAILS)[number] =>
  (RETURNABLE_RAILS as ReadonlyArray<TransferRail>).includes(rail)

/** An ACH return reason code, R01 to R85 (Nacha's range). */
const ACH_RETURN_CODE = /^R(0[1-9]|[1-7][0-9]|8[0-5])$/
/** A wire's return code is the bank's own text: printable, no control characters. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what it refuses.
const CONTROL = /[\u0000-\u001f\u007f]/

/** Why `code` is not a return code of `rail`, or null when it is. */
export const returnCodeProblem = (rail: (typeof RETURNABLE_RAILS)[number], code: string): string | null =>
  rail === "ach_same_day"
    ? ACH_RETURN_CODE.test(code)
      ? null
      : "An ach_same_day return_code is an ACH return reason code, R01 to R85."
    : code.trim().length === 0 || code.length > MAX_RETURN_CODE_LENGTH || CONTROL.test(code)
      ? `A wire return_code is free text of 1 to ${MAX_RETURN_CODE_LENGTH} printable characters.`
      : null

/**
 * The checks of a return, in the order callers see them: a rail that has returns (ach_same_day,
 * wire; 409 otherwise), not returned already (409), a code of that rail (400 param return_code).
 * A PENDING or SETTLED transfer may be returned.
 */
export const checkReturn = (transfer: Transfer, input: ReturnTransfer): Either.Either<void, Conflict | InvalidRequest> => {
  const rail = transfer.payment_rail
  if (!isReturnable(rail)) {
    return Either.left(
      new Conflict({
        message: `A ${rail} transfer cannot be returned: only ach_same_day and wire transfers have returns.`,
        param: "transfer_id"
      })
    )
  }
  if (transfer.status === "RETURNED")
    return Either.left(new Conflict({ message: "The transfer is already RETURNED.", param: "transfer_id" }))
  const problem = returnCodeProblem(rail, input.return_code)
  return problem === null ? Either.void : Either.left(new InvalidRequest({ message: problem, param: "return_code" }))
}

/** What a return answers and writes: the transfer RETURNED, its reversing transfer, their transaction. */
export interface ReturnedTransfer {
  readonly transfer: Transfer
  readonly reversal: PostedTransfer
  readonly posting: TransferPosting
  /**
   * A PENDING inbound credit's pending amount, released from the wallet after the posting in the
   * same transaction (`LedgerStore.releasePending`, which writes the wallet's one `balance.updated`
   * as both leave it), or null.
   */
  readonly release: { readonly financialAccountId: string; readonly amountMinor: number; readonly balanceEventId: string } | null
}

/**
 * The return of `transfer` (checked by `checkReturn`) from `from` to `to`, its two accounts: the
 * transfer RETURNED with its code and reason, and a reversing transfer on the same rail, SETTLED,
 * from `to` back to `from` in the same transaction (an outbound return re-credits the wallet; an
 * inbound return debits it, with no funds check: the money is gone, the wallet may go below zero).
 * An inbound credit still PENDING was posted but never available: its return also releases the
 * pending amount (`release`), so the wallet's available balance does not move. The release is not
 * a negative pending delta of the posting: a balance row's upsert would insert it as the proposed
 * row first, which its CHECK (pending ≥ 0) refuses. `pendingTransfers` counts the
 * transaction's PENDING transfers besides the returned one, under the transaction's lock.
 */
export const returnPosting = (
  transfer: Transfer,
  input: ReturnTransfer,
  accounts: { readonly from: FinancialAccount; readonly to: FinancialAccount },
  transaction: Transaction,
  pendingTransfers: number,
  now: string
): ReturnedTransfer => {
  const returned: Transfer = {
    ...transfer,
    status: "RETURNED",
    return_code: input.return_code,
    return_reason: input.reason ?? null,
    updated_at: now
  }
  const source = accounts.to
  const target = accounts.from
  const after = attachedTransactionAfter(transaction, pendingTransfers, "SETTLED", now)
  const reversal: Transfer = {
    id: newId(),
    object: "transfer",
    program_id: transfer.program_id,
    transaction_id: transaction.id,
    payment_rail: transfer.payment_rail,
    amount: transfer.amount,
    currency: transfer.currency,
    from_financial_account_id: source.id,
    to_financial_account_id: target.id,
    status: "SETTLED",
    description: `Return of transfer ${transfer.id} (${input.return_code})`,
    metadata: EMPTY_METADATA,
    return_code: null,
    return_reason: null,
    created_at: now,
    updated_at: now
  }
  const entries = transferEntries(source.id, target.id, transfer.amount, transfer.currency)
  // The inbound credit was posted PENDING (pending on the wallet's principal row) and never settled.
  const release =
    transfer.status === "PENDING" && source.kind === "wallet" && target.kind === "settlement"
      ? { financialAccountId: source.id, amountMinor: transfer.amount, balanceEventId: newId() }
      : null
  const bookTransfer: BookTransfer = {
    id: newId(),
    object: "book_transfer",
    transfer_id: reversal.id,
    transaction_id: transaction.id,
    amount: { amount: transfer.amount, currency: transfer.currency },
    financial_account_ids: [source.id, target.id],
    entries,
    posted_at: now
  }
  const event = (type: EventType, object: unknown) => newEvent(transfer.program_id, type, now, object)
  const events = [event("transfer.returned", returned), event("transfer.created", reversal)]
  if (after.write !== "none") events.push(event("transaction.updated", after.transaction))
  events.push(event("transfer.settled", reversal))
  return {
    transfer: returned,
    reversal: { transfer: reversal, transaction: after.transaction, book_transfer: bookTransfer },
    posting: {
      transaction: after.transaction,
      transactionWrite: after.write,
      transfer: reversal,
      bookTransfer,
      deltas: balanceDeltas(entries),
      // A return is the rail's fact, not a request to check: it posts whatever the wallet holds.
      checkFunds: false,
      activeCardId: null,
      events,
      // The released wallet's event is the release's, with the account as both leave it.
      balanceEvents: [source, target]
        .filter((account) => account.kind === "wallet" && account.id !== release?.financialAccountId)
        .map((account) => ({ id: newId(), financial_account_id: account.id }))
    },
    release
  }
}
