import { countRows, metadataText, storedEventData, type TransferPosting } from "@issuing/core"
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
 * The list counts a posting record's rows add, summed per (list, key): core's `countRows` (the keys
 * the counting triggers write per row, and again per UTC month, day and hour) over the record's own
 * fields — what issuing_post_transfer derived in SQL until the process sent them
 * (docs/decisions.md "What each part of a PostgreSQL posting costs": 0.16 ms of the backend's CPU
 * a posting). A record's rows are all of its program, so the program is left out.
 */
export const countsOf = (record: Omit<PostingRecord, "counts">): Array<{ readonly list: string; readonly key: string; n: number }> => {
  const { program_id } = record
  // The posting's time as UTC ISO text (the platform's times are): the transfer's and events'.
  const now = new Date(record.now).toISOString()
  const bookTransfer = { id: record.book_transfer_id, program_id }
  const rows = countRows({
    transactions:
      record.transaction_write === "insert"
        ? [
            {
              program_id,
              status: record.transaction_status,
              card_id: record.card_id,
              created_at: new Date(record.transaction_created_at).toISOString()
            }
          ]
        : [],
    transfers: [
      {
        program_id,
        status: record.transfer_status,
        payment_rail: record.rail,
        from_financial_account_id: record.source,
        to_financial_account_id: record.target,
        created_at: now
      }
    ],
    book_transfers: [bookTransfer],
    entries: record.entries.map((e) => ({ book_transfer_id: bookTransfer.id, financial_account_id: e.account, book: e.book })),
    events: [
      ...record.events.map((e) => ({ program_id, type: e.type, created_at: now })),
      ...record.balance_events.map(() => ({ program_id, type: "balance.updated", created_at: now }))
    ]
  })
  return rows.map(({ key, list, n }) => ({ list, key, n }))
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
