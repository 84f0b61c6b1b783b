import type { InvalidRequest } from "../platform/Errors.js"
import type { SqlClient, SqlError } from "@effect/sql"
import { Context, type Effect, type Option, type Stream } from "effect"
import type { EventFanOutService } from "../events/EventFanOut.js"
import type { IssuingEvent } from "../events/Records.js"
import type { PageWindow } from "../platform/Paging.js"
import type { WebhookAttemptOrderField, WebhookSubscriptionOrderField } from "./OrderFields.js"
import type { StoredAttempt } from "./DeliveryRules.js"
import type { AttemptFilter, ClaimedDelivery, StoredPortalSession, StoredSubscription, WebhookAttempt } from "./Records.js"

/** A delivery to put on the queue directly (a resend whose first try failed). */
export interface QueuedDelivery {
  readonly program_id: string
  readonly subscription_id: string
  readonly event_id: string
  readonly attempt_count: number
  readonly next_attempt_at: string
}

/** The sealed signing secrets of a subscription (re-sealed after a vault key rotation). */
export interface SealedSecrets {
  readonly secret_sealed: string
  readonly previous_secret_sealed: string | null
  readonly previous_secret_expires_at: string | null
}

/** A held delivery's next try: its tries so far and when it is due. */
export interface DeliveryRetry {
  readonly id: string
  readonly attemptCount: number
  readonly nextAttemptIso: string
}

/**
 * What a worker writes for a batch of its finished tries (docs/webhooks.md#running-the-worker): the
 * attempts, the retries back on the queue, the finished deliveries off it (both only while this
 * worker's token still holds them), and the subscriptions' failing streaks ended or started.
 */
export interface FinishedTries {
  readonly attempts: ReadonlyArray<StoredAttempt>
  readonly retries: ReadonlyArray<DeliveryRetry>
  /** Ids of the deliveries taken off the queue. */
  readonly finished: ReadonlyArray<string>
  readonly clearFailing: ReadonlyArray<string>
  readonly markFailing: ReadonlyArray<string>
  readonly nowIso: string
}

/**
 * Storage port of webhooks: subscriptions, the delivery queue (leased claims) and attempts. It is
 * the events' fan-out too (`enqueueEvents`, `appendAndEnqueueAtOnce`: EventFanOut, the same rows
 * as `enqueueEvent` of each event).
 */
export interface WebhookStoreService extends EventFanOutService {
  readonly insertSubscription: (subscription: StoredSubscription) => Effect.Effect<void, SqlError.SqlError>
  /**
   * A subscription of the program; `forUpdate` (inside a transaction) locks its row until commit, so a
   * read-modify-write (PATCH, rotate-secret) cannot overwrite a concurrent rotation or disabling.
   */
  readonly findSubscription: (
    programId: string,
    id: string,
    forUpdate?: boolean
  ) => Effect.Effect<Option.Option<StoredSubscription>, SqlError.SqlError>
  /** The program's subscriptions, only the (dis)abled ones or one tag's when the filter says so. */
  readonly listSubscriptions: (
    programId: string,
    filter: { readonly disabled?: boolean | undefined; readonly tag?: string | undefined },
    window: PageWindow<WebhookSubscriptionOrderField>
  ) => Effect.Effect<{ readonly rows: ReadonlyArray<StoredSubscription>; readonly total: number }, SqlError.SqlError | InvalidRequest>
  /**
   * The program's subscriptions (only one tag's with `tag`); inside a transaction, no concurrent
   * creation can count them until it ends.
   */
  readonly countSubscriptions: (programId: string, tag?: string) => Effect.Effect<number, SqlError.SqlError>
  /** Enabled and disabled subscriptions of the program whose event_types hold `type`. */
  readonly subscriptionsForType: (programId: string, type: string) => Effect.Effect<ReadonlyArray<StoredSubscription>, SqlError.SqlError>
  /** Saves every mutable field (url, description, event types, disabled, secrets, updated_at). */
  readonly updateSubscription: (subscription: StoredSubscription) => Effect.Effect<void, SqlError.SqlError>
  /** Deletes a subscription with its queued deliveries; false when there was none. */
  readonly deleteSubscription: (programId: string, id: string) => Effect.Effect<boolean, SqlError.SqlError>
  /**
   * Up to `limit` subscriptions (of every program, by id) whose secret or previous secret is sealed
   * under a vault key other than `currentKeyId` (sealed values read `v1.<keyId>.<payload>`).
   */
  readonly subscriptionsSealedWithOtherKeys: (
    currentKeyId: string,
    limit: number
  ) => Effect.Effect<ReadonlyArray<StoredSubscription>, SqlError.SqlError>
  /**
   * Replaces a subscription's sealed secrets if they are still `expected` (compare-and-set: a
   * rotation meanwhile wins); true when replaced. `updated_at` stays: the secrets themselves are
   * unchanged.
   */
  readonly resealSubscription: (id: string, expected: SealedSecrets, next: SealedSecrets) => Effect.Effect<boolean, SqlError.SqlError>
  /** Removes the queued deliveries of subscriptions (they were disabled). */
  readonly dropQueued: (subscriptionIds: ReadonlyArray<string>) => Effect.Effect<void, SqlError.SqlError>

  /** Fan-out: one delivery per enabled subscription of the event's program holding its type, in one statement. */
  readonly enqueueEvent: (event: IssuingEvent) => Effect.Effect<number, SqlError.SqlError>
  /**
   * Replay: one delivery per event of the window whose type the subscription holds, in one
   * statement. With the subscription's `tag`, only the events that carry it, read through the
   * tag's own index; nothing when the subscription's tag is no longer `tag`.
   */
  readonly enqueueReplay: (
    programId: string,
    subscriptionId: string,
    tag: string | null,
    beginIso: string,
    endIso: string,
    nowIso: string
  ) => Effect.Effect<number, SqlError.SqlError>
  /**
   * The created_at of the program's first and last event within [begin, end] (both inclusive),
   * of those that carry `tag` when one is given, or none when the window holds no such event: two
   * index probes, however many events it holds.
   */
  readonly eventSpan: (
    programId: string,
    tag: string | null,
    beginIso: string,
    endIso: string
  ) => Effect.Effect<Option.Option<{ readonly first: string; readonly last: string }>, SqlError.SqlError>
  /** Queues one delivery, unless its subscription is gone or disabled. */
  readonly enqueue: (delivery: QueuedDelivery) => Effect.Effect<void, SqlError.SqlError>
  /** Claims up to `limit` due deliveries under `token` until `leaseUntil`. */
  readonly claimDue: (
    token: string,
    nowIso: string,
    leaseUntilIso: string,
    limit: number
  ) => Effect.Effect<ReadonlyArray<ClaimedDelivery>, SqlError.SqlError>
  /**
   * `claimDue`, and in the same round trip when the queue's next delivery after `nowIso` falls due
   * (a retry, a lease ending): the claim loop's one statement per round. Run it outside a
   * transaction: on PostgreSQL its commit does not wait for the WAL flush (a claim is a lease, not
   * a fact to keep; docs/operations.md#claims-and-leases).
   */
  readonly claimDueWithNext: (
    token: string,
    nowIso: string,
    leaseUntilIso: string,
    limit: number
  ) => Effect.Effect<{ readonly claimed: ReadonlyArray<ClaimedDelivery>; readonly nextDueAt: Option.Option<string> }, SqlError.SqlError>
  /**
   * Extends to `leaseUntilIso` the lease of those of `ids` this token still holds (the worker's
   * heartbeat; docs/operations.md#claims-and-leases), and returns the ids renewed. A delivery
   * another worker took over is left alone.
   */
  readonly renewClaims: (
    token: string,
    ids: ReadonlyArray<string>,
    leaseUntilIso: string
  ) => Effect.Effect<ReadonlyArray<string>, SqlError.SqlError>
  /** Removes deliveries this token still holds (delivered, given up, or skipped). */
  readonly completeDeliveries: (token: string, ids: ReadonlyArray<string>) => Effect.Effect<void, SqlError.SqlError>
  /** Puts a delivery this token holds back on the queue for a later try. */
  readonly rescheduleDelivery: (
    token: string,
    id: string,
    attemptCount: number,
    nextAttemptIso: string
  ) => Effect.Effect<void, SqlError.SqlError>
  /** `rescheduleDelivery` of many deliveries in one statement (a recorded batch's retries). */
  readonly rescheduleDeliveries: (token: string, retries: ReadonlyArray<DeliveryRetry>) => Effect.Effect<void, SqlError.SqlError>
  /**
   * Makes every delivery this token holds due now (graceful shutdown), except those in `keep` (tries
   * still running: they keep their lease and become due when it ends), and wakes the workers.
   */
  readonly releaseClaims: (token: string, nowIso: string, keep: ReadonlyArray<string>) => Effect.Effect<void, SqlError.SqlError>
  /**
   * Writes a batch of finished tries (run it inside a transaction: on SQLite it is several
   * statements). Safe to run again after a failure whose commit may have gone through: attempts are
   * inserted once per id, and the queue changes are compare-and-set on the claim token.
   */
  readonly recordTries: (token: string, tries: FinishedTries) => Effect.Effect<void, SqlError.SqlError>
  /**
   * Where the store can: `recordTries` all-or-nothing by itself, to run outside any transaction
   * (PostgreSQL: ONE statement of data-modifying CTEs in autocommit, one round trip instead of BEGIN,
   * five statements and COMMIT; SQLite with a writer thread: one transaction of its own there, its
   * fsync off the event loop). None on SQLite without a thread, whose statements cost no round trip.
   */
  readonly recordTriesAtOnce: Option.Option<(token: string, tries: FinishedTries) => Effect.Effect<void, SqlError.SqlError>>
  /** The earliest next_attempt_at on the queue. */
  readonly nextDueAt: Effect.Effect<Option.Option<string>, SqlError.SqlError>

  /** Notes failures: starts each subscription's failing streak unless one is running. */
  readonly markFailing: (subscriptionIds: ReadonlyArray<string>, nowIso: string) => Effect.Effect<void, SqlError.SqlError>
  /** Notes successes: ends each subscription's failing streak. */
  readonly clearFailing: (subscriptionIds: ReadonlyArray<string>) => Effect.Effect<void, SqlError.SqlError>
  /**
   * Disables enabled subscriptions among `ids` (all of them, or only those failing since before
   * `failingBefore`), drops their queued deliveries, and returns the ids disabled.
   */
  readonly disableSubscriptions: (
    ids: ReadonlyArray<string>,
    nowIso: string,
    failingBefore: string | undefined
  ) => Effect.Effect<ReadonlyArray<string>, SqlError.SqlError>

  readonly insertAttempts: (attempts: ReadonlyArray<StoredAttempt>) => Effect.Effect<void, SqlError.SqlError>
  readonly listAttempts: (
    programId: string,
    filter: AttemptFilter,
    window: PageWindow<WebhookAttemptOrderField>
  ) => Effect.Effect<{ readonly rows: ReadonlyArray<WebhookAttempt>; readonly total: number }, SqlError.SqlError | InvalidRequest>

  /** Stores an endpoint portal session (its token's hash only). */
  readonly insertPortalSession: (session: StoredPortalSession) => Effect.Effect<void, SqlError.SqlError>
  /** The session of a token hash, unless the key (or OAuth grant) that created it was revoked since; expiry is the caller's check. */
  readonly findPortalSession: (tokenHash: string) => Effect.Effect<Option.Option<StoredPortalSession>, SqlError.SqlError>
  /** Deletes sessions that expired before `before`; returns how many. */
  readonly purgePortalSessions: (before: string) => Effect.Effect<number, SqlError.SqlError>

  /** Resolves when deliveries may be due (an enqueue here, a database notification) or after `maxWaitMs`. */
  readonly waitForWork: (maxWaitMs: number) => Effect.Effect<void>
  /** Wakes this process's waiting workers (after a commit that changed what is due). */
  readonly wake: Effect.Effect<void>
}

/** The webhook storage port. */
export class WebhookStore extends Context.Tag("@issuing/core/WebhookStore")<WebhookStore, WebhookStoreService>() {}

/** The PostgreSQL NOTIFY channel a commit that queued deliveries signals on. */
export const WEBHOOK_NOTIFY_CHANNEL = "issuing_webhook_deliveries"

/**
 * Cross-process wake-ups: `notifications` emits after another process's commit queued deliveries,
 * and `announce` tells the other processes that this one's did (called after the commit). The
 * PostgreSQL store provides it (LISTEN / NOTIFY, docs/webhooks.md#wake-ups-on-postgresql);
 * without it, workers rely on in-process signals and a fallback poll.
 */
export class WebhookWakeups extends Context.Tag("@issuing/core/WebhookWakeups")<
  WebhookWakeups,
  { readonly notifications: Stream.Stream<unknown, unknown>; readonly announce: Effect.Effect<void> }
>() {}

/**
 * A client of the delivery worker's own for its claims (a connection no other statement of the
 * process holds): on the store's pool, a claim waited for a connection behind every write in
 * flight, so a burst of writes delayed the delivery of events that had long committed
 * (docs/webhooks.md#the-claims-own-connection). The PostgreSQL store provides it; without it the
 * claim runs on the store's client (SQLite has one connection, and its claim runs after the
 * commit it follows anyway).
 */
export class WebhookClaimClient extends Context.Tag("@issuing/core/WebhookClaimClient")<WebhookClaimClient, SqlClient.SqlClient>() {}
