import {
  type BalanceTotals,
  balanceRowKey,
  countRows,
  decidePostings,
  type PostingOutcome,
  postingRows,
  postingsToWrite,
  sqliteFanOutParams,
  type TransferPosting,
  withWake
} from "@issuing/core"
import { balanceEventsParam, eachBalanceEventParam, INSERT_BALANCE_EVENTS, INSERT_EACH_BALANCE_EVENT } from "./BalanceEvents.js"
import { type BatchStatement, chunkRows, fanOutText, insertRows } from "./MultiRowSql.js"
import { COUNT_UPSERT, COUNT_WRITTEN_EVENTS, COUNTED, COUNTING } from "./PostingCounts.js"
import type { SyncConnection } from "./SyncSql.js"

/**
 * A batch's new transfers (no card, each its own new transaction), set-based like PostgreSQL's
 * `issuing_write_postings`: the postings decided in order in the process over the running totals
 * of the balance rows they touch (`decidePostings`, the same checks as `postTransferSync`), and
 * the rows of the ones that post written as one multi-row statement per table and chunk, the
 * balances summed per row first. Written here on the main connection, or planned here and written
 * by the writer thread (ThreadLane.ts).
 */

/**
 * The running totals of every book of the accounts (a JSON array of ids: one statement text for
 * any count), in the (account, book) lock order (`balanceRowOrder`): the writer thread compares
 * them with what the batch was decided over.
 */
export const TOTALS_OF = `SELECT financial_account_id AS account, book, debits_minor AS debits, credits_minor AS credits,
  pending_minor AS pending FROM issuing_balances WHERE financial_account_id IN (SELECT value FROM json_each(?)) ORDER BY financial_account_id, book`

/** A row of TOTALS_OF. */
export interface TotalsRow {
  readonly account: string
  readonly book: string
  readonly debits: number
  readonly credits: number
  readonly pending: number
}

/** The ids of the accounts whose balance rows the postings move, each once: TOTALS_OF's parameter. */
export const touchedAccountIds = (postings: ReadonlyArray<TransferPosting>): ReadonlyArray<string> => [
  ...new Set(postings.flatMap(({ deltas }) => deltas.map((d) => d.financial_account_id)))
]

/** The running totals of TOTALS_OF's rows, by `balanceRowKey`. */
export const totalsOf = (rows: ReadonlyArray<TotalsRow>) => {
  const totals = new Map<string, BalanceTotals>()
  for (const row of rows) {
    // SQLite integers are 64-bit; every total is kept at most 2^53 − 1, so the number is exact.
    totals.set(balanceRowKey(row.account, row.book), {
      debits: BigInt(row.debits),
      credits: BigInt(row.credits),
      pending: BigInt(row.pending)
    })
  }
  return totals
}

/** What a batch's plan decided and which of its statements tell whether deliveries were queued. */
export interface NewTransfersPlan {
  readonly outcomes: ReadonlyArray<PostingOutcome>
  /** Indexes (in the statements) of the fan-outs: their changed rows are queued deliveries. */
  readonly fanOuts: ReadonlyArray<number>
  /** The balance rows the plan writes (summed per row), in lock order. */
  readonly written: ReadonlyArray<{ readonly financial_account_id: string; readonly book: string }>
}

const BALANCE_UPSERT = `ON CONFLICT (financial_account_id, book) DO UPDATE SET
       debits_minor = issuing_balances.debits_minor + excluded.debits_minor,
       credits_minor = issuing_balances.credits_minor + excluded.credits_minor,
       pending_minor = issuing_balances.pending_minor + excluded.pending_minor,
       updated_at = excluded.updated_at`

/** Adds the statements that write the rows of the postings that post (`postingRows`), one multi-row insert per table and chunk. */
const addRowStatements = (table: ReturnType<typeof postingRows>, statements: Array<BatchStatement>) => {
  insertRows(
    statements,
    "issuing_transactions",
    ["id", "program_id", "status", "amount_minor", "currency", "card_id", "mcc", "merchant_name", "created_at", "updated_at"],
    table.transactions
  )
  insertRows(
    statements,
    "issuing_transfers",
    [
      "id",
      "program_id",
      "transaction_id",
      "payment_rail",
      "amount_minor",
      "currency",
      "from_financial_account_id",
      "to_financial_account_id",
      "status",
      "description",
      "metadata",
      "created_at",
      ["updated_at", "created_at"]
    ],
    table.transfers
  )
  insertRows(
    statements,
    "issuing_book_transfers",
    ["id", "program_id", "transfer_id", "transaction_id", "amount_minor", "currency", "posted_at"],
    table.book_transfers
  )
  insertRows(
    statements,
    "issuing_book_entries",
    ["book_transfer_id", "position", "financial_account_id", "book", "entry_type", "amount_minor", "currency", "posted_at"],
    table.entries
  )
  insertRows(
    statements,
    "issuing_balances",
    ["financial_account_id", "book", "currency", "debits_minor", "credits_minor", "pending_minor", "updated_at"],
    table.balances,
    BALANCE_UPSERT
  )
  insertRows(statements, "issuing_events", ["id", "program_id", "type", "created_at", "data"], table.events)
}

/** Adds the webhook deliveries of the events, one fan-out statement per chunk; returns their indexes. */
const addFanOuts = (events: ReadonlyArray<TransferPosting["events"][number]>, statements: Array<BatchStatement>) => {
  const fanOuts: Array<number> = []
  for (let start = 0; start < events.length; ) {
    const count = chunkRows(events.length - start)
    fanOuts.push(statements.length)
    statements.push([fanOutText(count), sqliteFanOutParams(events.slice(start, start + count))])
    start += count
  }
  return fanOuts
}

/**
 * Decides a batch over `totals` (moving them by the postings that post) and adds the statements
 * that write it to `statements`. `balanceEvents`: "per batch", one `balance.updated` per account
 * with the account as the whole batch leaves it (a batch request's); "per posting", each posting's
 * own, the account as that posting left it (lone postings written together,
 * docs/ledger.md#coalesced-postings-on-sqlite).
 */
export const planNewTransfers = (
  totals: Map<string, BalanceTotals>,
  postings: ReadonlyArray<TransferPosting>,
  allOrNothing: boolean,
  statements: Array<BatchStatement>,
  balanceEvents: "per batch" | "per posting" = "per batch"
): NewTransfersPlan => {
  // decidePostings moves the totals by every posting it lets through; all-or-nothing, those moves
  // stand only if every one is (else nothing is written): decide over a copy then.
  const decided = allOrNothing ? new Map([...totals].map(([key, row]) => [key, { ...row }])) : totals
  const outcomes = decidePostings(postings, decided)
  const posted = postingsToWrite(postings, outcomes, allOrNothing)
  if (posted.length === 0) return { outcomes, fanOuts: [], written: [] }
  if (decided !== totals) for (const [key, row] of decided) totals.set(key, row)
  const table = postingRows(posted, balanceEvents)
  // The rows' counts in one upsert per key, their triggers skipping meanwhile (migration 0780).
  statements.push([COUNTING, []])
  addRowStatements(table, statements)
  insertRows(statements, "issuing_list_counts", ["list", "program_id", "key", "shard", "n"], countRows(table), COUNT_UPSERT)
  // The balance.updated events (after the balances' upsert), in one statement: one per wallet account
  // as the batch leaves it, or one per posting and wallet account as that posting left it; then
  // their counts, read back by id (the events written), before the triggers count again.
  if (table.balance_events.length > 0) {
    const param = balanceEvents === "per batch" ? balanceEventsParam(table.balance_events) : eachBalanceEventParam(table.balance_events)
    statements.push([balanceEvents === "per batch" ? INSERT_BALANCE_EVENTS : INSERT_EACH_BALANCE_EVENT, [param]])
    statements.push([COUNT_WRITTEN_EVENTS, [param]])
  }
  statements.push([COUNTED, []])
  // The deliveries of the events, then of the balance.updated, in that order as before.
  const fanOuts = addFanOuts(
    posted.flatMap((p) => p.events),
    statements
  )
  fanOuts.push(
    ...addFanOuts(
      table.balance_events.map((e) => ({
        id: e.id,
        object: "event" as const,
        program_id: e.program_id,
        tags: [],
        type: "balance.updated" as const,
        created_at: e.created_at,
        data: { object: null }
      })),
      statements
    )
  )
  return { outcomes, fanOuts, written: table.balances }
}

/** The plan's outcomes once its statements ran (`changes`: each one's changed rows). */
export const plannedOutcomes = (plan: NewTransfersPlan, changes: ReadonlyArray<number>) =>
  withWake(
    plan.outcomes,
    plan.fanOuts.some((index) => changes[index]! > 0)
  )

/**
 * A batch's new transfers written on the connection of the current transaction: the balance rows
 * they touch read under its write lock (so current), then `planNewTransfers`' statements run.
 */
export const postNewTransfersSync = (
  db: SyncConnection,
  postings: ReadonlyArray<TransferPosting>,
  allOrNothing: boolean
): ReadonlyArray<PostingOutcome> => {
  const statements: Array<BatchStatement> = []
  const totals = totalsOf(db.prepare(TOTALS_OF).all(JSON.stringify(touchedAccountIds(postings))))
  const plan = planNewTransfers(totals, postings, allOrNothing, statements)
  return plannedOutcomes(
    plan,
    statements.map(([sql, params]) => db.prepare(sql).run(...params).changes)
  )
}
