import { Effect } from "effect"
import { CLAIM_ABANDON_MS, CLAIM_START_WITHIN_MS } from "../platform/Leases.js"
import type { VaultService } from "../vault/Vault.js"
import { tagMayReceive } from "../events/Records.js"
import { eventPayload, oversizedPayload, signingKeys, type TryResult } from "./DeliveryRules.js"
import { type ClaimedDelivery, WEBHOOK_LIMITS } from "./Records.js"
import type { DeliveryOutcome, WebhookSenderService } from "./WebhookSender.js"

/**
 * One claim of a delivery, held from the claim until its try's result is recorded: when the claim
 * was last confirmed (claimed or renewed under this worker's token, epoch ms).
 */
interface HeldClaim {
  confirmedMs: number
  /** The delivery's tries before this claim's (its attempt_count when claimed). */
  readonly attemptCount: number
}

/** The end of one claimed delivery's try, waiting to be recorded, with the claim it ran under. */
export type Finished = TryResult<ClaimedDelivery> & { readonly claim: HeldClaim }

/** Subscriptions whose decrypted keys are kept; the cache is emptied when it reaches this bound. */
const MAX_CACHED_SUBSCRIPTIONS = 10_000

interface CachedKeys {
  /** The subscription's updated_at: its secrets change only with it. */
  readonly version: string
  readonly current: Buffer
  readonly previous: Buffer | undefined
  readonly previousUntilMs: number
}

/** Decrypted signing keys per subscription version, so a busy subscription is not decrypted per delivery. */
export class SigningKeyCache {
  private readonly entries = new Map<string, CachedKeys>()
  constructor(private readonly vault: VaultService) {}

  /** The keys that sign `delivery` at `nowMs`: current first, the previous one while it lives. */
  keysFor(delivery: ClaimedDelivery, nowMs: number): ReadonlyArray<Buffer> {
    let entry = this.entries.get(delivery.subscription_id)
    if (entry === undefined || entry.version !== delivery.subscription_updated_at) {
      // Decrypted once with the previous key whatever its expiry; the expiry is checked per use below.
      const keys = signingKeys(this.vault, delivery, 0)
      entry = {
        version: delivery.subscription_updated_at,
        current: keys[0]!,
        previous: keys[1],
        previousUntilMs: delivery.previous_secret_expires_at === null ? 0 : Date.parse(delivery.previous_secret_expires_at)
      }
      if (this.entries.size >= MAX_CACHED_SUBSCRIPTIONS) this.entries.clear()
      this.entries.set(delivery.subscription_id, entry)
    }
    return entry.previous !== undefined && entry.previousUntilMs > nowMs ? [entry.current, entry.previous] : [entry.current]
  }
}

export interface DispatchSettings {
  /** Deliveries in flight at most. */
  readonly concurrency: number
  /** The delivery timeout (a try ends within it). */
  readonly timeoutMs: number
  readonly maxPayloadBytes: number
}

/**
 * How many deliveries a worker holds, tries running and deliveries waiting for a slot, in slots'
 * worth (`concurrency` each): the slots and three buffered. A claim is a statement with a fixed cost
 * whatever its size (on PostgreSQL about 1.5 ms of the server's CPU, its plan included:
 * docs/decisions.md#postgresql-fewer-larger-claims), which claims of two slots' worth spread over
 * about three times as many deliveries as the claims made with half a slot's worth left did; and the
 * slot's worth still buffered keeps the sends going while the next claim waits for the database.
 */
const HELD_SLOTS = 4

/** A failure inside this process (a bug, an unexpected throw), recorded like a failed try. */
const internalFailure = (error: unknown): DeliveryOutcome => ({
  status: "FAILED",
  responseCode: 0,
  responseBody: `internal error: ${String(error)}`.slice(0, 500),
  retryAfterMs: undefined,
  attemptedAtMs: Date.now()
})

/**
 * The worker's hot path, in memory: claimed deliveries wait in a buffer for a free slot (so slots
 * refill at once while the next claim is still on its way to the database), are sent as plain
 * promises (one per delivery, no fibers: a delivery costs about as much CPU as a bare HTTP client's
 * request), and their results queue for the recorder. The buffer holds at most three slots' worth.
 *
 * Two guards keep a delivery from ever being sent twice at once (found by the receiver-chaos
 * test, test/faults/chaos.test.ts, at 10,000 events on PostgreSQL):
 * - Backpressure: while a record batch's worth of results waits for the recorder, nothing is
 *   claimed or started. Otherwise a recorder slower than the sends falls behind without bound
 *   (tens of seconds were seen), results are recorded after their claim's lease has ended, and the
 *   deliveries are sent again meanwhile.
 * - A delivery is held from its claim until its result is recorded; a claim of a held delivery
 *   (its lease ended while its result waited) starts nothing. Its late result, recorded under this
 *   worker's token, would otherwise reschedule the row under the new claim, and the delivery would
 *   be claimed and sent again while the new claim's try was still running. (That claim was made
 *   under this worker's token, so it does confirm the held claim's lease.)
 *
 * And the lease (docs/operations.md#claims-and-leases): the worker's heartbeat renews the claims
 * of the held deliveries and reports it here (`renewed`). A delivery whose claim was last confirmed
 * too long ago is not started (handed back unsent), and its try in flight is abandoned
 * (`abandonUnconfirmed`) a second before the lease ends, so it never runs while another worker
 * may have taken the delivery over.
 */
export class DeliveryDispatch {
  private inFlight = 0
  /** The deliveries whose try is running, with what aborts it (a graceful stop must not hand these back). */
  private readonly running = new Map<string, AbortController>()
  /** The claims taken and not yet recorded (buffered, running, or finished and waiting for the recorder), by delivery id. */
  private readonly held = new Map<string, HeldClaim>()
  private buffer: Array<{ readonly delivery: ClaimedDelivery; readonly claim: HeldClaim }> = []
  /**
   * Claims of held deliveries that the recording of their last try had already rescheduled (a retry
   * due at once): taken when the recorder lets go of that try (`recorded`).
   */
  private readonly retakes = new Map<string, { readonly delivery: ClaimedDelivery; readonly claimedAtMs: number }>()
  private results: Array<Finished> = []
  private resultWaiter: (() => void) | undefined
  private roomWaiter: (() => void) | undefined
  private stopped = false

  constructor(
    private readonly sender: WebhookSenderService,
    private readonly keys: SigningKeyCache,
    private readonly settings: DispatchSettings
  ) {}

  /**
   * How many deliveries to claim now: enough for every slot and three slots' worth buffered, at most
   * one claim batch; nothing while more than a slot's worth waits in the buffer. So a saturated
   * worker claims about two slots' worth at a time (128 at the default concurrency), and the buffer
   * still holds a slot's worth while the claim is on its way to the database.
   */
  get wanted(): number {
    if (this.stopped || this.buffer.length > this.settings.concurrency || this.backlogged) return 0
    return Math.max(0, Math.min(HELD_SLOTS * this.settings.concurrency - this.inFlight - this.buffer.length, WEBHOOK_LIMITS.claimBatchSize))
  }

  get stopping(): boolean {
    return this.stopped
  }

  /** True while tries run or results wait to be recorded. */
  get busy(): boolean {
    return this.inFlight > 0 || this.results.length > 0
  }

  /** Ids of the tries running now. */
  get runningIds(): ReadonlyArray<string> {
    return [...this.running.keys()]
  }

  /** Ids of the deliveries held now: the claims the heartbeat renews. */
  get heldIds(): ReadonlyArray<string> {
    return [...this.held.keys()]
  }

  /** The heartbeat renewed the claims of `ids` by a statement that began at `atMs`. */
  renewed(ids: ReadonlyArray<string>, atMs: number): void {
    for (const id of ids) this.confirm(this.held.get(id), atMs)
  }

  private confirm(claim: HeldClaim | undefined, atMs: number): void {
    if (claim !== undefined && claim.confirmedMs < atMs) claim.confirmedMs = atMs
  }

  /**
   * Aborts every try whose claim was last confirmed more than CLAIM_ABANDON_MS before `nowMs`
   * (its lease ends within a second; another worker may then send it); returns how many.
   */
  abandonUnconfirmed(nowMs: number): number {
    let abandoned = 0
    for (const [id, controller] of this.running) {
      if (nowMs - (this.held.get(id)?.confirmedMs ?? 0) > CLAIM_ABANDON_MS) {
        controller.abort("the claim on the delivery could not be renewed")
        abandoned++
      }
    }
    return abandoned
  }

  /** True while a record batch's worth of results waits for the recorder: claim and start nothing. */
  private get backlogged(): boolean {
    return this.results.length >= WEBHOOK_LIMITS.recordBatchSize
  }

  /**
   * Takes deliveries claimed at `claimedAtMs` (the start of their lease) and starts as many as
   * there are free slots. A delivery still held from an earlier claim is not taken again; its held
   * claim counts as confirmed at `claimedAtMs` (this claim renewed its lease under the same token).
   * Except a retry: claimed with more tries than the held claim had, it was claimed after the
   * recording of the held try committed (only that recording, under this worker's token, counts a
   * try), in the moment before the recorder let go of it — it is taken then (`recorded`).
   */
  add(claimed: ReadonlyArray<ClaimedDelivery>, claimedAtMs: number = Date.now()): void {
    for (const delivery of claimed) {
      const held = this.held.get(delivery.id)
      if (held !== undefined) {
        if (delivery.attempt_count > held.attemptCount && !this.stopped) this.retakes.set(delivery.id, { delivery, claimedAtMs })
        else this.confirm(held, claimedAtMs)
        continue
      }
      const claim: HeldClaim = { confirmedMs: claimedAtMs, attemptCount: delivery.attempt_count }
      this.held.set(delivery.id, claim)
      this.buffer.push({ delivery, claim })
    }
    this.startFromBuffer()
  }

  /**
   * The recorder is done with `batch` (recorded, or given up): its deliveries may be claimed again.
   * Only the claims the batch's tries ran under are let go: the transaction that recorded a try may
   * have claimed its delivery again, and that newer claim, already taken (`add`), stays held — a
   * second call for the same batch is harmless. (Letting go by id dropped that newer claim while its
   * try ran: unrenewed, the try was abandoned at once; seen in the receiver-chaos test on
   * PostgreSQL under load, where retries fell due before the transaction recording them began.)
   */
  recorded(batch: ReadonlyArray<Finished>): void {
    for (const finished of batch) {
      const id = finished.delivery.id
      if (this.held.get(id) !== finished.claim) continue
      this.held.delete(id)
      const retake = this.retakes.get(id)
      if (retake !== undefined) {
        this.retakes.delete(id)
        this.add([retake.delivery], retake.claimedAtMs)
      }
    }
  }

  /** Stops starting tries and forgets the buffered ones (the store hands them back). */
  stop(): void {
    this.stopped = true
    for (const { delivery } of this.buffer) this.held.delete(delivery.id)
    this.buffer = []
    this.retakes.clear()
  }

  /** Resolves once a result waits to be recorded. One recorder waits at a time. */
  readonly awaitResult: Effect.Effect<void> = Effect.async<void>((resume) => {
    if (this.results.length > 0) return resume(Effect.void)
    this.resultWaiter = () => resume(Effect.void)
  })

  /** Resolves once there is room to claim: at most a slot's worth buffered and room under the held bound. */
  readonly awaitRoom: Effect.Effect<void> = Effect.async<void>((resume) => {
    const check = () => {
      const { concurrency } = this.settings
      if (this.buffer.length <= concurrency && this.inFlight + this.buffer.length < HELD_SLOTS * concurrency && !this.backlogged) {
        return resume(Effect.void)
      }
      this.roomWaiter = check
    }
    check()
  })

  /** True when tries are running but fewer results wait than one record batch holds. */
  get worthLingering(): boolean {
    return this.inFlight > 0 && this.results.length < WEBHOOK_LIMITS.recordBatchSize
  }

  /** Takes up to one record batch of results (which may end a backlog: tries and claims resume). */
  takeResults(): ReadonlyArray<Finished> {
    const batch = this.results.slice(0, WEBHOOK_LIMITS.recordBatchSize)
    this.results = this.results.slice(batch.length)
    this.startFromBuffer()
    const wakeClaimer = this.roomWaiter
    this.roomWaiter = undefined
    wakeClaimer?.()
    return batch
  }

  private startFromBuffer(): void {
    while (this.inFlight < this.settings.concurrency && this.buffer.length > 0 && !this.stopped && !this.backlogged) {
      const { claim, delivery } = this.buffer.shift()!
      this.inFlight++
      // Started only with most of its lease ahead (the heartbeat keeps it from there); else handed back.
      if (Date.now() - claim.confirmedMs > CLAIM_START_WITHIN_MS) {
        this.finish({ delivery, claim, outcome: undefined, permanent: false, released: true })
      } else {
        const controller = new AbortController()
        this.running.set(delivery.id, controller)
        this.deliver(delivery, claim, controller.signal)
      }
    }
  }

  private finish(finished: Finished): void {
    this.running.delete(finished.delivery.id)
    this.results.push(finished)
    this.inFlight--
    const wakeRecorder = this.resultWaiter
    this.resultWaiter = undefined
    wakeRecorder?.()
    this.startFromBuffer()
    const wakeClaimer = this.roomWaiter
    this.roomWaiter = undefined
    wakeClaimer?.()
  }

  private deliver(delivery: ClaimedDelivery, claim: HeldClaim, signal: AbortSignal): void {
    // A subscription re-tagged after the delivery was queued is never sent another tag's event
    // (docs/webhooks.md#customers-and-tags): taken off the queue like a disabled one's.
    if (delivery.disabled || !tagMayReceive(delivery.subscription_tag, delivery.event_tags)) {
      this.finish({ delivery, claim, outcome: undefined, permanent: false })
      return
    }
    const now = Date.now()
    try {
      const body = eventPayload({
        id: delivery.event_id,
        type: delivery.event_type,
        program_id: delivery.program_id,
        tags: delivery.event_tags,
        created_at: delivery.event_created_at,
        data: delivery.event_data
      })
      const size = Buffer.byteLength(body)
      if (size > this.settings.maxPayloadBytes) {
        this.finish({ delivery, claim, outcome: oversizedPayload(size, this.settings.maxPayloadBytes, now), permanent: true })
        return
      }
      this.sender.sendAsync({ url: delivery.url, messageId: delivery.event_id, body, keys: this.keys.keysFor(delivery, now), signal }).then(
        (outcome) => this.finish({ delivery, claim, outcome, permanent: false }),
        (error) => this.finish({ delivery, claim, outcome: internalFailure(error), permanent: false })
      )
    } catch (error) {
      this.finish({ delivery, claim, outcome: internalFailure(error), permanent: false })
    }
  }
}
