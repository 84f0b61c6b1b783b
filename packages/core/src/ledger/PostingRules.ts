import type { Book, BookEntry, EntryType } from "./Records.js"

/**
 * The posting rules (docs/ledger.md#posting-rules), as pure functions with their invariants asserted. A violated
 * invariant is a bug, never a user error: it throws (a defect, so the transaction rolls back and
 * the caller gets a 500 with nothing written).
 */

/** A failed ledger invariant. */
export class LedgerInvariantViolation extends Error {
  constructor(message: string) {
    super(`Ledger invariant violated: ${message}`)
    this.name = "LedgerInvariantViolation"
  }
}

const check = (condition: boolean, message: string): void => {
  if (!condition) throw new LedgerInvariantViolation(message)
}

/**
 * The four entries of a transfer of `amountMinor` from account A to account B:
 * A principal DEBIT, A cash CREDIT, B cash DEBIT, B principal CREDIT.
 */
export const transferEntries = (
  fromAccountId: string,
  toAccountId: string,
  amountMinor: number,
  currency: string
): ReadonlyArray<BookEntry> => {
  check(Number.isSafeInteger(amountMinor) && amountMinor > 0, `amount must be a positive safe integer, got ${amountMinor}`)
  check(fromAccountId !== toAccountId, "a transfer needs two different accounts")
  const amount = { amount: amountMinor, currency }
  const entries: ReadonlyArray<BookEntry> = [
    { book: "principal", financial_account_id: fromAccountId, entry_type: "DEBIT", amount },
    { book: "cash", financial_account_id: fromAccountId, entry_type: "CREDIT", amount },
    { book: "cash", financial_account_id: toAccountId, entry_type: "DEBIT", amount },
    { book: "principal", financial_account_id: toAccountId, entry_type: "CREDIT", amount }
  ]
  assertBalanced(entries)
  return entries
}

/** Asserts that debits equal credits per currency and that every entry is a positive amount. */
export const assertBalanced = (entries: ReadonlyArray<BookEntry>): void => {
  check(entries.length >= 2, "a book transfer has at least two entries")
  const net = new Map<string, number>()
  for (const entry of entries) {
    check(Number.isSafeInteger(entry.amount.amount) && entry.amount.amount > 0, "entry amounts are positive integers")
    const signed = entry.entry_type === "DEBIT" ? entry.amount.amount : -entry.amount.amount
    net.set(entry.amount.currency, (net.get(entry.amount.currency) ?? 0) + signed)
  }
  for (const [currency, total] of net) check(total === 0, `debits and credits differ by ${total} ${currency}`)
}

/** A balance row's identity: an account and one of its books. */
export interface BalanceRowId {
  readonly financial_account_id: string
  readonly book: string
}

/** The key of a balance row (account, book) in a map of balance rows. */
export const balanceRowKey = (account: string, book: string): string => `${account}\u0000${book}`

/**
 * The order balance rows are locked in, by every posting of both stores: account id, then book —
 * SQL's `ORDER BY financial_account_id, book` (binary collation, the same for the ASCII ids).
 */
export const balanceRowOrder = (a: BalanceRowId, b: BalanceRowId): number =>
  a.financial_account_id < b.financial_account_id
    ? -1
    : a.financial_account_id > b.financial_account_id
      ? 1
      : a.book < b.book
        ? -1
        : a.book > b.book
          ? 1
          : 0

/** The change one set of entries makes to each (account, book): debits and credits added. */
export interface BalanceDelta {
  readonly financial_account_id: string
  readonly book: Book
  readonly currency: string
  readonly debitsMinor: number
  readonly creditsMinor: number
  /**
   * The change to the row's pending amount (principal rows): posted but not available — an
   * inbound credit still PENDING on its rail (docs/card-transactions.md#holds-in-the-ledger).
   */
  readonly pendingMinor: number
}

/** Sums entries per (account, book), in a fixed order (account id, then book) so locks are taken in that order. */
export const balanceDeltas = (entries: ReadonlyArray<BookEntry>): ReadonlyArray<BalanceDelta> => {
  const byKey = new Map<
    string,
    { financial_account_id: string; book: Book; currency: string; debitsMinor: number; creditsMinor: number; pendingMinor: number }
  >()
  for (const entry of entries) {
    const key = balanceRowKey(entry.financial_account_id, entry.book)
    const delta = byKey.get(key) ?? {
      financial_account_id: entry.financial_account_id,
      book: entry.book,
      currency: entry.amount.currency,
      debitsMinor: 0,
      creditsMinor: 0,
      pendingMinor: 0
    }
    check(delta.currency === entry.amount.currency, "one book of one account holds one currency")
    if (entry.entry_type === "DEBIT") delta.debitsMinor += entry.amount.amount
    else delta.creditsMinor += entry.amount.amount
    byKey.set(key, delta)
  }
  return [...byKey.values()].sort(balanceRowOrder)
}

/** The side on which a book's balance is normally carried (docs/ledger.md, chart of books). */
export const NORMAL_SIDE: Record<Book, EntryType> = { principal: "CREDIT", cash: "DEBIT" }

/** A book's balance on its normal side. */
export const bookBalance = (book: Book, debitsMinor: number, creditsMinor: number): number =>
  NORMAL_SIDE[book] === "CREDIT" ? creditsMinor - debitsMinor : debitsMinor - creditsMinor

/** The principal balance of an account after a debit of `amountMinor`; wallets may not go below zero. */
export const principalAfterDebit = (debitsMinor: number, creditsMinor: number, amountMinor: number): number =>
  creditsMinor - debitsMinor - amountMinor
