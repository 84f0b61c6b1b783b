import * as SqlClient from "@effect/sql/SqlClient"
import {
  type CardMessagePosting,
  type CountedRows,
  countRows,
  isNewTransfer,
  LedgerPosting,
  MAX_TOTAL_MINOR,
  metadataText,
  notNewTransfers,
  type PostingOutcome,
  sqliteFanOutParams,
  storedEventDataOf,
  transactionRow,
  type TransferPosting
} from "@issuing/core"
import { type Context, Effect, Layer } from "effect"
import { byRowCount, fanOutText, valuesList } from "./MultiRowSql.js"
import { writeBalanceEvents } from "./BalanceEvents.js"
import { postNewTransfersSync } from "./NewTransfers.js"
import { COUNTED, COUNTING, countParams, upsertCounts } from "./PostingCounts.js"
import { SqliteWriter, type SqliteWriterService } from "./SqliteClient.js"
import { type SyncConnection, SyncSql } from "./SyncSql.js"
import { makeThreadLane } from "./ThreadLane.js"

/**
 * SQLite's posting, the counterpart of PostgreSQL's `issuing_post_transfer` function: one transfer
 * written as ONE synchronous call of prepared statements on the connection of the current
 * transaction (see `SyncSql`), so the Effect overhead of a statement is paid once per transfer
 * instead of once per statement. The rows (ids, entries, deltas, event payloads) are computed and
 * asserted by the ledger (PrepareTransfer, PostingRules); this only writes them.
 *
 * The funds check reads the source's principal balance inside the same write transaction, which
 * on SQLite is `BEGIN IMMEDIATE` (one writer at a time), so the read is current and the balance
 * cannot change before the write. On insufficient funds nothing is written.
 */

const INSERT_TRANSACTION = `INSERT INTO issuing_transactions
  (id, program_id, status, amount_minor, currency, card_id, decline_reason, mcc, merchant_name, created_at, updated_at)
  VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?, ?)`

const INSERT_TRANSFER = `INSERT INTO issuing_transfers
  (id, program_id, transaction_id, payment_rail, amount_minor, currency, from_financial_account_id,
   to_financial_account_id, status, description, metadata, created_at, updated_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

const INSERT_BOOK_TRANSFER = `INSERT INTO issuing_book_transfers
  (id, program_id, transfer_id, transaction_id, amount_minor, currency, posted_at) VALUES (?, ?, ?, ?, ?, ?, ?)`

const UPDATE_TRANSACTION = `UPDATE issuing_transactions SET status = ?, updated_at = ? WHERE id = ?`

// A card authorization's card, read under the write lock a freeze or close also needs.
const CARD_STATE = `SELECT state FROM issuing_cards WHERE id = ?`

const AVAILABLE = `SELECT credits_minor - debits_minor - pending_minor AS available FROM issuing_balances
  WHERE financial_account_id = ? AND book = 'principal'`

const PENDING_CHANGE = `UPDATE issuing_balances SET pending_minor = pending_minor + ?, updated_at = ?
  WHERE financial_account_id = ? AND book = 'principal'`

// The running totals a posting adds to; missing rows (a book never posted to) count as zero.
const TOTALS = `SELECT debits_minor, credits_minor FROM issuing_balances WHERE financial_account_id = ? AND book = ?`

/** True when a delta would take a debit or credit total past MAX_TOTAL_MINOR (2^53 − 1). */
const passesTotalLimit = (db: SyncConnection, deltas: TransferPosting["deltas"]): boolean =>
  deltas.some((delta) => {
    const row = db.prepare(TOTALS).get(delta.financial_account_id, delta.book)
    if (row === undefined) return false
    // SQLite integers are 64-bit: compare as bigint so a total near the limit is not rounded.
    return BigInt(row.debits_minor) + BigInt(delta.debitsMinor) > LIMIT || BigInt(row.credits_minor) + BigInt(delta.creditsMinor) > LIMIT
  })

const LIMIT = BigInt(MAX_TOTAL_MINOR)

const insertEntries = byRowCount(
  (count) =>
    `INSERT INTO issuing_book_entries (book_transfer_id, position, financial_account_id, book, entry_type, amount_minor, currency, posted_at)
   VALUES ${valuesList(count, "(?, ?, ?, ?, ?, ?, ?, ?)")}`
)

// Balance rows missing for a book are created by the upsert.
const upsertBalances = byRowCount(
  (count) =>
    `INSERT INTO issuing_balances (financial_account_id, book, currency, debits_minor, credits_minor, pending_minor, updated_at)
   VALUES ${valuesList(count, "(?, ?, ?, ?, ?, ?, ?)")}
   ON CONFLICT (financial_account_id, book) DO UPDATE SET
     debits_minor = issuing_balances.debits_minor + excluded.debits_minor,
     credits_minor = issuing_balances.credits_minor + excluded.credits_minor,
     pending_minor = issuing_balances.pending_minor + excluded.pending_minor,
     updated_at = excluded.updated_at`
)

const insertEvents = byRowCount(
  (count) => `INSERT INTO issuing_events (id, program_id, type, created_at, data) VALUES ${valuesList(count, "(?, ?, ?, ?, ?)")}`
)

/**
 * A posting's checks under the write lock: its refusal (nothing is written then), or the source's
 * principal balance read for the funds check (0 when not checked).
 */
const checkPosting = (db: SyncConnection, posting: TransferPosting): PostingOutcome | number => {
  const { deltas, transfer } = posting
  let available = 0
  if (posting.activeCardId !== null) {
    const state = db.prepare(CARD_STATE).get(posting.activeCardId)?.state
    if (state !== "ACTIVE")
      return { posted: false, refusal: state === "FROZEN" ? "card_frozen" : "card_closed", availableMinor: 0, wake: false }
  }
  if (posting.checkFunds) {
    const row = db.prepare(AVAILABLE).get(transfer.from_financial_account_id)
    available = row === undefined ? 0 : Number(row.available)
    if (available < transfer.amount) return { posted: false, refusal: "insufficient_funds", availableMinor: available, wake: false }
  }
  if (passesTotalLimit(db, deltas)) return { posted: false, refusal: "balance_limit_exceeded", availableMinor: available, wake: false }
  return available
}

/** Writes the posting's transaction (per `transactionWrite`), transfer and book transfer. */
const writeTransfer = (db: SyncConnection, posting: TransferPosting) => {
  const { bookTransfer, transaction: t, transfer } = posting
  if (posting.transactionWrite === "insert") {
    db.prepare(INSERT_TRANSACTION).run(
      t.id,
      t.program_id,
      t.status,
      t.amount,
      t.currency,
      t.card_id,
      t.mcc,
      t.merchant_name,
      t.created_at,
      t.updated_at
    )
  } else if (posting.transactionWrite === "update") {
    db.prepare(UPDATE_TRANSACTION).run(t.status, t.updated_at, t.id)
  }
  db.prepare(INSERT_TRANSFER).run(
    transfer.id,
    transfer.program_id,
    transfer.transaction_id,
    transfer.payment_rail,
    transfer.amount,
    transfer.currency,
    transfer.from_financial_account_id,
    transfer.to_financial_account_id,
    transfer.status,
    transfer.description,
    metadataText(transfer.metadata),
    transfer.created_at,
    transfer.updated_at
  )
  db.prepare(INSERT_BOOK_TRANSFER).run(
    bookTransfer.id,
    t.program_id,
    bookTransfer.transfer_id,
    bookTransfer.transaction_id,
    bookTransfer.amount.amount,
    bookTransfer.amount.currency,
    bookTransfer.posted_at
  )
}

/**
 * Writes the posting's entries, balances, events and webhook deliveries: whether deliveries were
 * queued, and how many `balance.updated` events were written.
 */
const writeEntries = (
  db: SyncConnection,
  { balanceEvents, bookTransfer, deltas, events, transfer }: TransferPosting
): { readonly wake: boolean; readonly balanceEventsWritten: number } => {
  db.prepare(insertEntries(bookTransfer.entries.length)).run(
    ...bookTransfer.entries.flatMap((e, position) => [
      bookTransfer.id,
      position,
      e.financial_account_id,
      e.book,
      e.entry_type,
      e.amount.amount,
      e.amount.currency,
      bookTransfer.posted_at
    ])
  )
  db.prepare(upsertBalances(deltas.length)).run(
    ...deltas.flatMap((d) => [
      d.financial_account_id,
      d.book,
      d.currency,
      d.debitsMinor,
      d.creditsMinor,
      d.pendingMinor,
      bookTransfer.posted_at
    ])
  )
  let queued = 0
  if (events.length > 0) {
    db.prepare(insertEvents(events.length)).run(...events.flatMap((e) => [e.id, e.program_id, e.type, e.created_at, storedEventDataOf(e)]))
    queued = db.prepare(fanOutText(events.length)).run(...sqliteFanOutParams(events)).changes
  }
  const written = writeBalanceEvents(db, transfer.program_id, bookTransfer.posted_at, balanceEvents)
  return { wake: queued + written.queued > 0, balanceEventsWritten: written.written }
}

/**
 * The rows of a transfer's posting its list counts read (PostingCounts.ts): the transfer, its book
 * transfer and entries, its events and `balanceEventsWritten` balance.updated (the transaction is
 * the caller's).
 */
const transferCounted = (posting: TransferPosting, balanceEventsWritten: number) => {
  const { bookTransfer, transfer } = posting
  return {
    transfers: [transfer],
    book_transfers: [{ id: bookTransfer.id, program_id: transfer.program_id }],
    entries: bookTransfer.entries.map((e) => ({
      book_transfer_id: bookTransfer.id,
      financial_account_id: e.financial_account_id,
      book: e.book
    })),
    events: [...posting.events, ...balanceUpdated(transfer.program_id, bookTransfer.posted_at, balanceEventsWritten)]
  }
}

/** `count` balance.updated events as their list counts read them. */
const balanceUpdated = (program_id: string, created_at: string, count: number) =>
  Array.from({ length: count }, () => ({ program_id, type: "balance.updated", created_at }))

/** Adds a posting's rows to their list counts in one upsert (the insert triggers skip meanwhile: COUNTING). */
const writeCounts = (db: SyncConnection, rows: CountedRows) => {
  const counts = countRows(rows)
  if (counts.length > 0) db.prepare(upsertCounts(counts.length)).run(...countParams(counts))
}

/**
 * Writes one transfer with its transaction (per `transactionWrite`), book transfer, entries,
 * balances, events and webhook deliveries, and their list counts in one upsert while the insert
 * triggers skip (about 30 rows, each once: the triggers ran 11 statements for them, an account's
 * book-transfer count moved twice as its entries came, and cost 45 % of the posting's CPU;
 * docs/decisions.md "Time filters and total_count").
 */
export const postTransferSync = (db: SyncConnection, posting: TransferPosting): PostingOutcome => {
  const checked = checkPosting(db, posting)
  if (typeof checked !== "number") return checked
  db.prepare(COUNTING).run()
  writeTransfer(db, posting)
  const { wake, balanceEventsWritten } = writeEntries(db, posting)
  writeCounts(db, {
    transactions: posting.transactionWrite === "insert" ? [posting.transaction] : [],
    ...transferCounted(posting, balanceEventsWritten)
  })
  db.prepare(COUNTED).run()
  return { posted: true, refusal: null, availableMinor: checked, wake }
}

const TRANSACTION_COLUMNS = [
  "id",
  "program_id",
  "amount_minor",
  "currency",
  "card_id",
  "decline_reason",
  "mcc",
  "merchant_name",
  "merchant",
  "network_transaction_id",
  "created_at",
  "updated_at",
  "status",
  "authorized_minor",
  "pending_minor",
  "settled_minor",
  "financial_account_id",
  "expires_at",
  "card_events",
  "request_history"
] as const

const INSERT_CARD_TRANSACTION = `INSERT INTO issuing_transactions (${TRANSACTION_COLUMNS.join(", ")})
  VALUES (${TRANSACTION_COLUMNS.map(() => "?").join(", ")})`

const UPDATE_CARD_TRANSACTION = `UPDATE issuing_transactions SET status = ?, amount_minor = ?, decline_reason = ?,
  authorized_minor = ?, pending_minor = ?, settled_minor = ?, expires_at = ?, card_events = ?, request_history = ?, updated_at = ?
  WHERE id = ?`

/**
 * One message of a card transaction (`CardMessagePosting`), in one synchronous call: the checks
 * (card ACTIVE, available funds, the transfer's bounds), then the transaction row, the transfer,
 * the hold's change, the events and the account's balance.updated. Refused: nothing written.
 */
export const postCardMessageSync = (db: SyncConnection, posting: CardMessagePosting): PostingOutcome => {
  let available = 0
  if (posting.activeCardId !== null) {
    const state = db.prepare(CARD_STATE).get(posting.activeCardId)?.state
    if (state !== "ACTIVE")
      return { posted: false, refusal: state === "FROZEN" ? "card_frozen" : "card_closed", availableMinor: 0, wake: false }
  }
  const row = db.prepare(AVAILABLE).get(posting.financialAccountId)
  available = row === undefined ? 0 : Number(row.available)
  if (posting.requireAvailable > 0 && available < posting.requireAvailable)
    return { posted: false, refusal: "insufficient_funds", availableMinor: available, wake: false }
  if (posting.transfer !== null) {
    const checked = checkPosting(db, posting.transfer)
    if (typeof checked !== "number") return checked
  }
  const t = transactionRow(posting.transaction, posting.financialAccountId)
  // The message's list counts in one upsert, as a transfer's (postTransferSync).
  db.prepare(COUNTING).run()
  if (posting.transactionWrite === "insert") db.prepare(INSERT_CARD_TRANSACTION).run(...TRANSACTION_COLUMNS.map((c) => t[c]))
  else
    db.prepare(UPDATE_CARD_TRANSACTION).run(
      t.status,
      t.amount_minor,
      t.decline_reason,
      t.authorized_minor,
      t.pending_minor,
      t.settled_minor,
      t.expires_at,
      t.card_events,
      t.request_history,
      t.updated_at,
      t.id
    )
  let wake = false
  if (posting.transfer !== null) {
    writeTransfer(db, posting.transfer)
    // The transfer's own balance.updated is this message's: written once, after the hold moves.
    wake = writeEntries(db, { ...posting.transfer, balanceEvents: [] }).wake
  }
  if (posting.pendingDelta !== 0) db.prepare(PENDING_CHANGE).run(posting.pendingDelta, t.updated_at, posting.financialAccountId)
  const { events } = posting
  if (events.length > 0) {
    db.prepare(insertEvents(events.length)).run(...events.flatMap((e) => [e.id, e.program_id, e.type, e.created_at, storedEventDataOf(e)]))
    if (db.prepare(fanOutText(events.length)).run(...sqliteFanOutParams(events)).changes > 0) wake = true
  }
  let balanceEventsWritten = 0
  if (posting.balanceEventId !== null) {
    const { queued, written } = writeBalanceEvents(db, t.program_id, t.updated_at, [
      { id: posting.balanceEventId, financial_account_id: posting.financialAccountId }
    ])
    if (queued > 0) wake = true
    balanceEventsWritten = written
  }
  const { transfer } = posting
  writeCounts(db, {
    transactions: posting.transactionWrite === "insert" ? [t] : [],
    ...(transfer === null ? { transfers: [], book_transfers: [], entries: [] } : transferCounted(transfer, 0)),
    events: [...(transfer?.events ?? []), ...events, ...balanceUpdated(t.program_id, t.updated_at, balanceEventsWritten)]
  })
  db.prepare(COUNTED).run()
  return { posted: true, refusal: null, availableMinor: available, wake }
}

/**
 * The SQLite store's LedgerPosting: the synchronous write on the client's one connection. Webhook
 * deliveries it queues are announced to this process's workers by the ledger once it commits.
 */
export const SqliteLedgerPostingLive: Layer.Layer<LedgerPosting, never, SyncSql | SqliteWriterService> = Layer.scoped(
  LedgerPosting,
  Effect.gen(function* () {
    const sync = yield* SyncSql
    const writer = yield* SqliteWriter
    const lane = yield* makeThreadLane(sync, writer, postTransferSync)
    const postHere = (posting: TransferPosting) => sync.run((db) => postTransferSync(db, posting))
    return {
      // A new transfer on its own (outside any transaction: the ledger does not hand it to the write
      // lane when `commitsNewTransfersItself`) goes to the writer thread, written with the lone
      // postings queued meanwhile as one set (docs/ledger.md#coalesced-postings-on-sqlite).
      // Anything else is one synchronous call here.
      postTransfer: (posting) =>
        writer.available && isNewTransfer(posting)
          ? Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (outer) =>
              outer._tag === "None" ? lane.alone(posting) : postHere(posting)
            )
          : postHere(posting),
      // One call and one native savepoint for the lot: a savepoint per transfer inside a batch's
      // own savepoint (group commit) cost more than the writes themselves (measured: 1,770 → 5,000/s
      // at 8 concurrent batches of 100). Refusals write nothing, so they need no savepoint.
      // A batch's new transfers are written set-based (postNewTransfersSync); any other run one posting at a time.
      postTransfers: (postings) =>
        sync.run((db) =>
          postings.every(isNewTransfer)
            ? postNewTransfersSync(db, postings, false)
            : postings.map((posting) => postTransferSync(db, posting))
        ),
      // Inside the caller's transaction: one synchronous call in a savepoint of it. Outside one: its
      // own transaction, on the writer thread when there is one, else BEGIN IMMEDIATE … COMMIT here.
      postNewTransfers: (postings, { allOrNothing }) =>
        !postings.every(isNewTransfer)
          ? Effect.die(notNewTransfers())
          : Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (outer) =>
              outer._tag === "None" && writer.available && postings.length > 0
                ? lane.batch(postings, allOrNothing)
                : sync.run((db) => postNewTransfersSync(db, postings, allOrNothing))
            ),
      commitsNewTransfersItself: writer.available,
      // The write transaction (BEGIN IMMEDIATE) already excludes every other writer.
      lockAccounts: () => Effect.void,
      postCardMessage: (posting) => sync.run((db) => postCardMessageSync(db, posting)),
      releasePending: (accountId, amountMinor, at, event) =>
        sync.run((db) => {
          db.prepare(PENDING_CHANGE).run(-amountMinor, at, accountId)
          return writeBalanceEvents(db, event.program_id, at, [{ id: event.id, financial_account_id: accountId }]).queued > 0
        })
    } satisfies Context.Tag.Service<typeof LedgerPosting>
  })
)
