import type { SqlClient, SqlError, Statement } from "@effect/sql"
import type { Row } from "@effect/sql/SqlConnection"
import { Effect, Option } from "effect"
import { eventTagsSql, type IssuingEvent, storedEventDataOf } from "../events/Records.js"
import { newId } from "../platform/Ids.js"
import { toInt, toIso } from "../platform/Rows.js"
import { attemptStatements } from "./SqlWebhookAttempts.js"
import { claimedColumns, toClaimed } from "./SqlWebhookRows.js"
import { streakStatements } from "./SqlWebhookSubscriptions.js"
import type { DeliveryRetry, FinishedTries, WebhookStoreService } from "./WebhookStore.js"

type Sql = SqlClient.SqlClient

/** What a claim holder calls: complete, reschedule, hand back, record, and when the next is due. */
type ClaimStatementName =
  | "renewClaims"
  | "completeDeliveries"
  | "rescheduleDelivery"
  | "rescheduleDeliveries"
  | "releaseClaims"
  | "recordTries"
  | "recordTriesAtOnce"
  | "nextDueAt"

/** The delivery-queue part of the webhook port. */
export type QueueStatements = Pick<
  WebhookStoreService,
  | "dropQueued"
  | "enqueueEvent"
  | "enqueueEvents"
  | "appendAndEnqueueAtOnce"
  | "enqueueReplay"
  | "eventSpan"
  | "enqueue"
  | "claimDue"
  | "claimDueWithNext"
  | ClaimStatementName
>

/**
 * THE SQLite webhook fan-out of `count` events: one queued delivery per enabled subscription of
 * the event's program holding its type, and, when the subscription has a tag, for an event that
 * carries it (docs/webhooks.md#customers-and-tags). Parameters: (id, program_id, type, created_at) of each
 * event, in order. `enqueueEvents` below and the ledger's synchronous SQLite posting both run this
 * text, so the two cannot drift.
 */
export const sqliteFanOutSql = (count: number): string =>
  `INSERT INTO issuing_webhook_deliveries
     (id, program_id, subscription_id, event_id, attempt_count, next_attempt_at, claim_token, created_at)
   SELECT ev.column1 || ':' || et.subscription_id, et.program_id, et.subscription_id, ev.column1, 0,
          ev.column4, NULL, ev.column4
   FROM (VALUES ${Array.from({ length: count }, () => "(?, ?, ?, ?)").join(", ")}) AS ev
   JOIN issuing_webhook_event_types et ON et.program_id = ev.column2 AND et.event_type = ev.column3
   JOIN issuing_webhook_subscriptions s ON s.id = et.subscription_id
   WHERE s.disabled = false
     AND (s.tag IS NULL OR EXISTS (SELECT 1 FROM issuing_event_tags t WHERE t.event_id = ev.column1 AND t.tag = s.tag))`

/** The parameters of `sqliteFanOutSql(events.length)`. */
export const sqliteFanOutParams = (events: ReadonlyArray<IssuingEvent>): Array<string> =>
  events.flatMap((e) => [e.id, e.program_id, e.type, e.created_at])

/** After a write that made `n` deliveries due: the store's wake when any. */
const wakeIfAny =
  (queued: Effect.Effect<void>) =>
  (n: number): Effect.Effect<void> =>
    n > 0 ? queued : Effect.void

/**
 * Runs an INSERT … SELECT (or UPDATE) that makes deliveries due and returns how many rows it wrote,
 * then, when any, runs `queued`: the store's wake (on PostgreSQL it waits for the commit and
 * announces it to the other processes; SQLite rings this process's workers, whose claim waits for
 * the connection, so it runs after the enqueuing commit).
 */
const writeCounted = (sql: Sql, queued: Effect.Effect<void>, write: Statement.Statement<Row>) =>
  sql
    .onDialectOrElse({
      pg: () => sql`WITH ins AS (${write} RETURNING 1) SELECT COUNT(*) AS n FROM ins`,
      orElse: () => Effect.zipRight(write, sql`SELECT changes() AS n`)
    })
    .pipe(
      Effect.map((rows) => toInt(rows[0]!.n)),
      Effect.tap(wakeIfAny(queued))
    )

/**
 * Fan-out of several events in one statement (the events of one change, e.g. a transfer's three).
 * On PostgreSQL it is the function `issuing_webhook_fan_out_events` (store-pg migration 0490),
 * which the ledger's postings also call, so the paths cannot drift; change it there (a new
 * migration) together with `sqliteFanOutSql` above.
 */
const enqueueEvents = (
  sql: Sql,
  queued: Effect.Effect<void>,
  events: ReadonlyArray<IssuingEvent>
): Effect.Effect<number, SqlError.SqlError> =>
  events.length === 0
    ? Effect.succeed(0)
    : sql.onDialectOrElse({
        pg: () =>
          sql`SELECT COALESCE(SUM(issuing_webhook_fan_out(e.id, e.program_id, e.type, e.created_at, NULL::text)), 0) AS n
          FROM unnest(${events.map((e) => e.id)}::text[], ${events.map((e) => e.program_id)}::text[],
                      ${events.map((e) => e.type)}::text[], ${events.map((e) => e.created_at)}::timestamptz[])
            AS e(id, program_id, type, created_at)`.pipe(
            Effect.map((rows) => toInt(rows[0]!.n)),
            Effect.tap(wakeIfAny(queued))
          ),
        orElse: () => writeCounted(sql, queued, sql.unsafe(sqliteFanOutSql(events.length), sqliteFanOutParams(events)))
      })

/** Held deliveries off the queue: delivered, given up, or skipped. */
const completeDeliveries = (sql: Sql, token: string, ids: ReadonlyArray<string>): Effect.Effect<void, SqlError.SqlError> =>
  ids.length === 0
    ? Effect.void
    : sql`DELETE FROM issuing_webhook_deliveries WHERE ${sql.in("id", ids)} AND claim_token = ${token}`.pipe(Effect.asVoid)

/** Many held deliveries back on the queue in one UPDATE … FROM a list of (id, tries, due). */
const rescheduleDeliveries = (sql: Sql, token: string, retries: ReadonlyArray<DeliveryRetry>): Effect.Effect<void, SqlError.SqlError> =>
  retries.length === 0
    ? Effect.void
    : sql
        .onDialectOrElse({
          pg: () =>
            sql`UPDATE issuing_webhook_deliveries d
                SET attempt_count = r.attempt_count, next_attempt_at = r.next_attempt_at, claim_token = NULL
                FROM unnest(${retries.map((r) => r.id)}::text[], ${retries.map((r) => r.attemptCount)}::int[],
                            ${retries.map((r) => r.nextAttemptIso)}::timestamptz[]) AS r(id, attempt_count, next_attempt_at)
                WHERE d.id = r.id AND d.claim_token = ${token}`,
          orElse: () =>
            sql.unsafe(
              `UPDATE issuing_webhook_deliveries
               SET attempt_count = r.column2, next_attempt_at = r.column3, claim_token = NULL
               FROM (VALUES ${retries.map(() => "(?, ?, ?)").join(", ")}) AS r
               WHERE issuing_webhook_deliveries.id = r.column1 AND issuing_webhook_deliveries.claim_token = ?`,
              [...retries.flatMap((r) => [r.id, r.attemptCount, r.nextAttemptIso]), token]
            )
        })
        .pipe(Effect.asVoid)

/**
 * PostgreSQL: a batch of finished tries in ONE statement (data-modifying CTEs, all-or-nothing in
 * autocommit): the attempts, the retries and the finished deliveries (by id and claim token), and
 * the failing streaks. The CTEs share one snapshot, so none may touch a row another touches: the
 * retries and the finished are different deliveries, and a subscription is either cleared (a
 * success and no failure in the batch) or marked (a failure). A batch that may disable a
 * subscription also drops its queued deliveries, so that is done after this, in the same transaction.
 */
const pgRecordTries = (sql: Sql, token: string, tries: FinishedTries): Effect.Effect<void, SqlError.SqlError> => {
  const { attempts, retries } = tries
  return sql`WITH attempts AS (
        INSERT INTO issuing_webhook_attempts (id, program_id, event_id, subscription_id, status, response_code, response_body,
                                              attempted_at, created_at, updated_at)
        SELECT * FROM unnest(${attempts.map((a) => a.id)}::text[], ${attempts.map((a) => a.program_id)}::text[],
                             ${attempts.map((a) => a.event_id)}::text[], ${attempts.map((a) => a.webhook_subscription_id)}::text[],
                             ${attempts.map((a) => a.status)}::text[], ${attempts.map((a) => a.response_code)}::int[],
                             ${attempts.map((a) => a.response_body)}::text[], ${attempts.map((a) => a.attempted_at)}::timestamptz[],
                             ${attempts.map((a) => a.created_at)}::timestamptz[], ${attempts.map((a) => a.updated_at)}::timestamptz[])
        ON CONFLICT (id) DO NOTHING),
      retried AS (
        UPDATE issuing_webhook_deliveries d
        SET attempt_count = r.attempt_count, next_attempt_at = r.next_attempt_at, claim_token = NULL
        FROM unnest(${retries.map((r) => r.id)}::text[], ${retries.map((r) => r.attemptCount)}::int[],
                    ${retries.map((r) => r.nextAttemptIso)}::timestamptz[]) AS r(id, attempt_count, next_attempt_at)
        WHERE d.id = r.id AND d.claim_token = ${token}),
      finished AS (
        DELETE FROM issuing_webhook_deliveries WHERE id = ANY(${tries.finished}::text[]) AND claim_token = ${token}),
      cleared AS (
        UPDATE issuing_webhook_subscriptions SET failing_since = NULL
        WHERE id = ANY(${tries.clearFailing}::text[]) AND failing_since IS NOT NULL),
      marked AS (
        UPDATE issuing_webhook_subscriptions SET failing_since = ${tries.nowIso}
        WHERE id = ANY(${tries.markFailing}::text[]) AND failing_since IS NULL)
      SELECT 1`.pipe(Effect.asVoid)
}

/**
 * PostgreSQL: a lone emit's events appended and fanned out in ONE call (`issuing_append_events`,
 * store-pg migration 0490: the insert, then the fan-out as a later statement, once the events'
 * tags are written), atomic by itself in autocommit.
 */
const pgAppendAndEnqueue = (
  sql: Sql,
  queued: Effect.Effect<void>,
  events: ReadonlyArray<IssuingEvent>
): Effect.Effect<number, SqlError.SqlError> =>
  sql`SELECT issuing_append_events(${events.map((e) => e.id)}::text[], ${events.map((e) => e.program_id)}::text[],
        ${events.map((e) => e.type)}::text[], ${events.map((e) => e.created_at)}::timestamptz[],
        ${events.map(storedEventDataOf)}::text[]) AS n`.pipe(
    Effect.map((rows) => (rows[0]?.n === null || rows[0]?.n === undefined ? 0 : toInt(rows[0].n))),
    Effect.tap(wakeIfAny(queued))
  )

/**
 * The PostgreSQL claim of up to `limit` due deliveries, as the CTEs `claimed` (the rows taken)
 * and `taken` (read with claimedColumns); `FOR UPDATE SKIP LOCKED` lets concurrent workers claim
 * disjoint rows. Each claimed row's event is read by its primary key in a LATERAL subquery that
 * the planner cannot flatten (its LIMIT): joined plainly, PostgreSQL may merge-join the few
 * claimed rows with the events' primary key read from its start, and since ids are UUIDv7 (time
 * ordered) and a claim's events the newest, that walks every event the program ever had
 * (docs/webhooks.md#the-claim-at-volume).
 */
const pgClaimCtes = (sql: Sql, token: string, nowIso: string, leaseUntilIso: string, limit: number) =>
  sql`claimed AS (
        UPDATE issuing_webhook_deliveries SET next_attempt_at = ${leaseUntilIso}, claim_token = ${token}
        WHERE id IN (SELECT id FROM issuing_webhook_deliveries WHERE next_attempt_at <= ${nowIso}
                     ORDER BY next_attempt_at LIMIT ${limit} FOR UPDATE SKIP LOCKED)
        RETURNING id, program_id, subscription_id, event_id, attempt_count),
      taken AS (
        SELECT ${sql.unsafe(claimedColumns("e.tags"))} FROM claimed d
        JOIN LATERAL (SELECT type, program_id, created_at, data, ${sql.unsafe(eventTagsSql("pg", "d.event_id"))} AS tags
                      FROM issuing_events WHERE id = d.event_id LIMIT 1) e ON true
        JOIN issuing_webhook_subscriptions s ON s.id = d.subscription_id)`

/** The earliest next_attempt_at after `nowIso`: when the queue's next delivery not due now falls due. */
const nextDueAfter = (sql: Sql, nowIso: string) =>
  sql`SELECT MIN(next_attempt_at) AS t FROM issuing_webhook_deliveries WHERE next_attempt_at > ${nowIso}`.pipe(
    Effect.map((rows) => Option.map(Option.fromNullable(rows[0]?.t), toIso))
  )

/**
 * Claims up to `limit` due deliveries and reads when the next one after `nowIso` falls due. On
 * PostgreSQL one statement: its snapshot predates the claim, so the rows it claims (due by
 * `nowIso`) do not count as next, and a row committed after it is announced after its commit. (The
 * loop used to ask `nextDueAt` in a second round trip after every claim that left room: one more
 * query and pool checkout per round, on the path of the next wake-up.)
 */
const claimDueWithNext = (sql: Sql, token: string, nowIso: string, leaseUntilIso: string, limit: number) =>
  sql.onDialectOrElse({
    // Committed without waiting for the WAL flush (`synchronous_commit` off for this statement's
    // transaction alone): the claim is on the path from an event's commit to its delivery, and a
    // flush there cost a second fsync after the emitting commit's. A claim is a lease: lost in a
    // database crash, its delivery is due again after the restart and sent again — at least once
    // (docs/operations.md#claims-and-leases).
    pg: () =>
      sql`WITH ${pgClaimCtes(sql, token, nowIso, leaseUntilIso, limit)}
          SELECT taken.*, n.next_due FROM
            (SELECT set_config('synchronous_commit', 'off', true)) AS quick,
            (SELECT MIN(next_attempt_at) AS next_due FROM issuing_webhook_deliveries WHERE next_attempt_at > ${nowIso}) n
          LEFT JOIN taken ON true`.pipe(
        Effect.map((rows) => ({
          claimed: rows.filter((row) => row.id != null).map(toClaimed),
          nextDueAt: Option.map(Option.fromNullable(rows[0]?.next_due), toIso)
        }))
      ),
    orElse: () => Effect.all({ claimed: claimDue(sql, token, nowIso, leaseUntilIso, limit), nextDueAt: nextDueAfter(sql, nowIso) })
  })

/**
 * Claims up to `limit` due deliveries: on PostgreSQL in one statement (`pgClaimCtes`); on SQLite
 * (one writer at a time) an UPDATE then a read of what it claimed.
 */
const claimDue = (sql: Sql, token: string, nowIso: string, leaseUntilIso: string, limit: number) =>
  sql.onDialectOrElse({
    pg: () =>
      sql`WITH ${pgClaimCtes(sql, token, nowIso, leaseUntilIso, limit)} SELECT * FROM taken`.pipe(
        Effect.map((rows) => rows.map(toClaimed))
      ),
    orElse: () =>
      Effect.gen(function* () {
        const claimed = yield* sql`UPDATE issuing_webhook_deliveries SET next_attempt_at = ${leaseUntilIso}, claim_token = ${token}
            WHERE id IN (SELECT id FROM issuing_webhook_deliveries WHERE next_attempt_at <= ${nowIso}
                         ORDER BY next_attempt_at LIMIT ${limit})
            RETURNING id`
        if (claimed.length === 0) return []
        const rows = yield* sql`SELECT ${sql.unsafe(claimedColumns(eventTagsSql("sqlite", "e.id")))} FROM issuing_webhook_deliveries d
            JOIN issuing_events e ON e.id = d.event_id
            JOIN issuing_webhook_subscriptions s ON s.id = d.subscription_id
            WHERE ${sql.in(
              "d.id",
              claimed.map((row: any) => row.id)
            )} AND d.claim_token = ${token}`
        return rows.map(toClaimed)
      })
  })

/**
 * The delivery queue over SqlClient: fan-out, replay, single enqueues and leased claims; the
 * worker's claim (`claimDueWithNext`, one autocommit statement) on `claimSql`, a connection of its
 * own where the store has one (WebhookClaimClient).
 */
export const queueStatements = (sql: Sql, queued: Effect.Effect<void>, claimSql: Sql = sql): QueueStatements => ({
  dropQueued: (subscriptionIds) =>
    subscriptionIds.length === 0
      ? Effect.void
      : sql`DELETE FROM issuing_webhook_deliveries WHERE ${sql.in("subscription_id", subscriptionIds)}`.pipe(Effect.asVoid),
  // One SQL text per dialect: `enqueueEvent` is `enqueueEvents` of one event.
  enqueueEvent: (event) => enqueueEvents(sql, queued, [event]),
  enqueueEvents: (events) => enqueueEvents(sql, queued, events),
  appendAndEnqueueAtOnce: sql.onDialectOrElse({
    pg: () => Option.some((events: ReadonlyArray<IssuingEvent>) => pgAppendAndEnqueue(sql, queued, events)),
    orElse: () => Option.none()
  }),
  ...replayStatements(sql, queued),
  claimDue: (token, nowIso, leaseUntilIso, limit) => claimDue(sql, token, nowIso, leaseUntilIso, limit),
  claimDueWithNext: (token, nowIso, leaseUntilIso, limit) => claimDueWithNext(claimSql, token, nowIso, leaseUntilIso, limit),
  ...claimStatements(sql, queued)
})

/** Replay (one INSERT … SELECT over the window), its span probe, and single enqueues (a resend's retry). */
const replayStatements = (sql: Sql, queued: Effect.Effect<void>): Pick<QueueStatements, "enqueueReplay" | "eventSpan" | "enqueue"> => ({
  // Ids are the replay's own id + the event id: unique, cheap, and in index order (UUIDv7s).
  enqueueReplay: (programId, subscriptionId, tag, beginIso, endIso, nowIso) =>
    writeCounted(
      sql,
      queued,
      tag === null
        ? sql`INSERT INTO issuing_webhook_deliveries
                (id, program_id, subscription_id, event_id, attempt_count, next_attempt_at, claim_token, created_at)
              SELECT ${newId()} || ':' || e.id, e.program_id, ${subscriptionId}, e.id, 0, ${nowIso}, NULL, ${nowIso}
              FROM issuing_events e
              WHERE e.program_id = ${programId}
                AND EXISTS (SELECT 1 FROM issuing_webhook_subscriptions s
                            WHERE s.id = ${subscriptionId} AND s.program_id = ${programId} AND s.disabled = false
                              AND s.tag IS NULL)
                AND e.type IN (SELECT event_type FROM issuing_webhook_event_types WHERE subscription_id = ${subscriptionId})
                AND e.created_at >= ${beginIso} AND e.created_at <= ${endIso}`
        : // A tagged subscription's replay walks its tag's events only (docs/webhooks.md#customers-and-tags).
          sql`INSERT INTO issuing_webhook_deliveries
                (id, program_id, subscription_id, event_id, attempt_count, next_attempt_at, claim_token, created_at)
              SELECT ${newId()} || ':' || e.id, e.program_id, ${subscriptionId}, e.id, 0, ${nowIso}, NULL, ${nowIso}
              FROM issuing_event_tags t JOIN issuing_events e ON e.id = t.event_id
              WHERE t.program_id = ${programId} AND t.tag = ${tag}
                AND t.created_at >= ${beginIso} AND t.created_at <= ${endIso}
                AND EXISTS (SELECT 1 FROM issuing_webhook_subscriptions s
                            WHERE s.id = ${subscriptionId} AND s.program_id = ${programId} AND s.disabled = false
                              AND s.tag = ${tag})
                AND e.type IN (SELECT event_type FROM issuing_webhook_event_types WHERE subscription_id = ${subscriptionId})`
    ),
  eventSpan: (programId, tag, beginIso, endIso) =>
    (tag === null
      ? sql<{ readonly first: unknown; readonly last: unknown }>`
          SELECT MIN(created_at) AS first, MAX(created_at) AS last FROM issuing_events
          WHERE program_id = ${programId} AND created_at >= ${beginIso} AND created_at <= ${endIso}`
      : sql<{ readonly first: unknown; readonly last: unknown }>`
          SELECT MIN(created_at) AS first, MAX(created_at) AS last FROM issuing_event_tags
          WHERE program_id = ${programId} AND tag = ${tag} AND created_at >= ${beginIso} AND created_at <= ${endIso}`
    ).pipe(
      Effect.map(([row]) =>
        row?.first != null && row.last != null ? Option.some({ first: toIso(row.first), last: toIso(row.last) }) : Option.none()
      )
    ),
  // Selected from the subscription's own row: a subscription deleted or disabled while a resend
  // was in flight gets no retry (and a deleted one no foreign-key failure after the send).
  enqueue: (delivery) =>
    writeCounted(
      sql,
      queued,
      sql`INSERT INTO issuing_webhook_deliveries
            (id, program_id, subscription_id, event_id, attempt_count, next_attempt_at, claim_token, created_at)
          SELECT ${newId()}, ${delivery.program_id}, s.id, ${delivery.event_id},
                 ${delivery.attempt_count}, ${delivery.next_attempt_at}, NULL, ${delivery.next_attempt_at}
          FROM issuing_webhook_subscriptions s
          WHERE s.id = ${delivery.subscription_id} AND s.program_id = ${delivery.program_id} AND s.disabled = false`
    ).pipe(Effect.asVoid)
})

/** What a claim holder does with its deliveries: complete, reschedule, hand back; and when the next is due. */
const claimStatements = (sql: Sql, queued: Effect.Effect<void>): Pick<QueueStatements, ClaimStatementName> => ({
  // By id (the primary key) and token: no index on claim_token is needed, and a row another worker
  // took over (its lease ended first) keeps the new holder's lease. On PostgreSQL a row locked now
  // is skipped: it is being recorded (completed, rescheduled or claimed afresh) by a transaction
  // that locks its rows in another order — waiting for it deadlocked (seen in the receiver-chaos
  // test, test/faults/chaos.test.ts).
  renewClaims: (token, ids, leaseUntilIso) =>
    ids.length === 0
      ? Effect.succeed([])
      : sql
          .onDialectOrElse({
            pg: () =>
              sql`UPDATE issuing_webhook_deliveries SET next_attempt_at = ${leaseUntilIso}
                  WHERE id IN (SELECT id FROM issuing_webhook_deliveries
                               WHERE ${sql.in("id", ids)} AND claim_token = ${token} FOR UPDATE SKIP LOCKED)
                  RETURNING id`,
            orElse: () =>
              sql`UPDATE issuing_webhook_deliveries SET next_attempt_at = ${leaseUntilIso}
                  WHERE ${sql.in("id", ids)} AND claim_token = ${token}
                  RETURNING id`
          })
          .pipe(Effect.map((rows) => rows.map((row) => String(row.id)))),
  completeDeliveries: (token, ids) => completeDeliveries(sql, token, ids),
  rescheduleDelivery: (token, id, attemptCount, nextAttemptIso) => rescheduleDeliveries(sql, token, [{ id, attemptCount, nextAttemptIso }]),
  rescheduleDeliveries: (token, retries) => rescheduleDeliveries(sql, token, retries),
  // Handed-back deliveries are due now: the other workers are woken for them (no wait for their poll).
  releaseClaims: (token, nowIso, keep) =>
    writeCounted(
      sql,
      queued,
      keep.length === 0
        ? sql`UPDATE issuing_webhook_deliveries SET next_attempt_at = ${nowIso}, claim_token = NULL
              WHERE claim_token = ${token}`
        : sql`UPDATE issuing_webhook_deliveries SET next_attempt_at = ${nowIso}, claim_token = NULL
              WHERE claim_token = ${token} AND NOT ${sql.in("id", keep)}`
    ).pipe(Effect.asVoid),
  recordTries: (token, tries) =>
    sql.onDialectOrElse({
      pg: () => pgRecordTries(sql, token, tries),
      orElse: () =>
        Effect.all(
          [
            attemptStatements(sql).insertAttempts(tries.attempts),
            rescheduleDeliveries(sql, token, tries.retries),
            completeDeliveries(sql, token, tries.finished),
            streakStatements(sql).clearFailing(tries.clearFailing),
            streakStatements(sql).markFailing(tries.markFailing, tries.nowIso)
          ],
          { discard: true }
        )
    }),
  recordTriesAtOnce: sql.onDialectOrElse({
    pg: () => Option.some((token: string, tries: FinishedTries) => pgRecordTries(sql, token, tries)),
    orElse: () => Option.none()
  }),
  nextDueAt: sql`SELECT MIN(next_attempt_at) AS t FROM issuing_webhook_deliveries`.pipe(
    Effect.map((rows) => Option.map(Option.fromNullable(rows[0]?.t), toIso))
  )
})
