import { Effect, Option } from "effect"
import { newId } from "../platform/Ids.js"
import { IssuingConfig } from "../platform/IssuingConfig.js"
import { nowMs } from "../platform/Time.js"
import { Transactor } from "../sql/Transactor.js"
import { Vault } from "../vault/Vault.js"
import { attemptRecord, eventPayload, oversizedPayload, retryDelayMs, signingKeys } from "./DeliveryRules.js"
import { type ClaimedDelivery, WEBHOOK_LIMITS, type WebhookAttempt } from "./Records.js"
import { type DeliveryOutcome, WebhookSender } from "./WebhookSender.js"
import { WebhookStore, WebhookWakeups } from "./WebhookStore.js"

export interface DeliveryWorkerOptions {
  /** Fallback poll for missed wake-ups and retries coming due (default 1 s with database notifications, 250 ms without). */
  readonly pollIntervalMs?: number | undefined
  /**
   * How long a graceful stop waits for deliveries in flight (default the delivery timeout + 1 s, at
   * most 15 s). A try still running after it keeps its lease: its delivery becomes due again only
   * when the lease ends, never while the try may still be sending.
   */
  readonly shutdownGraceMs?: number | undefined
  /** Called with each claimed batch size (tests and benchmarks observe the worker with it). */
  readonly onClaim?: ((count: number) => void) | undefined
}

/** The end of one delivery try, waiting to be recorded. */
interface Finished {
  readonly delivery: ClaimedDelivery
  /** Undefined when the delivery was dropped without a request (its subscription is disabled). */
  readonly outcome: DeliveryOutcome | undefined
  /** A failure that retrying cannot fix (payload over the limit). */
  readonly permanent: boolean
  /** Claimed but never started (it waited too long in the buffer): made due again, no attempt. */
  readonly released?: boolean | undefined
}

/**
 * The delivery worker: claims due deliveries under a lease, sends them (bounded concurrency,
 * keep-alive), and records every try as an attempt, in batches. Runs until interrupted; on
 * interruption it stops claiming, lets deliveries in flight finish (bounded), records them and
 * hands back what it holds but is not sending; a try still running keeps its lease. A worker that
 * dies instead leaves its claims to expire: they become due again after the lease (2 × delivery
 * timeout + 5 s), so nothing is lost — and because a try cannot outlive its lease, no two workers
 * ever send the same delivery at once.
 */
export const runDeliveryWorker = (options: DeliveryWorkerOptions = {}) =>
  Effect.scoped(Effect.gen(function*() {
    const store = yield* WebhookStore
    const sender = yield* WebhookSender
    const vault = yield* Vault
    const config = yield* IssuingConfig
    const transactor = yield* Transactor
    const hasNotifications = Option.isSome(yield* Effect.serviceOption(WebhookWakeups))
    const pollIntervalMs = options.pollIntervalMs ?? (hasNotifications ? 1000 : 250)
    // A claimed delivery starts within one timeout of its claim (or is handed back unsent) and its
    // try ends within another, so the lease outlives any send: no two workers send it at once.
    const leaseMs = 2 * config.webhookTimeoutMs + WEBHOOK_LIMITS.leaseMarginMs
    const token = newId()
    const concurrency = config.webhookConcurrency

    let inFlight = 0
    /** Ids of the deliveries whose try is running (a graceful stop must not hand these back). */
    const sending = new Set<string>()
    let writing = false
    let stopping = false
    let slotWaiter: (() => void) | undefined

    // Decrypted signing keys per subscription version; secrets change only with updated_at.
    const keyCache = new Map<string, { readonly version: string; readonly current: Buffer; readonly previous: Buffer | undefined; readonly previousUntilMs: number }>()
    const keysFor = (delivery: ClaimedDelivery, now: number): ReadonlyArray<Buffer> => {
      let entry = keyCache.get(delivery.subscription_id)
      if (entry === undefined || entry.version !== delivery.subscription_updated_at) {
        const keys = signingKeys(vault, { ...delivery, previous_secret_expires_at: delivery.previous_secret_expires_at }, 0)
        entry = {
          version: delivery.subscription_updated_at,
          current: keys[0]!,
          previous: keys[1],
          previousUntilMs: delivery.previous_secret_expires_at === null ? 0 : Date.parse(delivery.previous_secret_expires_at)
        }
        if (keyCache.size >= 10_000) keyCache.clear()
        keyCache.set(delivery.subscription_id, entry)
      }
      return entry.previous !== undefined && entry.previousUntilMs > now ? [entry.current, entry.previous] : [entry.current]
    }

    // The hot path is plain promises (one per delivery, no fibers): a delivery costs about as
    // much CPU as a bare HTTP client's request, and results reach the recorder through an array.
    let finishedQueue: Array<Finished> = []
    let writerWaiter: (() => void) | undefined
    // Claimed deliveries wait here for a free slot, so slots refill at once while the next claim
    // is still on its way to the database.
    let buffer: Array<{ readonly delivery: ClaimedDelivery; readonly claimedAtMs: number }> = []
    const startFromBuffer = () => {
      while (inFlight < concurrency && buffer.length > 0 && !stopping) {
        const { claimedAtMs, delivery } = buffer.shift()!
        inFlight++
        if (Date.now() - claimedAtMs > config.webhookTimeoutMs) {
          finish({ delivery, outcome: undefined, permanent: false, released: true })
        } else {
          sending.add(delivery.id)
          deliver(delivery)
        }
      }
    }
    const finish = (finished: Finished) => {
      sending.delete(finished.delivery.id)
      finishedQueue.push(finished)
      inFlight--
      const wakeWriter = writerWaiter
      writerWaiter = undefined
      wakeWriter?.()
      startFromBuffer()
      const wake = slotWaiter
      slotWaiter = undefined
      wake?.()
    }
    const deliver = (delivery: ClaimedDelivery): void => {
      if (delivery.disabled) return finish({ delivery, outcome: undefined, permanent: false })
      const now = Date.now()
      try {
        const body = eventPayload({
          id: delivery.event_id,
          type: delivery.event_type,
          program_id: delivery.program_id,
          created_at: delivery.event_created_at,
          data: delivery.event_data
        })
        const size = Buffer.byteLength(body)
        if (size > config.webhookMaxPayloadBytes) {
          return finish({ delivery, outcome: oversizedPayload(size, config.webhookMaxPayloadBytes, now), permanent: true })
        }
        sender.sendAsync({ url: delivery.url, messageId: delivery.event_id, body, keys: keysFor(delivery, now) }).then(
          (outcome) => finish({ delivery, outcome, permanent: false }),
          (error) => finish({ delivery, outcome: internalFailure(error), permanent: false })
        )
      } catch (error) {
        finish({ delivery, outcome: internalFailure(error), permanent: false })
      }
    }
    const internalFailure = (error: unknown): DeliveryOutcome => ({
      status: "FAILED",
      responseCode: 0,
      responseBody: `internal error: ${String(error)}`.slice(0, 500),
      retryAfterMs: undefined,
      attemptedAtMs: Date.now()
    })
    const takeFinished = Effect.async<void>((resume) => {
      if (finishedQueue.length > 0) return resume(Effect.void)
      writerWaiter = () => resume(Effect.void)
    })

    /** Records a batch of finished tries in one transaction. */
    const record = (batch: ReadonlyArray<Finished>) =>
      transactor.withTransaction(Effect.gen(function*() {
        const now = yield* nowMs
        const nowText = new Date(now).toISOString()
        const attempts: Array<WebhookAttempt & { program_id: string }> = []
        const done: Array<string> = []
        const succeeded = new Set<string>()
        const failed = new Set<string>()
        const gone = new Set<string>()
        for (const { delivery, outcome, permanent, released } of batch) {
          if (released) {
            yield* store.rescheduleDelivery(token, delivery.id, delivery.attempt_count, nowText)
            continue
          }
          if (outcome === undefined) {
            done.push(delivery.id)
            continue
          }
          attempts.push(attemptRecord(delivery, outcome, nowText))
          if (outcome.status === "SUCCESS") {
            done.push(delivery.id)
            succeeded.add(delivery.subscription_id)
            continue
          }
          failed.add(delivery.subscription_id)
          if (outcome.responseCode === 410) gone.add(delivery.subscription_id)
          const attemptNumber = delivery.attempt_count + 1
          const delay = permanent || outcome.responseCode === 410
            ? undefined
            : retryDelayMs(config.webhookRetryScheduleMs, attemptNumber, outcome.retryAfterMs)
          if (delay === undefined) done.push(delivery.id)
          else yield* store.rescheduleDelivery(token, delivery.id, attemptNumber, new Date(now + delay).toISOString())
        }
        yield* store.insertAttempts(attempts)
        yield* store.completeDeliveries(token, done)
        // A success anywhere in the batch ends the streak, unless the same batch also failed for it.
        yield* store.clearFailing([...succeeded].filter((id) => !failed.has(id)))
        yield* store.markFailing([...failed], nowText)
        const disabled = [
          ...(yield* store.disableSubscriptions([...gone], nowText, undefined)),
          ...(yield* store.disableSubscriptions([...failed], nowText, new Date(now - config.webhookDisableAfterMs).toISOString()))
        ]
        for (const id of disabled) yield* Effect.logWarning("Webhook subscription disabled", { webhook_subscription_id: id })
        // Claim the next batch in the same transaction (one commit, one flush, for both).
        const want = Math.min(2 * concurrency - inFlight - buffer.length, WEBHOOK_LIMITS.claimBatchSize)
        if (stopping || buffer.length > concurrency / 2 || want <= 0) return [] as ReadonlyArray<ClaimedDelivery>
        return yield* store.claimDue(token, nowText, new Date(now + leaseMs).toISOString(), want)
      }))

    const writer = Effect.gen(function*() {
      yield* takeFinished
      writing = true
      // Group commit: while deliveries are in flight, linger a moment so one transaction records
      // many tries (a commit is a disk flush, and on SQLite it blocks the event loop).
      if (inFlight > 0 && finishedQueue.length < WEBHOOK_LIMITS.recordBatchSize) {
        yield* Effect.sleep(WEBHOOK_LIMITS.recordLingerMs)
      }
      const batch = finishedQueue.slice(0, WEBHOOK_LIMITS.recordBatchSize)
      finishedQueue = finishedQueue.slice(batch.length)
      yield* record(batch).pipe(
        Effect.tap((claimed) =>
          Effect.sync(() => {
            if (claimed.length === 0) return
            options.onClaim?.(claimed.length)
            const claimedAtMs = Date.now()
            for (const delivery of claimed) buffer.push({ delivery, claimedAtMs })
            startFromBuffer()
          })
        ),
        // Retries were rescheduled: let the claim loop recompute when the next one is due.
        Effect.zipRight(batch.some((finished) => finished.outcome?.status === "FAILED") ? store.wake : Effect.void),
        Effect.retry({ times: 5 }),
        Effect.catchAllCause((cause) =>
          // The claims stay ours until the lease ends; then the deliveries are tried again.
          Effect.logError("Recording webhook attempts failed; the deliveries will be retried after their lease", cause)
        ),
        Effect.ensuring(Effect.sync(() => (writing = false)))
      )
    }).pipe(
      Effect.catchAllCause((cause) => Effect.logError("Webhook result writer failed; continuing", cause)),
      Effect.forever
    )
    yield* Effect.forkScoped(writer)

    // Claim ahead in batches: claim again once the buffer runs low, so a saturated worker makes one
    // claim per batch of completions and never waits for the database with free slots.
    const waitForRoom = Effect.async<void>((resume) => {
      const check = () => {
        if (buffer.length <= concurrency / 2 && inFlight + buffer.length < 2 * concurrency) return resume(Effect.void)
        slotWaiter = check
      }
      check()
    })

    // On a graceful stop: no new claims, deliveries in flight finish, results are recorded, and
    // what is still held but not being sent is made due again for the next worker. A try still
    // running when the wait ends (the timeout may exceed the wait) keeps its lease: making it due
    // now would let another worker send the same delivery while this one's request is still open.
    // Its delivery becomes due when the lease ends (at least once: nothing is lost).
    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        stopping = true
        buffer = []
        const graceMs = options.shutdownGraceMs ?? Math.min(config.webhookTimeoutMs + 1000, 15_000)
        const deadline = Date.now() + graceMs
        while ((inFlight > 0 || writing || finishedQueue.length > 0) && Date.now() < deadline) {
          yield* Effect.sleep("10 millis")
        }
        const now = new Date(yield* nowMs).toISOString()
        yield* Effect.ignoreLogged(store.releaseClaims(token, now, [...sending]))
      })
    )

    const claimRound = Effect.gen(function*() {
      yield* waitForRoom
      if (stopping) return yield* Effect.never
      const want = Math.min(2 * concurrency - inFlight - buffer.length, WEBHOOK_LIMITS.claimBatchSize)
      const now = yield* nowMs
      const claimed = yield* store.claimDue(
        token,
        new Date(now).toISOString(),
        new Date(now + leaseMs).toISOString(),
        want
      )
      options.onClaim?.(claimed.length)
      const claimedAtMs = Date.now()
      for (const delivery of claimed) buffer.push({ delivery, claimedAtMs })
      startFromBuffer()
      if (claimed.length >= want) return
      const nextDue = yield* store.nextDueAt
      const waitMs = Option.match(nextDue, {
        onNone: () => pollIntervalMs,
        onSome: (due) => Math.min(pollIntervalMs, Math.max(Date.parse(due) - now, 5))
      })
      yield* store.waitForWork(waitMs)
    }).pipe(
      Effect.catchAllCause((cause) =>
        Effect.zipRight(Effect.logWarning("Claiming webhook deliveries failed; retrying", cause), Effect.sleep("1 second"))
      )
    )
    return yield* Effect.forever(claimRound)
  }))
