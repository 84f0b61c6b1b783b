import { type IssuingEvent, storedEventDataOf } from "../events/Records.js"
import { metadataText } from "../platform/Metadata.js"
import { balanceRowKey, balanceRowOrder } from "./PostingRules.js"
import { MAX_TOTAL_MINOR } from "./Records.js"
import type { PostingOutcome, TransferPosting } from "./LedgerStore.js"

/**
 * A batch's new transfers (no card, each its own new transaction) written set-based by a store
 * (docs/ledger.md#batches): the postings decided in order in the process over the running totals
 * of their balance rows, which the store read under the batch's write lock, then the rows of the
 * ones that post, one list per table. Both stores use this, so the funds and 2^53 checks of a
 * batch cannot drift between them; they are the checks a single posting makes in the store.
 */

/** True for a posting the set-based batch path takes: a new transfer with its new transaction and no card. */
export const isNewTransfer = (posting: TransferPosting): boolean => posting.transactionWrite === "insert" && posting.activeCardId === null

const LIMIT = BigInt(MAX_TOTAL_MINOR)

export interface BalanceTotals {
  debits: bigint
  credits: bigint
  /** Posted but not available (holds, inbound credits PENDING on their rail). */
  pending: bigint
}

/**
 * Decides a batch's postings in order over the running totals of their balance rows (by `balanceRowKey`, read under
 * the batch's locks): exactly the checks `issuing_post_transfer` makes — the source's principal
 * balance covers the amount when `checkFunds`, and no (account, book) total passes
 * `MAX_TOTAL_MINOR` — each posted one moving the totals the next one sees.
 */
export const decidePostings = (
  postings: ReadonlyArray<TransferPosting>,
  totals: Map<string, BalanceTotals>
): ReadonlyArray<PostingOutcome> => {
  const totalsOf = (account: string, book: string) => {
    const key = balanceRowKey(account, book)
    let found = totals.get(key)
    if (found === undefined) {
      found = { debits: 0n, credits: 0n, pending: 0n }
      totals.set(key, found)
    }
    return found
  }
  return postings.map(({ checkFunds, deltas, transfer }): PostingOutcome => {
    let available = 0
    if (checkFunds) {
      const principal = totalsOf(transfer.from_financial_account_id!, "principal")
      available = Number(principal.credits - principal.debits - principal.pending)
      if (available < transfer.amount) return { posted: false, refusal: "insufficient_funds", availableMinor: available, wake: false }
    }
    const over = deltas.some((d) => {
      const row = totalsOf(d.financial_account_id, d.book)
      return row.debits + BigInt(d.debitsMinor) > LIMIT || row.credits + BigInt(d.creditsMinor) > LIMIT
    })
    if (over) return { posted: false, refusal: "balance_limit_exceeded", availableMinor: available, wake: false }
    for (const d of deltas) {
      const row = totalsOf(d.financial_account_id, d.book)
      row.debits += BigInt(d.debitsMinor)
      row.credits += BigInt(d.creditsMinor)
      row.pending += BigInt(d.pendingMinor)
    }
    return { posted: true, refusal: null, availableMinor: available, wake: false }
  })
}

/** The postings' balance deltas summed per (account, book), sorted: the upsert takes the rows' locks in that order. */
const summedDeltas = (postings: ReadonlyArray<TransferPosting>) => {
  const balances = new Map<
    string,
    {
      financial_account_id: string
      book: string
      currency: string
      debits_minor: number
      credits_minor: number
      pending_minor: number
      updated_at: string
    }
  >()
  for (const { deltas, transfer } of postings) {
    for (const d of deltas) {
      const key = balanceRowKey(d.financial_account_id, d.book)
      const row = balances.get(key)
      if (row === undefined) {
        balances.set(key, {
          financial_account_id: d.financial_account_id,
          book: d.book,
          currency: d.currency,
          debits_minor: d.debitsMinor,
          credits_minor: d.creditsMinor,
          pending_minor: d.pendingMinor,
          updated_at: transfer.created_at
        })
      } else {
        row.debits_minor += d.debitsMinor
        row.credits_minor += d.creditsMinor
        row.pending_minor += d.pendingMinor
        row.updated_at = transfer.created_at
      }
    }
  }
  return [...balances.values()].sort(balanceRowOrder)
}

/**
 * One `balance.updated` per wallet account the postings move, with the account as the whole batch
 * leaves it (the store composes it after the balances are written): the first posting's event id
 * for that account, the last one's time.
 */
const batchBalanceEvents = (postings: ReadonlyArray<TransferPosting>) => {
  const byAccount = new Map<string, { id: string; program_id: string; account: string; created_at: string }>()
  for (const { balanceEvents, transfer } of postings) {
    for (const event of balanceEvents) {
      const seen = byAccount.get(event.financial_account_id)
      if (seen === undefined)
        byAccount.set(event.financial_account_id, {
          id: event.id,
          program_id: transfer.program_id,
          account: event.financial_account_id,
          created_at: transfer.created_at
        })
      else seen.created_at = transfer.created_at
    }
  }
  return [...byAccount.values()]
}

/**
 * Each posting's own `balance.updated`, as it would have written alone (coalesced postings on
 * PostgreSQL, docs/ledger.md#coalesced-postings-on-postgresql): with what the postings after it add
 * to the account's principal book, which the store takes off the balances the whole write leaves
 * (store-pg migration 0430), and its posting's time.
 */
const eachBalanceEvent = (postings: ReadonlyArray<TransferPosting>) => {
  const later = new Map<string, { debits: number; credits: number; pending: number }>()
  const rows: Array<{
    id: string
    program_id: string
    account: string
    created_at: string
    later_debits: number
    later_credits: number
    later_pending: number
  }> = []
  for (let i = postings.length - 1; i >= 0; i--) {
    const { balanceEvents, deltas, transfer } = postings[i]!
    for (const event of balanceEvents) {
      const after = later.get(event.financial_account_id) ?? { debits: 0, credits: 0, pending: 0 }
      rows.push({
        id: event.id,
        program_id: transfer.program_id,
        account: event.financial_account_id,
        created_at: transfer.created_at,
        later_debits: after.debits,
        later_credits: after.credits,
        later_pending: after.pending
      })
    }
    for (const d of deltas) {
      if (d.book !== "principal") continue
      const after = later.get(d.financial_account_id) ?? { debits: 0, credits: 0, pending: 0 }
      later.set(d.financial_account_id, {
        debits: after.debits + d.debitsMinor,
        credits: after.credits + d.creditsMinor,
        pending: after.pending + d.pendingMinor
      })
    }
  }
  return rows.reverse()
}

/**
 * A posting's events as rows (`eventRow`'s), the stored data of an object made once when the next
 * event carries the same one in the same program at the same time (transfer.created and
 * transfer.settled: the same transfer): that JSON is the largest part of building a batch's rows.
 */
const eventRows = (events: ReadonlyArray<IssuingEvent>) => {
  let data = ""
  return events.map((event, i) => {
    const previous = events[i - 1]
    if (
      previous === undefined ||
      event.data.object !== previous.data.object ||
      event.program_id !== previous.program_id ||
      event.created_at !== previous.created_at
    )
      data = storedEventDataOf(event)
    return { id: event.id, program_id: event.program_id, type: event.type, created_at: event.created_at, data }
  })
}

/**
 * The rows of the postings that post, as `issuing_write_postings` (migration 0090) takes them: one
 * array per table. `balanceEvents`: "per batch", one per account with the account as the whole
 * batch leaves it (a batch request's), or "per posting", each posting's own (coalesced postings).
 */
export const postingRows = (postings: ReadonlyArray<TransferPosting>, balanceEvents: "per batch" | "per posting" = "per batch") => {
  return {
    transactions: postings.map(({ transaction: t, transfer }) => ({
      id: t.id,
      program_id: t.program_id,
      status: t.status,
      amount_minor: transfer.amount,
      currency: transfer.currency,
      card_id: t.card_id,
      mcc: t.mcc,
      merchant_name: t.merchant_name,
      created_at: t.created_at,
      updated_at: transfer.created_at
    })),
    transfers: postings.map(({ transfer }) => ({
      id: transfer.id,
      program_id: transfer.program_id,
      transaction_id: transfer.transaction_id,
      payment_rail: transfer.payment_rail,
      amount_minor: transfer.amount,
      currency: transfer.currency,
      from_financial_account_id: transfer.from_financial_account_id,
      to_financial_account_id: transfer.to_financial_account_id,
      status: transfer.status,
      description: transfer.description,
      metadata: metadataText(transfer.metadata),
      created_at: transfer.created_at
    })),
    book_transfers: postings.map(({ bookTransfer, transaction: t, transfer }) => ({
      id: bookTransfer.id,
      program_id: t.program_id,
      transfer_id: transfer.id,
      transaction_id: t.id,
      amount_minor: transfer.amount,
      currency: transfer.currency,
      posted_at: transfer.created_at
    })),
    entries: postings.flatMap(({ bookTransfer, transfer }) =>
      bookTransfer.entries.map((e, position) => ({
        book_transfer_id: bookTransfer.id,
        position,
        financial_account_id: e.financial_account_id,
        book: e.book,
        entry_type: e.entry_type,
        amount_minor: e.amount.amount,
        currency: e.amount.currency,
        // The book transfer's, which the account's list orders by (docs/ledger.md#an-accounts-book-transfers).
        posted_at: transfer.created_at
      }))
    ),
    balances: summedDeltas(postings),
    events: postings.flatMap(({ events }) => eventRows(events)),
    balance_events: balanceEvents === "per batch" ? batchBalanceEvents(postings) : eachBalanceEvent(postings)
  }
}

/** The postings to write once decided: the ones that post, or none when `allOrNothing` and any was refused. */
export const postingsToWrite = (
  postings: ReadonlyArray<TransferPosting>,
  outcomes: ReadonlyArray<PostingOutcome>,
  allOrNothing: boolean
): ReadonlyArray<TransferPosting> =>
  allOrNothing && outcomes.some((outcome) => !outcome.posted) ? [] : postings.filter((_, i) => outcomes[i]!.posted)

/**
 * The outcomes of one write of postings, the posted ones marked to wake the webhook workers once it
 * commits (`PostingOutcome.wake`) when the write queued deliveries.
 */
export const withWake = (outcomes: ReadonlyArray<PostingOutcome>, queued: boolean): ReadonlyArray<PostingOutcome> =>
  queued ? outcomes.map((outcome) => (outcome.posted ? { ...outcome, wake: true } : outcome)) : outcomes

/** The defect of a `postNewTransfers` call given a posting that is not a new transfer (a caller's bug). */
export const notNewTransfers = () => new Error("postNewTransfers takes new transfers only (isNewTransfer)")
