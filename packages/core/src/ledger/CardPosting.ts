import { Effect } from "effect"
import { newEvent } from "../events/Records.js"
import { newId } from "../platform/Ids.js"
import { EMPTY_METADATA } from "../platform/Metadata.js"
import type { CardMessagePosting, PostingRefusal, TransferPosting } from "./LedgerStore.js"
import { accountsOf, type LedgerDeps, refused, settlementAccount, type TransferError } from "./Posting.js"
import { prepareTransfer, transferPosting } from "./PrepareTransfer.js"
import type { AmountMinor, Currency, Transaction } from "./Records.js"

/**
 * One message of a card transaction as the ledger posts it (docs/card-transactions.md#ledger-postings):
 * the transaction as the message leaves it, the hold's change on the card's wallet account, the
 * funds it needs available, and the money it moves — a clearing (wallet → the program's settlement
 * account, rail `card`: the seed's four-entry book transfer) or a return (settlement → wallet).
 */
export interface CardMessage {
  readonly transaction: Transaction
  readonly write: "insert" | "update"
  /** The card's wallet account. */
  readonly financialAccountId: string
  /** The hold's change: + opens or grows it, − releases it. */
  readonly pendingDelta: number
  /** Refuse (insufficient_funds, nothing written) unless this much is available; 0: no check. */
  readonly requireAvailable: number
  /** Refuse unless this card is still ACTIVE, read under a lock a freeze waits for. */
  readonly activeCardId: string | null
  readonly transfer: { readonly kind: "clearing" | "return"; readonly amount: number } | null
}

/** A refusal for what a card message asked its posting to check: the funds (`requireAvailable`) or the card's state (`activeCardId`). */
export type CardRefusal = Exclude<PostingRefusal, "balance_limit_exceeded">

/**
 * What a card message's posting did: posted (the caller wakes the webhook workers after its commit
 * when `wake`), or refused for a check the message asked for, nothing written — the card flow
 * records a decline then. A refusal of the ledger's own bounds fails with its 422 instead.
 */
export type CardMessageOutcome =
  | { readonly posted: true; readonly wake: boolean }
  | { readonly posted: false; readonly refusal: CardRefusal }

const isCardRefusal = (refusal: PostingRefusal | null): refusal is CardRefusal =>
  refusal === "insufficient_funds" || refusal === "card_frozen" || refusal === "card_closed"

/** The clearing's or return's transfer posting, joining the card transaction (no funds check). */
const cardTransfer = (ctx: LedgerDeps, programId: string, message: CardMessage, now: string) =>
  Effect.gen(function* () {
    const { amount, kind } = message.transfer!
    const currency = message.transaction.currency as Currency
    const clearing = kind === "clearing"
    const order = {
      rail: "card" as const,
      amount: amount as AmountMinor,
      currency,
      from_financial_account_id: clearing ? message.financialAccountId : null,
      to_financial_account_id: clearing ? null : message.financialAccountId,
      transaction_id: null,
      description: null,
      metadata: EMPTY_METADATA,
      card: { card_id: message.transaction.card_id!, mcc: message.transaction.mcc, merchant_name: message.transaction.merchant_name }
    }
    const accounts = yield* accountsOf(ctx, programId, order)
    const p = yield* prepareTransfer(programId, order, accounts)
    const settlement = p.settlement ?? (yield* settlementAccount(ctx, programId, currency))
    const wallet = clearing ? p.from! : p.to!
    const { posting } = transferPosting(
      p,
      clearing ? wallet : settlement,
      clearing ? settlement : wallet,
      { _tag: "Card", transaction: message.transaction },
      now
    )
    return posting
  })

/**
 * Writes a card message with the store's one call (docs/card-transactions.md): the
 * `transaction.updated` of the message and the wallet's `balance.updated` when its balance or
 * pending amount moves, in the same database transaction. Runs in the caller's transaction when
 * there is one — which a message with a transfer needs (the settlement account may be created
 * before it); the caller commits and wakes the webhook workers when the outcome says so.
 */
export const postCardMessage = (
  ctx: LedgerDeps,
  programId: string,
  message: CardMessage
): Effect.Effect<CardMessageOutcome, TransferError> =>
  Effect.gen(function* () {
    const now = message.transaction.updated_at
    const transfer: TransferPosting | null = message.transfer === null ? null : yield* cardTransfer(ctx, programId, message, now)
    const moves = message.pendingDelta !== 0 || transfer !== null
    const posting: CardMessagePosting = {
      transaction: message.transaction,
      transactionWrite: message.write,
      financialAccountId: message.financialAccountId,
      pendingDelta: message.pendingDelta,
      requireAvailable: message.requireAvailable,
      activeCardId: message.activeCardId,
      transfer,
      events: [newEvent(programId, "transaction.updated", now, message.transaction)],
      balanceEventId: moves ? newId() : null
    }
    const outcome = yield* ctx.store.postCardMessage(posting)
    if (outcome.posted) return { posted: true, wake: outcome.wake } as const
    if (isCardRefusal(outcome.refusal)) return { posted: false, refusal: outcome.refusal } as const
    return yield* refused(outcome)
  })
