/** A webhook subscription as the API shows it (interface §2); never carries its secret. */
export interface WebhookSubscription {
  readonly id: string
  readonly object: "webhook_subscription"
  readonly url: string
  readonly description: string
  readonly event_types: ReadonlyArray<string>
  readonly disabled: boolean
  readonly created_at: string
  readonly updated_at: string
}

/** The subscription as created or rotated: the only responses that show its signing secret. */
export interface WebhookSubscriptionWithSecret extends WebhookSubscription {
  readonly secret: string
}

/** The stored subscription: sealed secrets and failure tracking beside the public fields. */
export interface StoredSubscription extends WebhookSubscription {
  readonly program_id: string
  /** The current signing secret, sealed by the vault. */
  readonly secret_sealed: string
  /** The secret replaced by the last rotation, still signing until `previous_secret_expires_at`. */
  readonly previous_secret_sealed: string | null
  readonly previous_secret_expires_at: string | null
}

/** Outcome of one delivery try (interface §3). */
export type AttemptStatus = "SUCCESS" | "FAILED"
export const ATTEMPT_STATUSES: ReadonlyArray<AttemptStatus> = ["SUCCESS", "FAILED"]

/** One delivery try, recorded when it ends (interface §2). */
export interface WebhookAttempt {
  readonly id: string
  readonly object: "webhook_attempt"
  readonly event_id: string
  readonly webhook_subscription_id: string
  readonly status: AttemptStatus
  readonly response_code: number
  readonly response_body: string
  readonly attempted_at: string
  readonly created_at: string
  readonly updated_at: string
}

/** The answer to a replay (interface §2). */
export interface WebhookReplay {
  readonly object: "webhook_replay"
  readonly webhook_subscription_id: string
  readonly begin: string
  readonly end: string
  readonly events_queued: number
}

/** A queued delivery claimed by a worker, joined with what sending it needs. */
export interface ClaimedDelivery {
  readonly id: string
  readonly program_id: string
  readonly subscription_id: string
  readonly event_id: string
  /** Tries already made before this one. */
  readonly attempt_count: number
  readonly event_type: string
  readonly event_created_at: string
  /** The event's `data.object` as stored JSON text. */
  readonly event_data: string
  readonly url: string
  readonly disabled: boolean
  readonly secret_sealed: string
  readonly previous_secret_sealed: string | null
  readonly previous_secret_expires_at: string | null
  readonly subscription_updated_at: string
}

/** Limits (TigerStyle: a bound on everything). */
export const WEBHOOK_LIMITS = {
  /** Subscriptions per program. */
  maxSubscriptionsPerProgram: 100,
  /** Length of a subscription URL. */
  maxUrlLength: 2048,
  maxDescriptionLength: 500,
  /** Widest span of history one replay re-sends: 31 days from the window's first event to its last. */
  maxReplaySpanMs: 31 * 24 * 60 * 60 * 1000,
  /** How long a rotated-out secret keeps signing. */
  previousSecretTtlMs: 24 * 60 * 60 * 1000,
  /** Longest Retry-After honoured on 429/503; longer values are capped. */
  maxRetryAfterMs: 60 * 60 * 1000,
  /** Shortest delay after a 429/503 with Retry-After. */
  minRetryAfterMs: 1000,
  /** Deliveries claimed per query. */
  claimBatchSize: 200,
  /** Results recorded per transaction. */
  recordBatchSize: 500,
  /** How long the recorder waits for more results before committing, while deliveries are in flight. */
  recordLingerMs: 5,
  /** Beyond the delivery timeout, how long a claim is held before another worker may take it. */
  leaseMarginMs: 5000,
  /** Subscriptions re-sealed per transaction after a vault key rotation. */
  resealBatchSize: 200
} as const
