import { countPeriods, metadataText, storedEventData, type TransferPosting } from "@issuing/core"
import { Schema } from "effect"

const Account = Schema.String
const Amount = Schema.Number

/**
 * One posting as `issuing_post_transfer(p_posting jsonb, p_channel text)` takes it
 * (src/functions/issuing_post_transfer.sql): everything one transfer writes, by name. The single
 * posting, a batch's run (`issuing_post_transfers`, an array of them) and a card message's transfer
 * (`issuing_post_card_message`'s `p_transfer`) send the same record, built by `postingRecord`;
 * test/PostingRecord.test.ts checks that the function reads exactly these fields.
 */
export const PostingRecord = Schema.Struct({
  program_id: Schema.String,
  /** The transfer's accounts: the source's principal is funds-checked, both rows are locked. */
  source: Account,
  target: Account,
  check_funds: Schema.Boolean,
  amount: Amount,
  currency: Schema.String,
  /** The posting's time: the transfer's and book transfer's, the entries' and the events'. */
  now: Schema.String,
  /** A card authorization's card, refused unless ACTIVE under a lock a freeze waits for. */
  active_card: Schema.NullOr(Schema.String),
  transaction_write: Schema.Literal("insert", "update", "none"),
  transaction_id: Schema.String,
  transaction_status: Schema.String,
  transaction_created_at: Schema.String,
  card_id: Schema.NullOr(Schema.String),
  mcc: Schema.NullOr(Schema.String),
  merchant_name: Schema.NullOr(Schema.String),
  transfer_id: Schema.String,
  rail: Schema.String,
  transfer_status: Schema.String,
  description: Schema.NullOr(Schema.String),
  /** The transfer's metadata as its column holds it (JSON text). */
  metadata: Schema.String,
  book_transfer_id: Schema.String,
  /** The book transfer's entries, in position order. */
  entries: Schema.Array(Schema.Struct({ account: Account, book: Schema.String, entry_type: Schema.String, amount: Amount })),
  /** What the posting adds to each (account, book) row. */
  deltas: Schema.Array(Schema.Struct({ account: Account, book: Schema.String, debits: Amount, credits: Amount, pending: Amount })),
  /** The change's events in order, each object as JSON text. */
  events: Schema.Array(Schema.Struct({ id: Schema.String, type: Schema.String, data: Schema.String })),
  /** One balance.updated per wallet account moved, its data composed under the posting's locks. */
  balance_events: Schema.Array(Schema.Struct({ id: Schema.String, account: Account })),
  /**
   * What the posting adds to the list counts (`issuing_list_counts` of its program and shard), one
   * item per (list, key), built by `countsOf` from the fields above; the function upserts them in
   * its lock order.
   */
  counts: Schema.Array(Schema.Struct({ list: Schema.String, key: Schema.String, n: Schema.Number }))
})
export type PostingRecord = typeof PostingRecord.Type

/** A posting's balance deltas as the stored functions read them, by (account, book). */
export const deltaRows = (deltas: ReadonlyArray<TransferPosting["deltas"][number]>) =>
  deltas.map((d) => ({
    account: d.financial_account_id,
    book: d.book,
    debits: d.debitsMinor,
    credits: d.creditsMinor,
    pending: d.pendingMinor
  }))

/**
 * The list counts a posting record's rows add, summed per (list, key): the keys of migration 0750
 * (a transaction under its status, and per card, when the posting inserts it; its transfer under
 * status and rail, and again per account; a book transfer once per account, under the set of that
 * account's books; each event under its type, the balance.updated included) and those of a
 * transaction, transfer or event again in its UTC month, day and hour (migration 0841) — what
 * issuing_post_transfer derived from the same fields in SQL until the process sent them
 * (docs/decisions.md "What each part of a PostgreSQL posting costs": 0.16 ms of the backend's CPU
 * a posting). The counting triggers write the same keys for every other writer.
 */
export const countsOf = (record: Omit<PostingRecord, "counts">): Array<{ readonly list: string; readonly key: string; n: number }> => {
  const counts = new Map<string, { readonly list: string; readonly key: string; n: number }>()
  const add = (list: string, key: string, n: number) => {
    const id = `${list} ${key}`
    const found = counts.get(id)
    if (found === undefined) counts.set(id, { list, key, n })
    else found.n += n
  }
  const count = (list: string, key: string, createdAt: string | undefined, n = 1) => {
    add(list, key, n)
    if (createdAt !== undefined)
      for (const period of countPeriods(list as "events" | "transfers" | "transactions", createdAt)) add(period, key, n)
  }
  if (record.transaction_write === "insert") {
    // The transaction's own created_at, as UTC ISO text (the platform's times are).
    const at = new Date(record.transaction_created_at).toISOString()
    count("transactions", `=${record.transaction_status}|`, at)
    if (record.card_id !== null) count("transactions", `=${record.transaction_status}|=${record.card_id}`, at)
  }
  const now = new Date(record.now).toISOString()
  for (const account of new Set(["", `=${record.source}`, `=${record.target}`]))
    count("transfers", `=${record.transfer_status}|=${record.rail}|${account}`, now)
  const books = new Map<string, Set<string>>()
  for (const e of record.entries) books.set(e.account, (books.get(e.account) ?? new Set<string>()).add(e.book))
  // string_agg(book, '+' ORDER BY book COLLATE "C"): the byte order, which JavaScript's sort of these ASCII names is.
  for (const [account, of] of books) count("book_transfers", `=${account}|=${[...of].sort().join("+")}`, undefined)
  for (const e of record.events) count("events", `=${e.type}`, now)
  if (record.balance_events.length > 0) count("events", "=balance.updated", now, record.balance_events.length)
  return [...counts.values()]
}

/** The posting record of `posting`: the one place a posting's fields are spelled for PostgreSQL. */
export const postingRecord = (posting: TransferPosting): PostingRecord => {
  const record = recordFields(posting)
  return { ...record, counts: countsOf(record) }
}

const recordFields = ({
  activeCardId,
  balanceEvents,
  bookTransfer,
  checkFunds,
  deltas,
  events,
  transaction: t,
  transactionWrite,
  transfer
}: TransferPosting): Omit<PostingRecord, "counts"> => ({
  program_id: t.program_id,
  source: transfer.from_financial_account_id,
  target: transfer.to_financial_account_id,
  check_funds: checkFunds,
  amount: transfer.amount,
  currency: transfer.currency,
  now: transfer.created_at,
  active_card: activeCardId,
  transaction_write: transactionWrite,
  transaction_id: t.id,
  transaction_status: t.status,
  transaction_created_at: t.created_at,
  card_id: t.card_id,
  mcc: t.mcc,
  merchant_name: t.merchant_name,
  transfer_id: transfer.id,
  rail: transfer.payment_rail,
  transfer_status: transfer.status,
  description: transfer.description,
  metadata: metadataText(transfer.metadata),
  book_transfer_id: bookTransfer.id,
  entries: bookTransfer.entries.map((e) => ({
    account: e.financial_account_id,
    book: e.book,
    entry_type: e.entry_type,
    amount: e.amount.amount
  })),
  deltas: deltaRows(deltas),
  // Stored as the posting function writes the rows: in the record's program, at its `now`.
  events: events.map((e) => ({ id: e.id, type: e.type, data: storedEventData(e.data.object, t.program_id, transfer.created_at) })),
  balance_events: balanceEvents.map((e) => ({ id: e.id, account: e.financial_account_id }))
})
