import {
  type BalanceTotals,
  decidePostings,
  isNewTransfer,
  LedgerPosting,
  notNewTransfers,
  MAX_TOTAL_MINOR,
  type PostingOutcome,
  postingRows,
  postingsToWrite,
  sqliteFanOutParams,
  sqliteFanOutSql,
  type TransferPosting,
  totalsKey
} from "@issuing/core"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql"
import { Cause, Chunk, type Context, Deferred, Effect, Layer, Option, Queue } from "effect"
import { SqliteWriter, type SqliteWriterService } from "./SqliteClient.js"
import type { WriterResult } from "./WriterThread.js"
import { type SyncConnection, SyncSql, type SyncSqlService } from "./SyncSql.js"

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
   to_financial_account_id, status, description, created_at, updated_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

const INSERT_BOOK_TRANSFER = `INSERT INTO issuing_book_transfers
  (id, program_id, transfer_id, transaction_id, amount_minor, currency, posted_at) VALUES (?, ?, ?, ?, ?, ?, ?)`

const UPDATE_TRANSACTION = `UPDATE issuing_transactions SET status = ?, updated_at = ? WHERE id = ?`

// A card authorization's card, read under the write lock a freeze or close also needs.
const CARD_STATE = `SELECT state FROM issuing_cards WHERE id = ?`

const AVAILABLE = `SELECT credits_minor - debits_minor AS available FROM issuing_balances
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

const rows = (count: number, row: string) => Array.from({ length: count }, () => row).join(", ")

/** Statement texts by row count, built once (a transfer always has 4 entries, 4 deltas and 3 events). */
const memo = (build: (count: number) => string) => {
  const texts = new Map<number, string>()
  return (count: number) => {
    let text = texts.get(count)
    if (text === undefined) {
      text = build(count)
      texts.set(count, text)
    }
    return text
  }
}

const insertEntries = memo(
  (count) =>
    `INSERT INTO issuing_book_entries (book_transfer_id, position, financial_account_id, book, entry_type, amount_minor, currency)
   VALUES ${rows(count, "(?, ?, ?, ?, ?, ?, ?)")}`
)

// Balance rows missing for a book are created by the upsert.
const upsertBalances = memo(
  (count) =>
    `INSERT INTO issuing_balances (financial_account_id, book, currency, debits_minor, credits_minor, updated_at)
   VALUES ${rows(count, "(?, ?, ?, ?, ?, ?)")}
   ON CONFLICT (financial_account_id, book) DO UPDATE SET
     debits_minor = issuing_balances.debits_minor + excluded.debits_minor,
     credits_minor = issuing_balances.credits_minor + excluded.credits_minor,
     updated_at = excluded.updated_at`
)

const insertEvents = memo(
  (count) => `INSERT INTO issuing_events (id, program_id, type, created_at, data) VALUES ${rows(count, "(?, ?, ?, ?, ?)")}`
)

const fanOut = memo(sqliteFanOutSql)

/** Writes one transfer with its transaction (per `transactionWrite`), book transfer, entries, balances, events and webhook deliveries. */
export const postTransferSync = (db: SyncConnection, posting: TransferPosting): PostingOutcome => {
  const { bookTransfer, deltas, events, transaction: t, transfer } = posting
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
  db.prepare(insertEntries(bookTransfer.entries.length)).run(
    ...bookTransfer.entries.flatMap((e, position) => [
      bookTransfer.id,
      position,
      e.financial_account_id,
      e.book,
      e.entry_type,
      e.amount.amount,
      e.amount.currency
    ])
  )
  db.prepare(upsertBalances(deltas.length)).run(
    ...deltas.flatMap((d) => [d.financial_account_id, d.book, d.currency, d.debitsMinor, d.creditsMinor, bookTransfer.posted_at])
  )
  let queued = 0
  if (events.length > 0) {
    db.prepare(insertEvents(events.length)).run(
      ...events.flatMap((e) => [e.id, e.program_id, e.type, e.created_at, JSON.stringify(e.data.object)])
    )
    queued = db.prepare(fanOut(events.length)).run(...sqliteFanOutParams(events)).changes
  }
  return { posted: true, refusal: null, availableMinor: available, wake: queued > 0 }
}

/** The largest number of rows one multi-row statement of a batch writes (× at most 12 parameters). */
const MAX_ROWS_PER_STATEMENT = 128

/** The rows of the next statement: the largest power of two not above what is left (so a table has at most 8 statement texts). */
const chunkRows = (left: number) => {
  let size = MAX_ROWS_PER_STATEMENT
  while (size > left) size >>= 1
  return size
}

const multiRow = new Map<string, string>()

/** `INSERT INTO ${into} (columns) VALUES (…), … ${tail}` for `count` rows, built once per shape. */
const insertText = (into: string, columns: ReadonlyArray<string>, count: number, tail: string) => {
  const key = `${into}\u0000${count}`
  let text = multiRow.get(key)
  if (text === undefined) {
    text = `INSERT INTO ${into} (${columns.join(", ")}) VALUES ${rows(count, `(${columns.map(() => "?").join(", ")})`)} ${tail}`
    multiRow.set(key, text)
  }
  return text
}

/** A statement of a batch's write: its text and parameters. */
type BatchStatement = readonly [sql: string, params: Array<unknown>]

/** Adds the statements that insert `list` (objects with the named columns): as few multi-row statements as the chunking allows. */
const insertRows = <R extends object>(
  out: Array<BatchStatement>,
  into: string,
  columns: ReadonlyArray<keyof R & string>,
  list: ReadonlyArray<R>,
  tail = ""
) => {
  for (let start = 0; start < list.length; ) {
    const count = chunkRows(list.length - start)
    const params: Array<unknown> = []
    for (let i = start; i < start + count; i++) for (const column of columns) params.push(list[i]![column])
    out.push([insertText(into, columns, count, tail), params])
    start += count
  }
}

// The running totals of every book of the accounts (a JSON array of ids: one statement text for
// any count), in a fixed order: the writer thread compares them with what the batch was decided over.
const TOTALS_OF = `SELECT financial_account_id AS account, book, debits_minor AS debits, credits_minor AS credits
  FROM issuing_balances WHERE financial_account_id IN (SELECT value FROM json_each(?)) ORDER BY financial_account_id, book`

interface TotalsRow {
  readonly account: string
  readonly book: string
  readonly debits: number
  readonly credits: number
}

/** The accounts postings touch, each once. */
const accountsOf = (postings: ReadonlyArray<TransferPosting>) => [
  ...new Set(postings.flatMap(({ deltas }) => deltas.map((d) => d.financial_account_id)))
]

/**
 * A batch's new transfers (no card, each its own new transaction), set-based like PostgreSQL's
 * `issuing_write_postings`: the postings decided in order in the process over the running totals
 * of the balance rows they touch (`decidePostings`, the same checks as `postTransferSync`), and
 * the rows of the ones that post as one multi-row statement per table and chunk, the balances
 * summed per row first. `fanOuts`: the statements whose changed rows are queued deliveries.
 */
const planNewTransfers = (
  totals: Map<string, BalanceTotals>,
  postings: ReadonlyArray<TransferPosting>,
  allOrNothing: boolean,
  statements: Array<BatchStatement>
) => {
  // decidePostings moves the totals by every posting it lets through; all-or-nothing, those moves
  // stand only if every one is (else nothing is written): decide over a copy then.
  const decided = allOrNothing ? new Map([...totals].map(([key, row]) => [key, { ...row }])) : totals
  const outcomes = decidePostings(postings, decided)
  const posted = postingsToWrite(postings, outcomes, allOrNothing)
  const fanOuts: Array<number> = []
  if (posted.length === 0) return { outcomes, fanOuts, written: [] }
  if (decided !== totals) for (const [key, row] of decided) totals.set(key, row)
  const table = postingRows(posted)
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
      "created_at",
      "updated_at"
    ],
    table.transfers.map((row) => ({ ...row, updated_at: row.created_at }))
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
    ["book_transfer_id", "position", "financial_account_id", "book", "entry_type", "amount_minor", "currency"],
    table.entries
  )
  insertRows(
    statements,
    "issuing_balances",
    ["financial_account_id", "book", "currency", "debits_minor", "credits_minor", "updated_at"],
    table.balances,
    `ON CONFLICT (financial_account_id, book) DO UPDATE SET
       debits_minor = issuing_balances.debits_minor + excluded.debits_minor,
       credits_minor = issuing_balances.credits_minor + excluded.credits_minor,
       updated_at = excluded.updated_at`
  )
  insertRows(statements, "issuing_events", ["id", "program_id", "type", "created_at", "data"], table.events)
  // The webhook deliveries of the events, one fan-out statement per chunk.
  const events = posted.flatMap((p) => p.events)
  for (let start = 0; start < events.length; ) {
    const count = chunkRows(events.length - start)
    fanOuts.push(statements.length)
    statements.push([fanOut(count), sqliteFanOutParams(events.slice(start, start + count))])
    start += count
  }
  return { outcomes, fanOuts, written: table.balances.map((row) => ({ account: row.financial_account_id, book: row.book })) }
}

/** The running totals of TOTALS_OF's rows, by `totalsKey`. */
const totalsOf = (rows: ReadonlyArray<TotalsRow>) => {
  const totals = new Map<string, BalanceTotals>()
  for (const row of rows) {
    // SQLite integers are 64-bit; every total is kept at most 2^53 − 1, so the number is exact.
    totals.set(totalsKey(row.account, row.book), { debits: BigInt(row.debits), credits: BigInt(row.credits) })
  }
  return totals
}

/** The outcomes, the posted ones marked to wake this process's webhook workers when deliveries were queued. */
const withWake = (outcomes: ReadonlyArray<PostingOutcome>, changes: ReadonlyArray<number>, fanOuts: ReadonlyArray<number>) =>
  fanOuts.some((index) => changes[index]! > 0)
    ? outcomes.map((outcome) => (outcome.posted ? { ...outcome, wake: true } : outcome))
    : outcomes

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
  const totals = totalsOf(db.prepare(TOTALS_OF).all(JSON.stringify(accountsOf(postings))))
  const { fanOuts, outcomes } = planNewTransfers(totals, postings, allOrNothing, statements)
  return withWake(
    outcomes,
    statements.map(([sql, params]) => db.prepare(sql).run(...params).changes),
    fanOuts
  )
}

interface ThreadRequest {
  readonly postings: ReadonlyArray<TransferPosting>
  readonly allOrNothing: boolean
  readonly done: Deferred.Deferred<ReadonlyArray<PostingOutcome>, SqlError.SqlError>
}

/** Most batches one writer-thread job carries. */
const MAX_BATCHES_PER_JOB = 32
/** Jobs the thread may have queued at once: the next is planned while one is written. */
const MAX_JOBS_IN_FLIGHT = 2

/**
 * The balance rows as they will stand once the jobs sent so far commit (existing rows only, by
 * `totalsKey`), for the accounts read since the gate was taken.
 */
interface Predicted {
  readonly accounts: Set<string>
  readonly rows: Map<string, BalanceTotals & { readonly account: string; readonly book: string }>
}

/** TOTALS_OF's rows for `accounts` as predicted, in its order: what the thread must read back. */
const expectedRows = (predicted: Predicted, accounts: ReadonlyArray<string>): ReadonlyArray<TotalsRow> => {
  const wanted = new Set(accounts)
  return [...predicted.rows.values()]
    .filter((row) => wanted.has(row.account))
    .sort((a, b) => (a.account === b.account ? (a.book < b.book ? -1 : 1) : a.account < b.account ? -1 : 1))
    .map((row) => ({ account: row.account, book: row.book, debits: Number(row.debits), credits: Number(row.credits) }))
}

/** True when a job failed because another process held the write lock past the busy timeout. */
const timedOut = (cause: Cause.Cause<SqlError.SqlError>) =>
  Option.exists(Cause.failureOption(cause), (error) => (error.cause as { code?: unknown } | undefined)?.code === "SQLITE_BUSY_TIMEOUT")

/**
 * Batches of new transfers outside any transaction, on the writer thread
 * (docs/architecture.md#the-sqlite-writer-thread). The batches that queued meanwhile go together
 * as ONE job (one commit). Holding the process's write gate (no write transaction of this process
 * on the main connection runs meanwhile), the lane reads the balance rows a job touches on the main
 * connection — or takes them as the jobs already sent will leave them — plans the job over them,
 * and sends its statements to the thread, then plans the next job while the thread writes that
 * one. The thread runs a job only if, under its write lock, the rows read back exactly as the job
 * was planned over; otherwise (another process wrote, or an earlier job failed) it writes nothing,
 * and each batch of the job runs again alone on the main connection once the gate is let go.
 */
const makeThreadLane = (sync: SyncSqlService, writer: SqliteWriterService) =>
  Effect.gen(function* () {
    const queue = yield* Queue.unbounded<ThreadRequest>()
    /** Completed by every new batch: wakes the lane when it waits for either a batch or a job's answer. */
    let arrival = yield* Deferred.make<void>()

    /** Plans a job over the predicted rows (reading the accounts it has not seen yet) and moves them by what it writes. */
    const planJob = (requests: ReadonlyArray<ThreadRequest>, predicted: Predicted) =>
      Effect.gen(function* () {
        const accounts = accountsOf(requests.flatMap((request) => request.postings))
        const unseen = accounts.filter((account) => !predicted.accounts.has(account))
        if (unseen.length > 0) {
          const rows = yield* sync.read((db) => db.prepare(TOTALS_OF).all(JSON.stringify(unseen)) as ReadonlyArray<TotalsRow>)
          for (const row of rows) {
            predicted.rows.set(totalsKey(row.account, row.book), {
              account: row.account,
              book: row.book,
              debits: BigInt(row.debits),
              credits: BigInt(row.credits)
            })
          }
          for (const account of unseen) predicted.accounts.add(account)
        }
        const expected = expectedRows(predicted, accounts)
        const totals = totalsOf(expected)
        const statements: Array<BatchStatement> = []
        const plans = requests.map((request) => planNewTransfers(totals, request.postings, request.allOrNothing, statements))
        for (const { account, book } of plans.flatMap((plan) => plan.written)) {
          predicted.rows.set(totalsKey(account, book), { account, book, ...totals.get(totalsKey(account, book))! })
        }
        const job = { guard: { sql: TOTALS_OF, params: [JSON.stringify(accounts)], expected: JSON.stringify(expected) }, statements }
        return { plans, job }
      })

    /** One hold of the gate: jobs planned and sent while batches keep coming; the batches to run alone after it. */
    const hold = (first: ReadonlyArray<ThreadRequest>, taken: Array<ThreadRequest>) =>
      Effect.gen(function* () {
        const predicted: Predicted = { accounts: new Set(), rows: new Map() }
        const inFlight: Array<{
          requests: ReadonlyArray<ThreadRequest>
          plans: ReadonlyArray<ReturnType<typeof planNewTransfers>>
          answer: Effect.Effect<WriterResult, SqlError.SqlError>
        }> = []
        const alone: Array<ThreadRequest> = []
        let broken = false
        /** Waits for the oldest job in flight and answers its batches (or sets them aside to run alone). */
        const settleOldest = Effect.gen(function* () {
          const { answer, plans, requests } = inFlight.shift()!
          const result = yield* Effect.exit(answer)
          if (result._tag === "Success" && result.value._tag === "Committed") {
            const { changes } = result.value
            for (const [i, request] of requests.entries()) {
              yield* Deferred.succeed(request.done, withWake(plans[i]!.outcomes, changes, plans[i]!.fanOuts))
            }
            return
          }
          // The predictions no longer hold: no more jobs in this hold.
          broken = true
          // Another process held the write lock past the busy timeout: that is these batches'
          // answer (running each again would wait a whole timeout per batch). So is any failure of
          // a job of one batch; a failed job of several is run again batch by batch, so that one
          // batch's failure is not its neighbours'.
          if (result._tag === "Failure" && (requests.length === 1 || timedOut(result.cause))) {
            for (const request of requests) yield* Deferred.failCause(request.done, result.cause)
            return
          }
          alone.push(...requests)
        })
        let requests: ReadonlyArray<ThreadRequest> = first
        for (;;) {
          if (requests.length > 0) {
            const planned = yield* Effect.either(planJob(requests, predicted))
            if (planned._tag === "Left") {
              // A failed read: these batches get the failure; the jobs in flight are still answered.
              for (const request of requests) yield* Deferred.fail(request.done, planned.left)
              broken = true
            } else {
              inFlight.push({ requests, plans: planned.right.plans, answer: yield* writer.send(planned.right.job) })
            }
          }
          while (inFlight.length >= MAX_JOBS_IN_FLIGHT) yield* settleOldest
          // Writers of the main connection are waiting: let the gate go to them once the thread is done.
          if (broken || writer.othersWaiting()) break
          requests = Chunk.toReadonlyArray(yield* Queue.takeUpTo(queue, MAX_BATCHES_PER_JOB))
          taken.push(...requests)
          if (requests.length > 0) continue
          if (inFlight.length === 0) break
          // One job in flight and nothing queued: plan the next batch as soon as one comes, or settle
          // the job when its answer comes first. (Waiting on a signal, not on Queue.take: a take that
          // loses the race could drop the batch it took.)
          arrival = yield* Deferred.make<void>()
          if (yield* Queue.isEmpty(queue)) yield* Effect.race(Deferred.await(arrival), Effect.exit(inFlight[0]!.answer))
          requests = Chunk.toReadonlyArray(yield* Queue.takeUpTo(queue, MAX_BATCHES_PER_JOB))
          taken.push(...requests)
          if (requests.length === 0) yield* settleOldest
        }
        while (inFlight.length > 0) yield* settleOldest
        return alone
      })

    const runAlone = (request: ThreadRequest) =>
      Effect.flatMap(Effect.exit(sync.run((db) => postNewTransfersSync(db, request.postings, request.allOrNothing))), (exit) =>
        Deferred.done(request.done, exit)
      )

    yield* Queue.take(queue).pipe(
      Effect.flatMap((first) => Effect.map(Queue.takeUpTo(queue, MAX_BATCHES_PER_JOB - 1), (rest) => [first, ...rest])),
      Effect.flatMap((requests) => {
        const taken = [...requests]
        return writer.withGate(hold(requests, taken)).pipe(
          Effect.flatMap((alone) => Effect.forEach(alone, runAlone, { discard: true })),
          // The gate was not had within the busy timeout: these batches get that answer.
          Effect.catchAll((error) => Effect.forEach(requests, (request) => Deferred.fail(request.done, error), { discard: true })),
          // A defect (a bug) fails the batches of this hold still unanswered, and the lane goes on.
          Effect.catchAllCause((cause) => Effect.forEach(taken, (request) => Deferred.failCause(request.done, cause), { discard: true }))
        )
      }),
      Effect.forever,
      Effect.forkScoped
    )
    return (postings: ReadonlyArray<TransferPosting>, allOrNothing: boolean) =>
      Effect.flatMap(Deferred.make<ReadonlyArray<PostingOutcome>, SqlError.SqlError>(), (done) =>
        Queue.offer(queue, { postings, allOrNothing, done }).pipe(
          Effect.zipRight(Effect.suspend(() => Deferred.succeed(arrival, undefined))),
          Effect.zipRight(Deferred.await(done))
        )
      )
  })

/**
 * The SQLite store's LedgerPosting: the synchronous write on the client's one connection. Webhook
 * deliveries it queues are announced to this process's workers by the ledger once it commits.
 */
export const SqliteLedgerPostingLive: Layer.Layer<LedgerPosting, never, SyncSql | SqliteWriterService> = Layer.scoped(
  LedgerPosting,
  Effect.gen(function* () {
    const sync = yield* SyncSql
    const writer = yield* SqliteWriter
    const onThread = yield* makeThreadLane(sync, writer)
    return {
      postTransfer: (posting) => sync.run((db) => postTransferSync(db, posting)),
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
                ? onThread(postings, allOrNothing)
                : sync.run((db) => postNewTransfersSync(db, postings, allOrNothing))
            ),
      commitsNewTransfersItself: writer.available,
      // The write transaction (BEGIN IMMEDIATE) already excludes every other writer.
      lockAccounts: () => Effect.void
    } satisfies Context.Tag.Service<typeof LedgerPosting>
  })
)
