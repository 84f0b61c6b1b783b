import { SqlClient, type SqlError, type Statement } from "@effect/sql"
import type { Row } from "@effect/sql/SqlConnection"
import { Effect, Layer, Option, Schedule, Stream } from "effect"
import type { IssuingEvent } from "../events/Records.js"
import { newId } from "../platform/Ids.js"
import type { PageWindow } from "../platform/Paging.js"
import { boolParam, fromJson, toBool, toInt, toIso, toIsoOrNull } from "../platform/Rows.js"
import type { AttemptStatus, ClaimedDelivery, StoredSubscription, WebhookAttempt } from "./Records.js"
import { WEBHOOK_NOTIFY_CHANNEL, WebhookStore, WebhookWakeups } from "./WebhookStore.js"

const SUBSCRIPTION_ORDER: Record<string, string> = { created_at: "created_at", updated_at: "updated_at" }
const ATTEMPT_ORDER: Record<string, string> = { created_at: "created_at", attempted_at: "attempted_at" }

const toSubscription = (row: any): StoredSubscription => ({
  id: row.id,
  object: "webhook_subscription",
  program_id: row.program_id,
  url: row.url,
  description: row.description,
  event_types: fromJson<Array<string>>(row.event_types),
  disabled: toBool(row.disabled),
  secret_sealed: row.secret_sealed,
  previous_secret_sealed: row.previous_secret_sealed ?? null,
  previous_secret_expires_at: toIsoOrNull(row.previous_secret_expires_at),
  created_at: toIso(row.created_at),
  updated_at: toIso(row.updated_at)
})

const toAttempt = (row: any): WebhookAttempt => ({
  id: row.id,
  object: "webhook_attempt",
  event_id: row.event_id,
  webhook_subscription_id: row.subscription_id,
  status: row.status as AttemptStatus,
  response_code: toInt(row.response_code),
  response_body: row.response_body,
  attempted_at: toIso(row.attempted_at),
  created_at: toIso(row.created_at),
  updated_at: toIso(row.updated_at)
})

const toClaimed = (row: any): ClaimedDelivery => ({
  id: String(row.id),
  program_id: row.program_id,
  subscription_id: row.subscription_id,
  event_id: row.event_id,
  attempt_count: toInt(row.attempt_count),
  event_type: row.event_type,
  event_created_at: toIso(row.event_created_at),
  event_data: row.event_data,
  url: row.url,
  disabled: toBool(row.disabled),
  secret_sealed: row.secret_sealed,
  previous_secret_sealed: row.previous_secret_sealed ?? null,
  previous_secret_expires_at: toIsoOrNull(row.previous_secret_expires_at),
  subscription_updated_at: toIso(row.subscription_updated_at)
})

/** Columns a claimed delivery is read with, over `d` (deliveries), `e` (events) and `s` (subscriptions). */
const CLAIMED_COLUMNS = `d.id, d.program_id, d.subscription_id, d.event_id, d.attempt_count,
  e.type AS event_type, e.created_at AS event_created_at, e.data AS event_data,
  s.url, s.disabled, s.secret_sealed, s.previous_secret_sealed, s.previous_secret_expires_at,
  s.updated_at AS subscription_updated_at`

/**
 * THE SQLite webhook fan-out of `count` events: one queued delivery per enabled subscription of
 * the event's program holding its type. Parameters: (id, program_id, type, created_at) of each
 * event, in order. `enqueueEvents` below and the ledger's synchronous SQLite posting
 * (ledger/SqlitePosting.ts) both run this text, so the two cannot drift.
 */
export const sqliteFanOutSql = (count: number): string =>
  `INSERT INTO issuing_webhook_deliveries
     (id, program_id, subscription_id, event_id, attempt_count, next_attempt_at, claim_token, created_at)
   SELECT ev.column1 || ':' || et.subscription_id, et.program_id, et.subscription_id, ev.column1, 0,
          ev.column4, NULL, ev.column4
   FROM (VALUES ${Array.from({ length: count }, () => "(?, ?, ?, ?)").join(", ")}) AS ev
   JOIN issuing_webhook_event_types et ON et.program_id = ev.column2 AND et.event_type = ev.column3
   JOIN issuing_webhook_subscriptions s ON s.id = et.subscription_id
   WHERE s.disabled = false`

/** The parameters of `sqliteFanOutSql(events.length)`. */
export const sqliteFanOutParams = (events: ReadonlyArray<IssuingEvent>): Array<string> =>
  events.flatMap((e) => [e.id, e.program_id, e.type, e.created_at])

/**
 * The webhook port over SqlClient, one SQL text for both dialects; dialect branches only for
 * row locking (`FOR UPDATE SKIP LOCKED`), NOTIFY and counting inserted rows.
 */
export const SqlWebhookStoreLive = Layer.scoped(
  WebhookStore,
  Effect.gen(function*() {
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const isPg = sql.onDialectOrElse({ pg: () => true, orElse: () => false })
    const wakeups = yield* Effect.serviceOption(WebhookWakeups)
    const scope = yield* Effect.scope

    // The in-process doorbell: rung after an enqueue (SQLite: a worker's claim waits for the
    // connection, so it runs after the enqueuing commit) and by database notifications.
    let pending = false
    let waiters: Array<() => void> = []
    const ring = () => {
      pending = true
      const current = waiters
      waiters = []
      for (const wake of current) wake()
    }
    let listening = false
    const listen = Effect.suspend(() => {
      if (listening || Option.isNone(wakeups)) return Effect.void
      listening = true
      return wakeups.value.notifications.pipe(
        Stream.runForEach(() => Effect.sync(ring)),
        Effect.catchAllCause((cause) => Effect.logDebug("Webhook notification listener stopped; retrying", cause)),
        Effect.repeat(Schedule.spaced("1 second")),
        Effect.forkIn(scope),
        Effect.asVoid
      )
    })

    /** Runs an INSERT … SELECT and returns how many rows it inserted (notifying workers when any). */
    const insertCounted = (insert: Statement.Statement<Row>) =>
      isPg
        ? sql`WITH ins AS (${insert} RETURNING 1)
              SELECT n, CASE WHEN n > 0 THEN pg_notify(${WEBHOOK_NOTIFY_CHANNEL}, 'due') END AS notified
              FROM (SELECT COUNT(*) AS n FROM ins) c`.pipe(Effect.map((rows) => toInt(rows[0]!.n)))
        : Effect.zipRight(insert, sql`SELECT changes() AS n`).pipe(
          Effect.map((rows) => toInt(rows[0]!.n)),
          Effect.tap((n) => (n > 0 ? Effect.sync(ring) : Effect.void))
        )

    /** Fan-out of several events in one statement (the events of one change, e.g. a transfer's three). */
    const enqueueEvents = (events: ReadonlyArray<IssuingEvent>): Effect.Effect<number, SqlError.SqlError> =>
      events.length === 0
        ? Effect.succeed(0)
        : isPg
        ? sql`SELECT COALESCE(SUM(issuing_webhook_fan_out(e.id, e.program_id, e.type, e.created_at, ${WEBHOOK_NOTIFY_CHANNEL})), 0) AS n
              FROM unnest(${events.map((e) => e.id)}::text[], ${events.map((e) => e.program_id)}::text[],
                          ${events.map((e) => e.type)}::text[], ${events.map((e) => e.created_at)}::timestamptz[])
                AS e(id, program_id, type, created_at)`.pipe(Effect.map((rows) => toInt(rows[0]!.n)))
        : insertCounted(sql.unsafe(sqliteFanOutSql(events.length), sqliteFanOutParams(events)))

    const orderClause = (window: PageWindow, columns: Record<string, string>) => {
      const column = columns[window.orderBy] ?? "created_at"
      const direction = window.descending ? "DESC" : "ASC"
      return sql.unsafe(`${column} ${direction}, id ${direction}`)
    }
    const subscriptionWhere = (programId: string, disabled: boolean | undefined) =>
      disabled === undefined
        ? sql`program_id = ${programId}`
        : sql`program_id = ${programId} AND disabled = ${boolParam(disabled)}`
    const attemptWhere = (programId: string, filter: { event_id?: string | undefined; webhook_subscription_id?: string | undefined; status?: string | undefined }) => {
      const parts = [sql`program_id = ${programId}`]
      if (filter.event_id !== undefined) parts.push(sql`event_id = ${filter.event_id}`)
      if (filter.webhook_subscription_id !== undefined) parts.push(sql`subscription_id = ${filter.webhook_subscription_id}`)
      if (filter.status !== undefined) parts.push(sql`status = ${filter.status}`)
      return sql.and(parts)
    }
    const insertEventTypes = (subscription: StoredSubscription) =>
      subscription.event_types.length === 0
        ? Effect.void
        : sql`INSERT INTO issuing_webhook_event_types ${
          sql.insert(subscription.event_types.map((type) => ({
            subscription_id: subscription.id,
            program_id: subscription.program_id,
            event_type: type
          })))
        }`.pipe(Effect.asVoid)

    return {
      insertSubscription: (subscription) =>
        Effect.zipRight(
          sql`INSERT INTO issuing_webhook_subscriptions
                (id, program_id, url, description, event_types, disabled, secret_sealed, previous_secret_sealed,
                 previous_secret_expires_at, failing_since, created_at, updated_at)
              VALUES (${subscription.id}, ${subscription.program_id}, ${subscription.url}, ${subscription.description},
                      ${JSON.stringify(subscription.event_types)}, ${boolParam(subscription.disabled)},
                      ${subscription.secret_sealed}, ${subscription.previous_secret_sealed},
                      ${subscription.previous_secret_expires_at}, NULL, ${subscription.created_at},
                      ${subscription.updated_at})`,
          insertEventTypes(subscription)
        ),
      findSubscription: (programId, id, forUpdate = false) =>
        // SQLite writes are BEGIN IMMEDIATE (one writer), so only PostgreSQL needs the row lock.
        (forUpdate && isPg
          ? sql`SELECT * FROM issuing_webhook_subscriptions WHERE id = ${id} AND program_id = ${programId} FOR UPDATE`
          : sql`SELECT * FROM issuing_webhook_subscriptions WHERE id = ${id} AND program_id = ${programId}`).pipe(
          Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toSubscription))
        ),
      listSubscriptions: (programId, disabled, window) =>
        Effect.all({
          rows: sql`SELECT * FROM issuing_webhook_subscriptions WHERE ${subscriptionWhere(programId, disabled)}
                    ORDER BY ${orderClause(window, SUBSCRIPTION_ORDER)} LIMIT ${window.limit} OFFSET ${window.offset}`.pipe(
            Effect.map((rows) => rows.map(toSubscription))
          ),
          total: sql`SELECT COUNT(*) AS n FROM issuing_webhook_subscriptions WHERE ${subscriptionWhere(programId, disabled)}`.pipe(
            Effect.map((rows) => toInt(rows[0]!.n))
          )
        }),
      countSubscriptions: (programId) =>
        sql`SELECT COUNT(*) AS n FROM issuing_webhook_subscriptions WHERE program_id = ${programId}`.pipe(
          Effect.map((rows) => toInt(rows[0]!.n))
        ),
      subscriptionsForType: (programId, type) =>
        sql`SELECT s.* FROM issuing_webhook_event_types et
            JOIN issuing_webhook_subscriptions s ON s.id = et.subscription_id
            WHERE et.program_id = ${programId} AND et.event_type = ${type}
            ORDER BY s.created_at, s.id`.pipe(Effect.map((rows) => rows.map(toSubscription))),
      // The event types are replaced only when the subscription row of that program was updated, so
      // a mismatched program can never move another program's fan-out.
      updateSubscription: (subscription) =>
        Effect.gen(function*() {
          const updated = yield* sql`UPDATE issuing_webhook_subscriptions
              SET url = ${subscription.url}, description = ${subscription.description},
                  event_types = ${JSON.stringify(subscription.event_types)}, disabled = ${boolParam(subscription.disabled)},
                  secret_sealed = ${subscription.secret_sealed}, previous_secret_sealed = ${subscription.previous_secret_sealed},
                  previous_secret_expires_at = ${subscription.previous_secret_expires_at},
                  failing_since = CASE WHEN disabled = true AND ${boolParam(subscription.disabled)} = 0 THEN NULL
                                       ELSE failing_since END,
                  updated_at = ${subscription.updated_at}
              WHERE id = ${subscription.id} AND program_id = ${subscription.program_id}
              RETURNING id`
          if (updated.length === 0) return
          yield* sql`DELETE FROM issuing_webhook_event_types
                     WHERE subscription_id = ${subscription.id} AND program_id = ${subscription.program_id}`
          yield* insertEventTypes(subscription)
        }),
      deleteSubscription: (programId, id) =>
        Effect.gen(function*() {
          yield* sql`DELETE FROM issuing_webhook_deliveries WHERE subscription_id = ${id} AND program_id = ${programId}`
          yield* sql`DELETE FROM issuing_webhook_event_types WHERE subscription_id = ${id} AND program_id = ${programId}`
          const rows = yield* sql`DELETE FROM issuing_webhook_subscriptions WHERE id = ${id} AND program_id = ${programId}
                                  RETURNING id`
          return rows.length > 0
        }),
      subscriptionsSealedWithOtherKeys: (currentKeyId, limit) => {
        const prefix = `v1.${currentKeyId}.`
        return sql`SELECT * FROM issuing_webhook_subscriptions
                   WHERE substr(secret_sealed, 1, ${prefix.length}) <> ${prefix}
                      OR (previous_secret_sealed IS NOT NULL AND substr(previous_secret_sealed, 1, ${prefix.length}) <> ${prefix})
                   ORDER BY id LIMIT ${limit}`.pipe(Effect.map((rows) => rows.map(toSubscription)))
      },
      resealSubscription: (id, expected, next) =>
        sql`UPDATE issuing_webhook_subscriptions
            SET secret_sealed = ${next.secret_sealed}, previous_secret_sealed = ${next.previous_secret_sealed},
                previous_secret_expires_at = ${next.previous_secret_expires_at}
            WHERE id = ${id} AND secret_sealed = ${expected.secret_sealed}
              AND COALESCE(previous_secret_sealed, '') = ${expected.previous_secret_sealed ?? ""}
            RETURNING id`.pipe(Effect.map((rows) => rows.length === 1)),
      dropQueued: (subscriptionIds) =>
        subscriptionIds.length === 0
          ? Effect.void
          : sql`DELETE FROM issuing_webhook_deliveries WHERE ${sql.in("subscription_id", subscriptionIds)}`.pipe(Effect.asVoid),

      // On PostgreSQL the fan-out is the function `issuing_webhook_fan_out` (store-pg migration
      // 0011), which the ledger's one-round-trip posting also calls, so the two paths cannot drift;
      // change it there (a new migration) together with `sqliteFanOutSql` above. `enqueueEvent` is
      // `enqueueEvents` of one event: one SQL text per dialect.
      enqueueEvent: (event) => enqueueEvents([event]),
      enqueueEvents,
      // Ids are the replay's own id + the event id: unique, cheap, and in index order (UUIDv7s).
      enqueueReplay: (programId, subscriptionId, beginIso, endIso, nowIso) =>
        insertCounted(
          sql`INSERT INTO issuing_webhook_deliveries
                (id, program_id, subscription_id, event_id, attempt_count, next_attempt_at, claim_token, created_at)
              SELECT ${newId()} || ':' || e.id, e.program_id, ${subscriptionId}, e.id, 0, ${nowIso}, NULL, ${nowIso}
              FROM issuing_events e
              WHERE e.program_id = ${programId}
                AND EXISTS (SELECT 1 FROM issuing_webhook_subscriptions s
                            WHERE s.id = ${subscriptionId} AND s.program_id = ${programId} AND s.disabled = false)
                AND e.type IN (SELECT event_type FROM issuing_webhook_event_types WHERE subscription_id = ${subscriptionId})
                AND e.created_at >= ${beginIso} AND e.created_at <= ${endIso}`
        ),
      eventSpan: (programId, beginIso, endIso) =>
        sql<{ readonly first: unknown; readonly last: unknown }>`
          SELECT MIN(created_at) AS first, MAX(created_at) AS last FROM issuing_events
          WHERE program_id = ${programId} AND created_at >= ${beginIso} AND created_at <= ${endIso}`.pipe(
          Effect.map(([row]) =>
            row?.first != null && row.last != null
              ? Option.some({ first: toIso(row.first), last: toIso(row.last) })
              : Option.none()
          )
        ),
      // Selected from the subscription's own row: a subscription deleted or disabled while a resend
      // was in flight gets no retry (and a deleted one no foreign-key failure after the send).
      enqueue: (delivery) =>
        insertCounted(
          sql`INSERT INTO issuing_webhook_deliveries
                (id, program_id, subscription_id, event_id, attempt_count, next_attempt_at, claim_token, created_at)
              SELECT ${newId()}, ${delivery.program_id}, s.id, ${delivery.event_id},
                     ${delivery.attempt_count}, ${delivery.next_attempt_at}, NULL, ${delivery.next_attempt_at}
              FROM issuing_webhook_subscriptions s
              WHERE s.id = ${delivery.subscription_id} AND s.program_id = ${delivery.program_id} AND s.disabled = false`
        ).pipe(Effect.asVoid),
      claimDue: (token, nowIso, leaseUntilIso, limit) =>
        isPg
          ? sql`WITH claimed AS (
                  UPDATE issuing_webhook_deliveries SET next_attempt_at = ${leaseUntilIso}, claim_token = ${token}
                  WHERE id IN (SELECT id FROM issuing_webhook_deliveries WHERE next_attempt_at <= ${nowIso}
                               ORDER BY next_attempt_at LIMIT ${limit} FOR UPDATE SKIP LOCKED)
                  RETURNING id, program_id, subscription_id, event_id, attempt_count)
                SELECT ${sql.unsafe(CLAIMED_COLUMNS)} FROM claimed d
                JOIN issuing_events e ON e.id = d.event_id
                JOIN issuing_webhook_subscriptions s ON s.id = d.subscription_id`.pipe(
            Effect.map((rows) => rows.map(toClaimed))
          )
          : Effect.gen(function*() {
            const claimed = yield* sql`UPDATE issuing_webhook_deliveries SET next_attempt_at = ${leaseUntilIso}, claim_token = ${token}
                WHERE id IN (SELECT id FROM issuing_webhook_deliveries WHERE next_attempt_at <= ${nowIso}
                             ORDER BY next_attempt_at LIMIT ${limit})
                RETURNING id`
            if (claimed.length === 0) return []
            const rows = yield* sql`SELECT ${sql.unsafe(CLAIMED_COLUMNS)} FROM issuing_webhook_deliveries d
                JOIN issuing_events e ON e.id = d.event_id
                JOIN issuing_webhook_subscriptions s ON s.id = d.subscription_id
                WHERE ${sql.in("d.id", claimed.map((row: any) => row.id))} AND d.claim_token = ${token}`
            return rows.map(toClaimed)
          }),
      completeDeliveries: (token, ids) =>
        ids.length === 0
          ? Effect.void
          : sql`DELETE FROM issuing_webhook_deliveries WHERE ${sql.in("id", ids)} AND claim_token = ${token}`.pipe(
            Effect.asVoid
          ),
      rescheduleDelivery: (token, id, attemptCount, nextAttemptIso) =>
        sql`UPDATE issuing_webhook_deliveries
            SET attempt_count = ${attemptCount}, next_attempt_at = ${nextAttemptIso}, claim_token = NULL
            WHERE id = ${id} AND claim_token = ${token}`.pipe(Effect.asVoid),
      releaseClaims: (token, nowIso, keep) =>
        (keep.length === 0
          ? sql`UPDATE issuing_webhook_deliveries SET next_attempt_at = ${nowIso}, claim_token = NULL
                WHERE claim_token = ${token}`
          : sql`UPDATE issuing_webhook_deliveries SET next_attempt_at = ${nowIso}, claim_token = NULL
                WHERE claim_token = ${token} AND NOT ${sql.in("id", keep)}`).pipe(Effect.asVoid),
      nextDueAt: sql`SELECT MIN(next_attempt_at) AS t FROM issuing_webhook_deliveries`.pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]?.t), toIso))
      ),

      markFailing: (subscriptionIds, nowIso) =>
        subscriptionIds.length === 0
          ? Effect.void
          : sql`UPDATE issuing_webhook_subscriptions SET failing_since = ${nowIso}
                WHERE ${sql.in("id", subscriptionIds)} AND failing_since IS NULL`.pipe(Effect.asVoid),
      clearFailing: (subscriptionIds) =>
        subscriptionIds.length === 0
          ? Effect.void
          : sql`UPDATE issuing_webhook_subscriptions SET failing_since = NULL
                WHERE ${sql.in("id", subscriptionIds)} AND failing_since IS NOT NULL`.pipe(Effect.asVoid),
      disableSubscriptions: (ids, nowIso, failingBefore) =>
        Effect.gen(function*() {
          if (ids.length === 0) return []
          const rows = yield* (failingBefore === undefined
            ? sql`UPDATE issuing_webhook_subscriptions SET disabled = true, updated_at = ${nowIso}
                  WHERE ${sql.in("id", ids)} AND disabled = false RETURNING id`
            : sql`UPDATE issuing_webhook_subscriptions SET disabled = true, updated_at = ${nowIso}
                  WHERE ${sql.in("id", ids)} AND disabled = false AND failing_since <= ${failingBefore} RETURNING id`)
          const disabled = rows.map((row: any) => row.id as string)
          if (disabled.length > 0) {
            yield* sql`DELETE FROM issuing_webhook_deliveries WHERE ${sql.in("subscription_id", disabled)}`
          }
          return disabled
        }),

      insertAttempts: (attempts) =>
        attempts.length === 0
          ? Effect.void
          : sql`INSERT INTO issuing_webhook_attempts ${
            sql.insert(attempts.map((attempt) => ({
              id: attempt.id,
              program_id: attempt.program_id,
              event_id: attempt.event_id,
              subscription_id: attempt.webhook_subscription_id,
              status: attempt.status,
              response_code: attempt.response_code,
              response_body: attempt.response_body,
              attempted_at: attempt.attempted_at,
              created_at: attempt.created_at,
              updated_at: attempt.updated_at
            })))
          }`.pipe(Effect.asVoid),
      listAttempts: (programId, filter, window) =>
        Effect.all({
          rows: sql`SELECT * FROM issuing_webhook_attempts WHERE ${attemptWhere(programId, filter)}
                    ORDER BY ${orderClause(window, ATTEMPT_ORDER)} LIMIT ${window.limit} OFFSET ${window.offset}`.pipe(
            Effect.map((rows) => rows.map(toAttempt))
          ),
          total: sql`SELECT COUNT(*) AS n FROM issuing_webhook_attempts WHERE ${attemptWhere(programId, filter)}`.pipe(
            Effect.map((rows) => toInt(rows[0]!.n))
          )
        }),

      wake: Effect.sync(ring),
      waitForWork: (maxWaitMs) =>
        Effect.zipRight(
          listen,
          Effect.async<void>((resume) => {
            if (pending) {
              pending = false
              return resume(Effect.void)
            }
            let done = false
            const wake = () => {
              if (done) return
              done = true
              clearTimeout(timer)
              pending = false
              resume(Effect.void)
            }
            const timer = setTimeout(wake, Math.max(0, maxWaitMs))
            waiters.push(wake)
            return Effect.sync(() => {
              done = true
              clearTimeout(timer)
              waiters = waiters.filter((waiter) => waiter !== wake)
            })
          })
        )
    }
  })
)
