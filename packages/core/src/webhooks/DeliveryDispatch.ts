import { Effect } from "effect"
import type { VaultService } from "../vault/Vault.js"
import { eventPayload, oversizedPayload, signingKeys, type TryResult } from "./DeliveryRules.js"
import { type ClaimedDelivery, WEBHOOK_LIMITS } from "./Records.js"
import type { DeliveryOutcome, WebhookSenderService } from "./WebhookSender.js"

/** The end of one claimed delivery's try, waiting to be recorded. */
export type Finished = TryResult<ClaimedDelivery>

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
  /** A claimed delivery not started within this is handed back unsent (its lease must outlive the try). */
  readonly timeoutMs: number
  readonly maxPayloadBytes: number
}

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
 * request), and their results queue for the recorder. The buffer holds at most two slots' worth.
 */
export class DeliveryDispatch {
  private inFlight = 0
  /** Ids of the deliveries whose try is running (a graceful stop must not hand these back). */
  private readonly running = new Set<string>()
  private buffer: Array<{ readonly delivery: ClaimedDelivery; readonly claimedAtMs: number }> = []
  private results: Array<Finished> = []
  private resultWaiter: (() => void) | undefined
  private roomWaiter: (() => void) | undefined
  private stopped = false

  constructor(
    private readonly sender: WebhookSenderService,
    private readonly keys: SigningKeyCache,
    private readonly settings: DispatchSettings
  ) {}

  /** How many deliveries to claim now: enough for every slot and as many buffered, at most one claim batch. */
  get wanted(): number {
    if (this.stopped || this.buffer.length > this.settings.concurrency / 2) return 0
    return Math.max(0, Math.min(2 * this.settings.concurrency - this.inFlight - this.buffer.length, WEBHOOK_LIMITS.claimBatchSize))
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
    return [...this.running]
  }

  /** Takes claimed deliveries and starts as many as there are free slots. */
  add(claimed: ReadonlyArray<ClaimedDelivery>): void {
    const claimedAtMs = Date.now()
    for (const delivery of claimed) this.buffer.push({ delivery, claimedAtMs })
    this.startFromBuffer()
  }

  /** Stops starting tries and forgets the buffered ones (the store hands them back). */
  stop(): void {
    this.stopped = true
    this.buffer = []
  }

  /** Resolves once a result waits to be recorded. One recorder waits at a time. */
  readonly awaitResult: Effect.Effect<void> = Effect.async<void>((resume) => {
    if (this.results.length > 0) return resume(Effect.void)
    this.resultWaiter = () => resume(Effect.void)
  })

  /** Resolves once there is room to claim: the buffer at most half full and slots to spare. */
  readonly awaitRoom: Effect.Effect<void> = Effect.async<void>((resume) => {
    const check = () => {
      const { concurrency } = this.settings
      if (this.buffer.length <= concurrency / 2 && this.inFlight + this.buffer.length < 2 * concurrency) {
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

  /** Takes up to one record batch of results. */
  takeResults(): ReadonlyArray<Finished> {
    const batch = this.results.slice(0, WEBHOOK_LIMITS.recordBatchSize)
    this.results = this.results.slice(batch.length)
    return batch
  }

  private startFromBuffer(): void {
    while (this.inFlight < this.settings.concurrency && this.buffer.length > 0 && !this.stopped) {
      const { claimedAtMs, delivery } = this.buffer.shift()!
      this.inFlight++
      if (Date.now() - claimedAtMs > this.settings.timeoutMs) {
        this.finish({ delivery, outcome: undefined, permanent: false, released: true })
      } else {
        this.running.add(delivery.id)
        this.deliver(delivery)
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

  private deliver(delivery: ClaimedDelivery): void {
    if (delivery.disabled) {
      this.finish({ delivery, outcome: undefined, permanent: false })
      return
    }
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
      if (size > this.settings.maxPayloadBytes) {
        this.finish({ delivery, outcome: oversizedPayload(size, this.settings.maxPayloadBytes, now), permanent: true })
        return
      }
      this.sender.sendAsync({ url: delivery.url, messageId: delivery.event_id, body, keys: this.keys.keysFor(delivery, now) }).then(
        (outcome) => this.finish({ delivery, outcome, permanent: false }),
        (error) => this.finish({ delivery, outcome: internalFailure(error), permanent: false })
      )
    } catch (error) {
      this.finish({ delivery, outcome: internalFailure(error), permanent: false })
    }
  }
}
