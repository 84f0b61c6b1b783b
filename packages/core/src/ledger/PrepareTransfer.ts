import { Either } from "effect"
import { type EventType, newEvent } from "../events/Records.js"
import { BusinessRuleViolation, Conflict, InvalidRequest, type NotFound } from "../platform/Errors.js"
import { missing } from "../platform/FindOwned.js"
import { newId } from "../platform/Ids.js"
import { EMPTY_METADATA } from "../platform/Metadata.js"
import type { TransferPosting } from "./LedgerStore.js"
import { balanceDeltas, transferEntries } from "./PostingRules.js"
import {
  type BookTransfer,
  type FinancialAccount,
  RAILS_SETTLING_AT_ONCE,
  type Transaction,
  type TransactionStatus,
  type Transfer,
  type TransferRail,
  type TransferRequest
} from "./Records.js"

/**
 * A transfer from request to rows, as pure functions: which accounts to read, the checks of the
 * posting rules (docs/ledger.md) over the accounts read, and every row and event the posting
 * writes. Nothing here reads or writes the database; Ledger.ts runs these around the store.
 */

/** The card fields of a transfer that settles a card authorization. */
export interface CardFields {
  readonly card_id: string
  readonly mcc: string | null
  readonly merchant_name: string | null
}

/** A transfer to post, decoded: a request's fields with any rail (card included) and, for a card authorization, its card. */
export interface TransferOrder extends Omit<TransferRequest, "payment_rail"> {
  readonly rail: TransferRail
  readonly card: CardFields | null
}

/** A checked transfer: its accounts resolved, nothing written yet. */
export interface PreparedTransfer {
  readonly programId: string
  readonly order: TransferOrder
  readonly from: FinancialAccount | null
  readonly to: FinancialAccount | null
  /** The program's settlement account of the currency when the rail needs one and it exists. */
  readonly settlement: FinancialAccount | null
}

/** Failures of the checks before any write. */
export type PrepareError = InvalidRequest | NotFound | BusinessRuleViolation

const SETTLES_AT_ONCE: ReadonlySet<TransferRail> = new Set(RAILS_SETTLING_AT_ONCE)

const EXTERNAL_RAILS: ReadonlySet<TransferRail> = new Set(["ach_same_day", "wire", "fednow_instant"])

const invalid = (param: string, message: string) => Either.left(new InvalidRequest({ message, param }))

const rule = (code: "settlement_account_not_allowed" | "currency_mismatch" | "same_financial_account", message: string, param: string) =>
  new BusinessRuleViolation({ code, message, param })

/** The accounts to read for an order: the named ones and, unless the rail is book, the settlement account of its currency. */
export const accountsToRead = (order: TransferOrder) => ({
  ids: [order.from_financial_account_id, order.to_financial_account_id].filter((id): id is string => id !== null),
  settlementCurrency: order.rail === "book" ? null : order.currency
})

/** Which sides an order names: book needs both; an external rail exactly one (the other is settlement). */
const checkSides = (order: TransferOrder): Either.Either<void, InvalidRequest> => {
  const { from_financial_account_id: from, rail, to_financial_account_id: to } = order
  if (rail === "book") {
    if (from === null) return invalid("from_financial_account_id", "A book transfer needs from_financial_account_id.")
    if (to === null) return invalid("to_financial_account_id", "A book transfer needs to_financial_account_id.")
  } else if (EXTERNAL_RAILS.has(rail)) {
    if (from !== null && to !== null) {
      return invalid(
        "to_financial_account_id",
        `A ${rail} transfer names exactly one account: to_financial_account_id (inbound) or from_financial_account_id (outbound); the other side is the program's settlement account.`
      )
    }
    if (from === null && to === null) {
      return invalid(
        "to_financial_account_id",
        `A ${rail} transfer needs to_financial_account_id (inbound) or from_financial_account_id (outbound).`
      )
    }
  }
  return Either.void
}

/** A named account must be a wallet account of the program in the transfer's currency. */
const resolveAccount = (
  accounts: ReadonlyArray<FinancialAccount>,
  id: string | null,
  param: string,
  currency: string
): Either.Either<FinancialAccount | null, PrepareError> => {
  if (id === null) return Either.right(null)
  const account = accounts.find((row) => row.id === id)
  if (account === undefined) return Either.left(missing({ resource: "financial account", param }))
  if (account.kind !== "wallet") {
    return Either.left(
      rule(
        "settlement_account_not_allowed",
        "Settlement accounts move money only as the counterparty of an external rail; name a wallet account.",
        param
      )
    )
  }
  if (account.currency !== currency) {
    return Either.left(rule("currency_mismatch", `The account named by ${param} holds another currency than the transfer's.`, "currency"))
  }
  return Either.right(account)
}

/** The checks of the posting rules over the accounts read (`accountsToRead`), in the order callers see them. */
export const prepareTransfer = (
  programId: string,
  order: TransferOrder,
  accounts: ReadonlyArray<FinancialAccount>
): Either.Either<PreparedTransfer, PrepareError> =>
  Either.gen(function* () {
    yield* checkSides(order)
    const from = yield* resolveAccount(accounts, order.from_financial_account_id, "from_financial_account_id", order.currency)
    const to = yield* resolveAccount(accounts, order.to_financial_account_id, "to_financial_account_id", order.currency)
    if (from !== null && to !== null && from.id === to.id) {
      return yield* Either.left(
        rule("same_financial_account", "from_financial_account_id and to_financial_account_id must differ.", "to_financial_account_id")
      )
    }
    const settlement =
      order.rail === "book" ? null : (accounts.find((row) => row.kind === "settlement" && row.currency === order.currency) ?? null)
    return { programId, order, from, to, settlement }
  })

/**
 * An existing transaction a transfer may be attached to: not a card transaction (card messages
 * alone move one: a transfer would change its status and money behind its hold, docs/card-transactions.md#transfers-and-card-transactions),
 * not declined, same currency.
 */
export const checkAttachable = (existing: Transaction, currency: string): Either.Either<Transaction, Conflict | BusinessRuleViolation> =>
  existing.card_id !== null
    ? Either.left(
        new Conflict({
          message: "The transaction is a card transaction; only card messages move it, no transfer can be attached to it.",
          param: "transaction_id"
        })
      )
    : existing.status === "DECLINED"
      ? Either.left(new Conflict({ message: "The transaction was declined; no transfer can be attached to it.", param: "transaction_id" }))
      : existing.currency !== currency
        ? Either.left(rule("currency_mismatch", "The transaction is in another currency than the transfer.", "currency"))
        : Either.right(existing)

/** The transaction a transfer belongs to: a new one, or an existing one with its other PENDING transfers counted under its lock. */
export type TransactionPlan =
  | { readonly _tag: "New" }
  /** A card transaction's clearing or return: the card message writes the transaction (CardTransactions). */
  | { readonly _tag: "Card"; readonly transaction: Transaction }
  | { readonly _tag: "Existing"; readonly transaction: Transaction; readonly pendingTransfers: number }

/** What a posted transfer answers: the transfer, its transaction as it stands after, its book transfer. */
export interface PostedTransfer {
  readonly transfer: Transfer
  readonly transaction: Transaction
  readonly book_transfer: BookTransfer
}

const newTransaction = (p: PreparedTransfer, status: TransactionStatus, now: string): Transaction => ({
  id: newId(),
  object: "transaction",
  program_id: p.programId,
  status,
  amount: p.order.amount,
  currency: p.order.currency,
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
  created_at: now,
  updated_at: now
})

/**
 * The transaction after the posting and what to write of it. A transfer-driven transaction is
 * SETTLED once every one of its transfers is; a card transaction's status is its messages' (CardTransactions).
 */
const transactionAfter = (p: PreparedTransfer, plan: TransactionPlan, transferStatus: "PENDING" | "SETTLED", now: string) => {
  if (plan._tag === "Card") return { transaction: plan.transaction, write: "none" as const }
  if (plan._tag === "New") return { transaction: newTransaction(p, transferStatus, now), write: "insert" as const }
  return attachedTransactionAfter(plan.transaction, plan.pendingTransfers, transferStatus, now)
}

/**
 * An existing transfer-driven transaction after one more transfer of `transferStatus` joins it
 * (its other PENDING transfers counted under its lock): PENDING while any of its transfers is,
 * else SETTLED; and what to write of it.
 */
export const attachedTransactionAfter = (
  existing: Transaction,
  pendingTransfers: number,
  transferStatus: "PENDING" | "SETTLED",
  now: string
): { readonly transaction: Transaction; readonly write: "update" | "none" } => {
  if (existing.status !== "PENDING" && existing.status !== "SETTLED") return { transaction: existing, write: "none" }
  const pending = pendingTransfers + (transferStatus === "PENDING" ? 1 : 0)
  const next: TransactionStatus = pending > 0 ? "PENDING" : "SETTLED"
  return next === existing.status
    ? { transaction: existing, write: "none" }
    : { transaction: { ...existing, status: next, updated_at: now }, write: "update" }
}

/**
 * Every row and event one transfer writes, from `source` to `target` (the settlement account
 * standing in for the side an external rail or a card leaves out). The entries are asserted
 * balanced by PostingRules before anything is written.
 */
export const transferPosting = (
  p: PreparedTransfer,
  source: FinancialAccount,
  target: FinancialAccount,
  plan: TransactionPlan,
  now: string
): { readonly posting: TransferPosting; readonly posted: PostedTransfer } => {
  const { amount, currency, rail } = p.order
  const status = SETTLES_AT_ONCE.has(rail) ? ("SETTLED" as const) : ("PENDING" as const)
  const { transaction, write } = transactionAfter(p, plan, status, now)
  const transfer: Transfer = {
    id: newId(),
    object: "transfer",
    program_id: p.programId,
    transaction_id: transaction.id,
    payment_rail: rail,
    amount,
    currency,
    from_financial_account_id: source.id,
    to_financial_account_id: target.id,
    status,
    description: p.order.description,
    metadata: p.order.metadata ?? EMPTY_METADATA,
    return_code: null,
    return_reason: null,
    created_at: now,
    updated_at: now
  }
  const entries = transferEntries(source.id, target.id, amount, currency)
  // An inbound credit PENDING on its rail is posted but not available until it settles.
  const pendingCredit = status === "PENDING" && target.kind === "wallet" && source.kind === "settlement" ? amount : 0
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
  const event = (type: EventType, object: unknown) => newEvent(p.programId, type, now, object)
  const events = [event("transfer.created", transfer)]
  if (write !== "none") events.push(event("transaction.updated", transaction))
  if (status === "SETTLED") events.push(event(rail === "fednow_instant" ? "transfer.settled.instant" : "transfer.settled", transfer))
  return {
    posting: {
      transaction,
      transactionWrite: write,
      transfer,
      bookTransfer,
      deltas: balanceDeltas(entries).map((d) =>
        pendingCredit > 0 && d.financial_account_id === target.id && d.book === "principal" ? { ...d, pendingMinor: pendingCredit } : d
      ),
      checkFunds: source.kind === "wallet" && plan._tag !== "Card",
      activeCardId: plan._tag === "Card" ? null : (p.order.card?.card_id ?? null),
      events,
      balanceEvents: [source, target]
        .filter((account) => account.kind === "wallet")
        .map((account) => ({ id: newId(), financial_account_id: account.id }))
    },
    posted: { transfer, transaction, book_transfer: bookTransfer }
  }
}
