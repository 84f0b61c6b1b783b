import { Effect, Fiber, Option, Schedule } from "effect"
import { newId } from "../platform/Ids.js"
import { IssuingConfig, type IssuingSettings } from "../platform/IssuingConfig.js"
import { CLAIM_LEASE_MS, CLAIM_RENEW_MS } from "../platform/Leases.js"
import { nowMs } from "../platform/Time.js"
import { Transactor, type TransactorService } from "../sql/Transactor.js"
import { Vault } from "../vault/Vault.js"
import { DeliveryDispatch, type Finished, SigningKeyCache } from "./DeliveryDispatch.js"
import { planOutcome } from "./DeliveryRules.js"
import { WEBHOOK_LIMITS } from "./Records.js"
import { disableFromPlan, mayDisable } from "./RecordOutcomes.js"
import { WebhookSender } from "./WebhookSender.js"
import { type FinishedTries, WebhookStore, type WebhookStoreService, WebhookWakeups } from "./WebhookStore.js"

export interface DeliveryWorkerOptions {
  /** Fallback poll for missed wake-ups and retries coming due (default 1 s with database notifications, 250 ms without). */
  readonly pollIntervalMs?: number | undefined
  /**
   * How long a graceful stop waits for deliveries in flight (default the delivery timeout + 1 s, at
   * most 15 s). A try still running after it keeps its claim, renewed one last time to outlast the
   * try's timeout: its delivery becomes due again only then, never while the try may still be sending.
   */
  readonly shutdownGraceMs?: number | undefined
  /** Called with each claimed batch size (tests and benchmarks observe the worker with it). */
  readonly onClaim?: ((count: number) => void) | undefined
}

/**
 * The delivery worker: claims due deliveries under a short lease that a heartbeat renews while it
 * lives, sends them (bounded concurrency, keep-alive), and records every try as an attempt, in
 * batches. Runs until interrupted; on interruption it stops claiming, lets deliveries in flight
 * finish (bounded), records them and hands back what it holds. A worker that dies instead leaves
 * its claims to expire: another takes them over within the lease (CLAIM_LEASE_MS, 4 s), so nothing
 * is lost — and because a try is abandoned before its lease can end unrenewed, no two workers ever
 * send the same delivery at once (docs/operations.md#claims-and-leases).
 */
export const runDeliveryWorker = (options: DeliveryWorkerOptions = {}) =>
  Effect.scoped(
    Effect.gen(function* () {
      const worker = yield* makeWorker(options)
      yield* Effect.forkScoped(recorderLoop(worker))
      // Forked before the graceful stop's finalizer is added, so it runs until that is done.
      yield* Effect.forkScoped(keepClaims(worker))
      yield* Effect.addFinalizer(() => stopGracefully(worker))
      return yield* Effect.forever(claimRound(worker))
    })
  )

/** How long the recorder keeps trying to record a batch of finished tries while the database is away. */
const RECORD_RETRY_MS = 30_000

/** What one running worker holds: its services, its claim token and lease, and its in-memory dispatch. */
interface Worker {
  readonly store: WebhookStoreService
  readonly transactor: TransactorService
  readonly config: IssuingSettings
  readonly options: DeliveryWorkerOptions
  readonly dispatch: DeliveryDispatch
  /** Names this worker's claims in the queue. */
  readonly token: string
  readonly leaseMs: number
  readonly pollIntervalMs: number
  /** Other processes' commits are announced to this one (PostgreSQL LISTEN/NOTIFY). */
  readonly hasNotifications: boolean
  /** True while the recorder writes a batch (a graceful stop waits for it). */
  recording: boolean
}

const makeWorker = (options: DeliveryWorkerOptions) =>
  Effect.gen(function* () {
    const config = yield* IssuingConfig
    const hasNotifications = Option.isSome(yield* Effect.serviceOption(WebhookWakeups))
    const dispatch = new DeliveryDispatch(yield* WebhookSender, new SigningKeyCache(yield* Vault), {
      concurrency: config.webhookConcurrency,
      timeoutMs: config.webhookTimeoutMs,
      maxPayloadBytes: config.webhookMaxPayloadBytes
    })
    const worker: Worker = {
      store: yield* WebhookStore,
      transactor: yield* Transactor,
      config,
      options,
      dispatch,
      token: newId(),
      leaseMs: CLAIM_LEASE_MS,
      pollIntervalMs: options.pollIntervalMs ?? (hasNotifications ? 1000 : 250),
      hasNotifications,
      recording: false
    }
    return worker
  })

/** One renewal of every held delivery's lease, in one statement by id and token; the dispatch learns which it confirmed. */
const renewOnce = (worker: Worker) =>
  Effect.gen(function* () {
    const { dispatch, store, token } = worker
    const ids = dispatch.heldIds
    if (ids.length === 0) return
    const startedMs = yield* nowMs
    dispatch.renewed(yield* store.renewClaims(token, ids, new Date(startedMs + worker.leaseMs).toISOString()), startedMs)
  }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("Renewing webhook delivery claims failed; retrying", cause)))

/** How often the claim keeper looks at the leases. */
const KEEPER_TICK_MS = 250
/** How long a tick waits for its renewal before it judges the tries (3 s + 0.25 s + 0.5 s < the 4 s lease). */
const RENEWAL_WAIT_MS = 500

/**
 * Keeps the worker's claims (docs/operations.md#claims-and-leases): every CLAIM_RENEW_MS a renewal,
 * and every tick the tries whose claim went unconfirmed too long are abandoned. The renewal runs
 * first and is waited for (briefly): after the process stalled (a long GC pause, a host that froze
 * it) the leases are renewed before they are judged, not abandoned because a timer fired first; a
 * renewal stuck on an unreachable database runs on in the background and does not hold the
 * judgement up.
 */
const keepClaims = (worker: Worker) =>
  Effect.gen(function* () {
    let lastRenewalMs = 0
    let renewal: Fiber.RuntimeFiber<void> | undefined
    const tick = Effect.gen(function* () {
      if (renewal === undefined && Date.now() - lastRenewalMs >= CLAIM_RENEW_MS) {
        lastRenewalMs = Date.now()
        renewal = yield* Effect.fork(renewOnce(worker))
      }
      if (renewal !== undefined) {
        yield* Effect.ignore(Effect.timeout(Fiber.await(renewal), RENEWAL_WAIT_MS))
        if (Option.isSome(yield* Fiber.poll(renewal))) renewal = undefined
      }
      const abandoned = worker.dispatch.abandonUnconfirmed(Date.now())
      if (abandoned > 0) yield* Effect.logWarning("Webhook tries abandoned: their claims could not be renewed", { abandoned })
    })
    return yield* tick.pipe(Effect.repeat(Schedule.spaced(KEEPER_TICK_MS)))
  }).pipe(Effect.asVoid)

/**
 * Records a batch's outcome plan: by itself (`recordTriesAtOnce`: on PostgreSQL ONE statement in
 * autocommit, on SQLite a job of the writer thread) when the batch cannot disable a subscription
 * (no failure in it: the common case), else one transaction that also
 * disables what the plan says. Safe to run again after a failure whose commit may have gone
 * through: the plan (its attempt ids) is made once per batch, attempts are inserted once per id,
 * and the queue changes are compare-and-set on the claim token. It claims nothing: claims are the
 * claim loop's alone, so a delivery that falls due never waits for a recording's commit.
 */
const record = (worker: Worker, plan: ReturnType<typeof planOutcome<Finished["delivery"]>>) => {
  const { store, token } = worker
  const tries: FinishedTries = {
    attempts: plan.attempts,
    retries: plan.retries.map((retry) => ({
      id: retry.delivery.id,
      attemptCount: retry.attemptCount,
      nextAttemptIso: retry.nextAttemptAt
    })),
    finished: plan.finished.map((delivery) => delivery.id),
    clearFailing: plan.clearFailing,
    markFailing: plan.markFailing,
    nowIso: plan.nowIso
  }
  if (!mayDisable(plan) && Option.isSome(store.recordTriesAtOnce)) return store.recordTriesAtOnce.value(token, tries)
  return worker.transactor.withTransaction(Effect.zipRight(store.recordTries(token, tries), disableFromPlan(store, plan)))
}

/** The recorder: waits for results and records them in batches. */
const recorderLoop = (worker: Worker) =>
  Effect.gen(function* () {
    const { dispatch, store } = worker
    yield* dispatch.awaitResult
    worker.recording = true
    // Group commit: while deliveries are in flight, linger a moment so one commit records
    // many tries (a commit is a disk flush, and on SQLite it blocks the event loop).
    if (dispatch.worthLingering) yield* Effect.sleep(WEBHOOK_LIMITS.recordLingerMs)
    const batch = dispatch.takeResults()
    const plan = planOutcome(batch, {
      retryScheduleMs: worker.config.webhookRetryScheduleMs,
      disableAfterMs: worker.config.webhookDisableAfterMs,
      nowMs: yield* nowMs
    })
    yield* record(worker, plan).pipe(
      // The database went away (a failed rollback on a dead connection is a defect in @effect/sql):
      // every try that was made must still become an attempt, so keep at it — 100 ms, 200 ms, …
      // then every 2 s, for up to 30 s (a PostgreSQL restart or failover). The claims meanwhile stay
      // ours, and nothing new is claimed. (Giving up after 5 quick retries lost the attempts of
      // every try in flight when a database blip outlasted 3 s; found by the fault suite,
      // test/faults/database.test.ts.)
      Effect.catchAllDefect((defect) => Effect.fail(defect)),
      Effect.retry(Schedule.exponential("100 millis").pipe(Schedule.union(Schedule.spaced("2 seconds")), Schedule.upTo(RECORD_RETRY_MS))),
      // Let go of what was recorded; a retry the claim loop already took again is started now.
      Effect.tap(() => Effect.sync(() => dispatch.recorded(batch))),
      // Retries were rescheduled, or tries handed back due now: the claim loop claims them or
      // recomputes when the next one is due.
      Effect.zipRight(
        batch.some((finished) => finished.released === true || finished.outcome?.status === "FAILED")
          ? Effect.ignoreLogged(store.wake)
          : Effect.void
      ),
      Effect.catchAllCause((cause) =>
        // The claims stay ours until the lease ends; then the deliveries are tried again.
        Effect.logError("Recording webhook attempts failed; the deliveries will be retried after their lease", cause)
      ),
      // Recorded or given up: either way the deliveries may be claimed again (after their lease).
      // After a recording, this lets go of nothing more: a delivery the claim loop took again is
      // held under its new claim, which `recorded` leaves alone.
      Effect.ensuring(
        Effect.sync(() => {
          dispatch.recorded(batch)
          worker.recording = false
        })
      )
    )
  }).pipe(
    Effect.catchAllCause((cause) => Effect.logError("Webhook result writer failed; continuing", cause)),
    Effect.forever
  )

/**
 * A graceful stop: no new claims, deliveries in flight finish, results are recorded, and what is
 * still held but not being sent is made due again for the next worker. A try still running when
 * the wait ends (the timeout may exceed the wait) keeps its claim, renewed a last time to outlast
 * the try's own timeout (nothing renews it once this worker is gone): making it due sooner would
 * let another worker send the same delivery while this one's request may still be open. It becomes
 * due when that lease ends (at least once: nothing is lost).
 */
const stopGracefully = (worker: Worker) =>
  Effect.gen(function* () {
    const { config, dispatch, options } = worker
    dispatch.stop()
    const graceMs = options.shutdownGraceMs ?? Math.min(config.webhookTimeoutMs + 1000, 15_000)
    const deadline = Date.now() + graceMs
    while ((dispatch.busy || worker.recording) && Date.now() < deadline) {
      yield* Effect.sleep("10 millis")
    }
    const stoppedMs = yield* nowMs
    const running = dispatch.runningIds
    const lastLeaseUntil = new Date(stoppedMs + config.webhookTimeoutMs + CLAIM_LEASE_MS).toISOString()
    yield* Effect.ignoreLogged(worker.store.renewClaims(worker.token, running, lastLeaseUntil))
    yield* Effect.ignoreLogged(worker.store.releaseClaims(worker.token, new Date(stoppedMs).toISOString(), running))
  })

/**
 * One claim: claims ahead in batches once the buffer runs low, so a saturated worker makes one
 * claim per batch of completions and never waits for the database with free slots; when the queue
 * runs dry it waits for a wake-up, the next retry coming due, or the fallback poll.
 */
const claimRound = (worker: Worker) =>
  Effect.gen(function* () {
    const { dispatch, options, store } = worker
    yield* dispatch.awaitRoom
    if (dispatch.stopping) return yield* Effect.never
    const wanted = dispatch.wanted
    const now = yield* nowMs
    const { claimed, nextDueAt } = yield* store.claimDueWithNext(
      worker.token,
      new Date(now).toISOString(),
      new Date(now + worker.leaseMs).toISOString(),
      wanted
    )
    options.onClaim?.(claimed.length)
    dispatch.add(claimed, now)
    // A full batch: more may be due than this worker takes. With notifications, a commit that found
    // this worker waiting was announced to no other node (docs/webhooks.md#wake-ups-on-postgresql):
    // they are told now.
    if (claimed.length >= wanted) return worker.hasNotifications ? yield* Effect.ignoreLogged(store.wake) : undefined
    const waitMs = Option.match(nextDueAt, {
      onNone: () => worker.pollIntervalMs,
      onSome: (due) => Math.min(worker.pollIntervalMs, Math.max(Date.parse(due) - now, 5))
    })
    yield* store.waitForWork(waitMs)
  }).pipe(
    Effect.catchAllCause((cause) =>
      Effect.zipRight(Effect.logWarning("Claiming webhook deliveries failed; retrying", cause), Effect.sleep("1 second"))
    )
  )
