import { describe, expect, it } from "@effect/vitest"
import { balanceDeltas, newEvent, sqliteFanOutSql, type TransferPosting, transferEntries } from "@issuing/core"
import { Deferred, Effect, Fiber, Option } from "effect"
import { makeLaneInbox } from "../src/LaneInbox.js"
import { INSERT_EACH_BALANCE_EVENT } from "../src/BalanceEvents.js"
import { plannedOutcomes, TOTALS_OF, type TotalsRow } from "../src/NewTransfers.js"
import { accountsToRead, emptyPrediction, type LaneBatch, planJob, type Prediction } from "../src/ThreadPlan.js"

// The writer-thread lane (docs/architecture.md#the-sqlite-writer-thread) in its two parts that
// need no database: the pure planning of a job over predicted balance rows, and the inbox's wait
// for "a batch or a job's answer". The lane end to end runs in test/ledger/batch.test.ts.

const NOW = "2026-01-01T00:00:00.000Z"
let sequence = 0

/** A new transfer of `amount` USD from `from` to `to` (a wallet's when `checkFunds`), with its one event. */
const transfer = (from: string, to: string, amount: number, checkFunds = true): TransferPosting => {
  const id = `${++sequence}`
  const entries = transferEntries(from, to, amount, "USD")
  const transaction = {
    id: `txn_${id}`,
    object: "transaction",
    program_id: "prog",
    status: "SETTLED",
    amount,
    currency: "USD",
    card_id: null,
    decline_reason: null,
    mcc: null,
    merchant_name: null,
    authorized_amount: null,
    pending_amount: null,
    settled_amount: null,
    disputed_amount: null,
    expires_at: null,
    card_events: [],
    request_history: [],
    created_at: NOW,
    updated_at: NOW
  } as const
  const posted = {
    id: `tr_${id}`,
    object: "transfer",
    program_id: "prog",
    transaction_id: transaction.id,
    payment_rail: "book",
    amount,
    currency: "USD",
    from_financial_account_id: from,
    to_financial_account_id: to,
    status: "SETTLED",
    description: null,
    created_at: NOW,
    updated_at: NOW
  } as const
  return {
    transaction,
    transactionWrite: "insert",
    transfer: posted,
    bookTransfer: {
      id: `bt_${id}`,
      object: "book_transfer",
      transfer_id: posted.id,
      transaction_id: transaction.id,
      amount: { amount, currency: "USD" },
      financial_account_ids: [from, to],
      entries,
      posted_at: NOW
    },
    deltas: balanceDeltas(entries),
    checkFunds,
    activeCardId: null,
    events: [newEvent("prog", "transfer.created", NOW, posted)],
    balanceEvents: []
  }
}

const batch = (postings: ReadonlyArray<TransferPosting>, allOrNothing = false): LaneBatch => ({ postings, allOrNothing, alone: false })

/** A lone posting (a single POST /v1/transfers) with a balance.updated for its source wallet. */
const alone = (posting: TransferPosting): LaneBatch => ({
  postings: [
    { ...posting, balanceEvents: [{ id: `bal_${posting.transfer.id}`, financial_account_id: posting.transfer.from_financial_account_id! }] }
  ],
  allOrNothing: true,
  alone: true
})

/** The balance rows as TOTALS_OF reads them: wallet `a` holds 1,000 (funded from settlement `s`). */
const READ: ReadonlyArray<TotalsRow> = [
  { account: "a", book: "cash", debits: 1000, credits: 0, pending: 0 },
  { account: "a", book: "principal", debits: 0, credits: 1000, pending: 0 },
  { account: "s", book: "cash", debits: 0, credits: 1000, pending: 0 },
  { account: "s", book: "principal", debits: 1000, credits: 0, pending: 0 }
]

/** The predicted rows as [account, book, debits, credits], in lock order. */
const rowsOf = (prediction: Prediction) =>
  [...prediction.rows.values()]
    .map((row) => [row.financial_account_id, row.book, Number(row.debits), Number(row.credits)])
    .sort((x, y) => (`${x[0]} ${x[1]}` < `${y[0]} ${y[1]}` ? -1 : 1))

describe("the writer-thread lane's planning", () => {
  it("asks to read only the accounts it does not predict yet", () => {
    const first = [batch([transfer("a", "b", 300)])]
    expect(accountsToRead(emptyPrediction, first)).toEqual(["a", "b"])
    const { next } = planJob(emptyPrediction, first, READ)
    expect(accountsToRead(next, [batch([transfer("b", "c", 100), transfer("a", "c", 100)])])).toEqual(["c"])
  })

  it("guards a job with the rows it was decided over, in TOTALS_OF's order, and predicts the rows it leaves", () => {
    // Rows read in another order: the guard must list them as the thread's read does.
    const { job, next, plans } = planJob(emptyPrediction, [batch([transfer("a", "b", 300)])], [...READ].reverse())
    expect(job.guard).toEqual({
      sql: TOTALS_OF,
      params: [JSON.stringify(["a", "b"])],
      expected: JSON.stringify(READ.filter((row) => row.account === "a"))
    })
    expect(plans[0]!.outcomes).toEqual([{ posted: true, refusal: null, availableMinor: 1000, wake: false }])
    // a's books moved; b's rows, new, are predicted as the upsert creates them; s, not in the job, as read.
    expect(rowsOf(next)).toEqual([
      ["a", "cash", 1000, 300],
      ["a", "principal", 300, 1000],
      ["b", "cash", 300, 0],
      ["b", "principal", 0, 300],
      ["s", "cash", 0, 1000],
      ["s", "principal", 1000, 0]
    ])
    // The rows, counted in one upsert per key (in chunks) while their triggers skip (migration 0780);
    // the last is the webhook fan-out of the transfer's one event, whose changed rows tell whether to wake.
    const heads = job.statements.map(([sql]) => sql.split(" (")[0])
    expect(heads.filter((head, i) => head !== heads[i - 1])).toEqual([
      "INSERT INTO issuing_posting_counted",
      "INSERT INTO issuing_transactions",
      "INSERT INTO issuing_transfers",
      "INSERT INTO issuing_book_transfers",
      "INSERT INTO issuing_book_entries",
      "INSERT INTO issuing_balances",
      "INSERT INTO issuing_events",
      "INSERT INTO issuing_list_counts",
      "DELETE FROM issuing_posting_counted",
      sqliteFanOutSql(1).split(" (")[0]
    ])
    expect(job.statements.at(-1)![0]).toBe(sqliteFanOutSql(1))
    expect(plans[0]!.fanOuts).toEqual([job.statements.length - 1])
  })

  it("decides the next job over the prediction, not over what was read, and guards it with the predicted rows", () => {
    const first = planJob(emptyPrediction, [batch([transfer("a", "b", 300)])], READ)
    // 700 left of a's 1,000: 800 is refused although the database (not yet written) still says 1,000.
    const second = planJob(first.next, [batch([transfer("a", "b", 800)]), batch([transfer("a", "b", 700)])], [])
    expect(second.plans.map((plan) => plan.outcomes[0]!.refusal)).toEqual(["insufficient_funds", null])
    expect(second.plans.map((plan) => plan.outcomes[0]!.availableMinor)).toEqual([700, 700])
    expect(JSON.parse(second.job.guard.expected)).toEqual([
      { account: "a", book: "cash", debits: 1000, credits: 300, pending: 0 },
      { account: "a", book: "principal", debits: 300, credits: 1000, pending: 0 },
      { account: "b", book: "cash", debits: 300, credits: 0, pending: 0 },
      { account: "b", book: "principal", debits: 0, credits: 300, pending: 0 }
    ])
    expect(rowsOf(second.next).slice(0, 2)).toEqual([
      ["a", "cash", 1000, 1000],
      ["a", "principal", 1000, 1000]
    ])
  })

  it("writes nothing and moves nothing for an all-or-nothing batch with a refusal, and leaves its input prediction as it was", () => {
    const first = planJob(emptyPrediction, [batch([transfer("a", "b", 300)])], READ)
    const before = rowsOf(first.next)
    const second = planJob(first.next, [batch([transfer("a", "b", 600), transfer("a", "b", 200)], true)], [])
    expect(second.plans[0]!.outcomes.map((outcome) => outcome.posted)).toEqual([true, false])
    expect(second.job.statements).toEqual([])
    expect(rowsOf(second.next)).toEqual(before)
    // A later batch of the same job sees the rows unmoved too.
    const third = planJob(
      first.next,
      [batch([transfer("a", "b", 600), transfer("a", "b", 200)], true), batch([transfer("a", "b", 700)])],
      []
    )
    expect(third.plans[1]!.outcomes[0]!.posted).toBe(true)
    expect(rowsOf(first.next)).toEqual(before)
  })

  it("writes lone postings next to each other as one set, each decided alone in order, each with its own balance.updated", () => {
    const { job, plans } = planJob(
      emptyPrediction,
      [alone(transfer("a", "b", 600)), alone(transfer("a", "b", 500)), alone(transfer("a", "b", 400)), batch([transfer("a", "b", 1)])],
      READ
    )
    // Each lone posting gets its own outcome: the second is refused over what the first left (400), the third posts.
    expect(plans.map((plan) => plan.outcomes.map((outcome) => [outcome.refusal, outcome.availableMinor]))).toEqual([
      [[null, 1000]],
      [["insufficient_funds", 400]],
      [[null, 400]],
      [["insufficient_funds", 0]]
    ])
    // One statement per table for the lone postings' set (then the batch request's own plan, which writes nothing).
    const heads = job.statements.map(([sql]) => sql.split(" (")[0])
    expect(heads.filter((head) => head === "INSERT INTO issuing_transfers")).toHaveLength(1)
    expect(job.statements.find(([sql]) => sql.startsWith("INSERT INTO issuing_transfers"))![1]).toHaveLength(2 * 13)
    // Each posted one's balance.updated, the account as THAT posting left it: the first's less what the third adds after it.
    const events = job.statements.filter(([sql]) => sql === INSERT_EACH_BALANCE_EVENT)
    expect(events).toHaveLength(1)
    expect(JSON.parse(events[0]![1][0] as string)).toEqual([
      [`bal_tr_${sequence - 3}`, NOW, "a", 400, 0, 0],
      [`bal_tr_${sequence - 1}`, NOW, "a", 0, 0, 0]
    ])
  })

  it("marks a plan's posted outcomes to wake the webhook workers only when its fan-out queued deliveries", () => {
    const { job, plans } = planJob(emptyPrediction, [batch([transfer("a", "b", 300), transfer("a", "b", 5000)])], READ)
    const none = job.statements.map(() => 1)
    none[plans[0]!.fanOuts[0]!] = 0
    expect(plannedOutcomes(plans[0]!, none).map((outcome) => outcome.wake)).toEqual([false, false])
    expect(
      plannedOutcomes(
        plans[0]!,
        job.statements.map(() => 1)
      ).map((outcome) => outcome.wake)
    ).toEqual([true, false])
  })
})

describe("the writer-thread lane's inbox", () => {
  it.effect("ends a wait on a job's answer when a batch comes first, and leaves the batch queued for the lane", () =>
    Effect.gen(function* () {
      const inbox = yield* makeLaneInbox<string>(32)
      const answer = yield* Deferred.make<void>()
      const wait = yield* Effect.fork(inbox.awaitItemOr(Deferred.await(answer)))
      yield* Effect.yieldNow()
      expect(Option.isNone(yield* Fiber.poll(wait))).toBe(true)
      yield* inbox.offer("batch")
      yield* Fiber.join(wait)
      expect(yield* inbox.takeQueued).toEqual(["batch"])
    })
  )

  it.effect("does not lose a batch that comes on the same tick as the answer it raced (the lane's wait never takes from the queue)", () =>
    Effect.gen(function* () {
      const inbox = yield* makeLaneInbox<string>(32)
      const answer = yield* Deferred.make<void>()
      const wait = yield* Effect.fork(inbox.awaitItemOr(Deferred.await(answer)))
      yield* Effect.yieldNow()
      // The answer wins the race, and the batch is offered before the waiting fiber resumes: a
      // Queue.take raced against the answer would be handed the batch and then interrupted.
      yield* Effect.zipRight(Deferred.succeed(answer, undefined), inbox.offer("batch"))
      yield* Fiber.join(wait)
      expect(yield* inbox.takeQueued).toEqual(["batch"])
    })
  )

  it.effect("is not woken by the ring of a batch already taken", () =>
    Effect.gen(function* () {
      const inbox = yield* makeLaneInbox<string>(32)
      yield* inbox.offer("taken before the wait")
      expect(yield* inbox.takeQueued).toEqual(["taken before the wait"])
      const answer = yield* Deferred.make<void>()
      const wait = yield* Effect.fork(inbox.awaitItemOr(Deferred.await(answer)))
      for (let i = 0; i < 5; i++) yield* Effect.yieldNow()
      expect(Option.isNone(yield* Fiber.poll(wait))).toBe(true)
      yield* Deferred.succeed(answer, undefined)
      yield* Fiber.join(wait)
      expect(yield* inbox.takeQueued).toEqual([])
    })
  )

  it.effect("returns at once when a batch is already queued, and takes at most its bound", () =>
    Effect.gen(function* () {
      const inbox = yield* makeLaneInbox<number>(2)
      for (const n of [1, 2, 3]) yield* inbox.offer(n)
      yield* inbox.awaitItemOr(Effect.never)
      expect(yield* inbox.takeQueued).toEqual([1, 2])
      expect(yield* inbox.takeFirst).toEqual([3])
    })
  )
})
