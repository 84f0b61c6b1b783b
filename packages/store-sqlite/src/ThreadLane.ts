import type { SqlError } from "@effect/sql"
import { type PostingOutcome, sqlErrorCode, type TransferPosting } from "@issuing/core"
import { Cause, Deferred, Effect, Option } from "effect"
import { type LaneInbox, makeLaneInbox } from "./LaneInbox.js"
import { type NewTransfersPlan, plannedOutcomes, postNewTransfersSync, TOTALS_OF, type TotalsRow } from "./NewTransfers.js"
import type { SqliteWriterService } from "./SqliteClient.js"
import type { SyncConnection } from "./SyncSql.js"
import type { SyncSqlService } from "./SyncSql.js"
import { accountsToRead, emptyPrediction, type LaneBatch, type Prediction, planJob } from "./ThreadPlan.js"
import type { WriterResult } from "./WriterThread.js"

/**
 * Batches of new transfers outside any transaction, and lone new transfers (single requests',
 * docs/ledger.md#coalesced-postings-on-sqlite), on the writer thread
 * (docs/architecture.md#the-sqlite-writer-thread). The batches that queued meanwhile go together
 * as ONE job (one commit), the lone postings among them decided and written as one set. Holding the process's write gate (no write transaction of this process
 * on the main connection runs meanwhile), the lane reads the balance rows a job touches on the main
 * connection — or takes them as the jobs already sent will leave them — plans the job over them
 * (ThreadPlan.ts), and sends its statements to the thread, then plans the next job while the
 * thread writes that one. The thread runs a job only if, under its write lock, the rows read back
 * exactly as the job was planned over; otherwise (another process wrote, or an earlier job failed)
 * it writes nothing, and each batch of the job runs again alone on the main connection once the
 * gate is let go.
 */

/** A batch and the answer its caller waits for. */
interface LaneRequest extends LaneBatch {
  readonly done: Deferred.Deferred<ReadonlyArray<PostingOutcome>, SqlError.SqlError>
}

/** Most batches one writer-thread job carries. */
const MAX_BATCHES_PER_JOB = 32
/** Jobs the thread may have queued at once: the next is planned while one is written (batch requests'). */
const MAX_JOBS_IN_FLIGHT = 2

/** A job sent to the thread, its answer not yet handed to its batches. */
interface SentJob {
  readonly requests: ReadonlyArray<LaneRequest>
  readonly plans: ReadonlyArray<NewTransfersPlan>
  readonly answer: Effect.Effect<WriterResult, SqlError.SqlError>
}

/** What the lane works with: its inbox, the main connection (`sync`) and the thread (`writer`). */
interface Lane {
  readonly inbox: LaneInbox<LaneRequest>
  readonly sync: SyncSqlService
  readonly writer: SqliteWriterService
}

/** One hold of the gate: the lane, and what the hold has done so far. */
interface HoldState {
  readonly lane: Lane
  prediction: Prediction
  /** Oldest first. */
  readonly inFlight: Array<SentJob>
  /** Batches to run again alone on the main connection once the gate is let go. */
  readonly alone: Array<LaneRequest>
  /** Every batch the hold took: a defect fails those still unanswered. */
  readonly taken: Array<LaneRequest>
  /** Set once the prediction no longer holds (a job not committed, a failed read): no more jobs. */
  broken: boolean
}

/**
 * The next step of a hold: plan and send these batches; take the batches queued meanwhile; wait
 * for a batch or the answer of the job in flight; let the gate go (once every job is answered).
 */
type Step =
  | { readonly _tag: "Send"; readonly requests: ReadonlyArray<LaneRequest> }
  | { readonly _tag: "Take" }
  | { readonly _tag: "Await" }
  | { readonly _tag: "Done" }

const TAKE: Step = { _tag: "Take" }
const AWAIT: Step = { _tag: "Await" }
const DONE: Step = { _tag: "Done" }

/** True when a job failed because another process held the write lock past the busy timeout. */
const timedOut = (cause: Cause.Cause<SqlError.SqlError>) =>
  Option.exists(Cause.failureOption(cause), (error) => sqlErrorCode(error) === "SQLITE_BUSY_TIMEOUT")

/** Waits for the oldest job in flight and answers its batches (or sets them aside to run alone). */
const settleOldest = (state: HoldState) =>
  Effect.gen(function* () {
    const { answer, plans, requests } = state.inFlight.shift()!
    const result = yield* Effect.exit(answer)
    if (result._tag === "Success" && result.value._tag === "Committed") {
      const { changes } = result.value
      for (const [i, request] of requests.entries()) yield* Deferred.succeed(request.done, plannedOutcomes(plans[i]!, changes))
      return
    }
    state.broken = true
    // Another process held the write lock past the busy timeout: that is these batches'
    // answer (running each again would wait a whole timeout per batch). So is any failure of
    // a job of one batch; a failed job of several is run again batch by batch, so that one
    // batch's failure is not its neighbours'.
    if (result._tag === "Failure" && (requests.length === 1 || timedOut(result.cause))) {
      for (const request of requests) yield* Deferred.failCause(request.done, result.cause)
      return
    }
    state.alone.push(...requests)
  })

/** Plans a job of `requests` (reading the rows the prediction lacks), sends it, and keeps at most MAX_JOBS_IN_FLIGHT. */
const send = (state: HoldState, requests: ReadonlyArray<LaneRequest>) =>
  Effect.gen(function* () {
    const unseen = accountsToRead(state.prediction, requests)
    const read =
      unseen.length === 0
        ? Effect.succeed<ReadonlyArray<TotalsRow>>([])
        : state.lane.sync.read((db) => db.prepare(TOTALS_OF).all(JSON.stringify(unseen)) as ReadonlyArray<TotalsRow>)
    const rows = yield* Effect.either(read)
    if (rows._tag === "Left") {
      // A failed read: these batches get the failure; the jobs in flight are still answered.
      for (const request of requests) yield* Deferred.fail(request.done, rows.left)
      state.broken = true
    } else {
      const { job, next, plans } = planJob(state.prediction, requests, rows.right)
      state.prediction = next
      state.inFlight.push({ requests, plans, answer: yield* state.lane.writer.send(job) })
    }
    // A job of lone transfers only is answered before the next is sent: they arrive one by one, and
    // those that come meanwhile make the next job larger — one commit for more of them (measured:
    // 4 → 5.5 transfers a job, less CPU per transfer; docs/decisions.md#sqlite-lone-transfers-on-the-writer-thread).
    const inFlight = requests.every((request) => request.alone) ? 1 : MAX_JOBS_IN_FLIGHT
    while (state.inFlight.length >= inFlight) yield* settleOldest(state)
    return TAKE
  })

/** Takes the batches queued meanwhile, unless the hold must end (writers of the main connection are waiting). */
const take = (state: HoldState) =>
  Effect.gen(function* () {
    if (state.broken || state.lane.writer.othersWaiting()) return DONE
    const requests = yield* state.lane.inbox.takeQueued
    state.taken.push(...requests)
    if (requests.length > 0) return { _tag: "Send", requests } satisfies Step
    return state.inFlight.length === 0 ? DONE : AWAIT
  })

/** One job in flight and nothing queued: plan the next batch as soon as one comes, or settle the job if its answer comes first. */
const wait = (state: HoldState) =>
  Effect.gen(function* () {
    yield* state.lane.inbox.awaitItemOr(Effect.exit(state.inFlight[0]!.answer))
    const requests = yield* state.lane.inbox.takeQueued
    state.taken.push(...requests)
    if (requests.length > 0) return { _tag: "Send", requests } satisfies Step
    yield* settleOldest(state)
    return TAKE
  })

/** One hold of the gate, from its first batches: the batches to run alone after it. */
const runHold = (state: HoldState, first: ReadonlyArray<LaneRequest>) =>
  Effect.gen(function* () {
    let step: Step = { _tag: "Send", requests: first }
    while (step._tag !== "Done") {
      step = yield* step._tag === "Send" ? send(state, step.requests) : step._tag === "Take" ? take(state) : wait(state)
    }
    while (state.inFlight.length > 0) yield* settleOldest(state)
    return state.alone
  })

/**
 * The lane: a fiber of the client's scope taking batches from its inbox, one hold of the gate at a
 * time. Yields the ways in: functions that queue a batch or a lone posting and wait for the
 * outcomes. `postOne` is the store's synchronous posting, which a lone posting runs again alone.
 */
export const makeThreadLane = (
  sync: SyncSqlService,
  writer: SqliteWriterService,
  postOne: (db: SyncConnection, posting: TransferPosting) => PostingOutcome
) =>
  Effect.gen(function* () {
    const inbox = yield* makeLaneInbox<LaneRequest>(MAX_BATCHES_PER_JOB)
    const lane: Lane = { inbox, sync, writer }
    // A lone posting runs again as the one synchronous posting it would be without the lane.
    const runAlone = (request: LaneRequest) =>
      Effect.flatMap(
        Effect.exit(
          sync.run((db) =>
            request.alone
              ? request.postings.map((posting) => postOne(db, posting))
              : postNewTransfersSync(db, request.postings, request.allOrNothing)
          )
        ),
        (exit) => Deferred.done(request.done, exit)
      )
    const hold = (first: ReadonlyArray<LaneRequest>) => {
      const state: HoldState = { lane, prediction: emptyPrediction, inFlight: [], alone: [], taken: [...first], broken: false }
      return writer.withGate(runHold(state, first)).pipe(
        Effect.flatMap((alone) => Effect.forEach(alone, runAlone, { discard: true })),
        // The gate was not had within the busy timeout: these batches get that answer.
        Effect.catchAll((error) => Effect.forEach(first, (request) => Deferred.fail(request.done, error), { discard: true })),
        // A defect (a bug) fails the batches of this hold still unanswered, and the lane goes on.
        Effect.catchAllCause((cause) =>
          Effect.forEach(state.taken, (request) => Deferred.failCause(request.done, cause), { discard: true })
        )
      )
    }
    yield* inbox.takeFirst.pipe(Effect.flatMap(hold), Effect.forever, Effect.forkScoped)
    const submit = (batch: LaneBatch) =>
      Effect.flatMap(Deferred.make<ReadonlyArray<PostingOutcome>, SqlError.SqlError>(), (done) =>
        Effect.zipRight(inbox.offer({ ...batch, done }), Deferred.await(done))
      )
    return {
      /** A batch's new transfers: their outcomes once committed. */
      batch: (postings: ReadonlyArray<TransferPosting>, allOrNothing: boolean) => submit({ postings, allOrNothing, alone: false }),
      /** One lone new transfer, written with the others queued meanwhile: its outcome once committed. */
      alone: (posting: TransferPosting) =>
        Effect.map(submit({ postings: [posting], allOrNothing: true, alone: true }), (outcomes) => outcomes[0]!)
    }
  })
