import type { SqlClient, SqlError, Statement } from "@effect/sql"
import type { Row } from "@effect/sql/SqlConnection"
import { Effect, Option } from "effect"
import { eventTagsSql, type IssuingEvent, storedEventDataOf } from "../events/Records.js"
import { newId } from "../platform/Ids.js"
import { toInt, toIso } from "../platform/Rows.js"
import { claimedColumns, pgIsoText, toClaimed } from "./SqlWebhookRows.js"
import type { StoreWriterThread, ThreadStatement } from "../sql/StoreWriterThread.js"
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

// ---- SQLite: the claim holder's statements as plain text --------------------------------------------
// One text per statement, run by the writer thread when the store has one (StoreWriterThread) and
// on the store's client otherwise, so the two cannot drift (docs/webhooks.md#the-workers-writes-off-the-event-loop).

/** `?, ?, …`: `n` placeholders. */
const marks = (n: number): string => Array.from({ length: n }, () => "?").join(", ")

/** SQLite: when the queue's next delivery not due at `nowIso` falls due (run before the claim, as PostgreSQL's snapshot does). */
const sqliteNextDue = (nowIso: string): ThreadStatement => [
  "SELECT MIN(next_attempt_at) AS t FROM issuing_webhook_deliveries WHERE next_attempt_at > ?",
  [nowIso]
]

/**
 * SQLite's claim of up to `limit` due deliveries in ONE statement: each claimed row comes back with
 * what a try needs (claimedColumns' names), its event's and subscription's columns read by primary
 * key in RETURNING's subqueries. A row whose event or subscription is gone comes back with them
 * null and is not tried (`claimedRows`), as a join would leave it out.
 */
const sqliteClaim = (token: string, nowIso: string, leaseUntilIso: string, limit: number): ThreadStatement => {
  // RETURNING names the updated table in full (SQLite does not resolve its alias there).
  const d = "issuing_webhook_deliveries"
  const event = (column: string, as: string) => `(SELECT e.${column} FROM issuing_events e WHERE e.id = ${d}.event_id) AS ${as}`
  const subscription = (column: string, as = column) =>
    `(SELECT s.${column} FROM issuing_webhook_subscriptions s WHERE s.id = ${d}.subscription_id) AS ${as}`
  return [
    `UPDATE ${d} SET next_attempt_at = ?, claim_token = ?
     WHERE id IN (SELECT id FROM ${d} WHERE next_attempt_at <= ? ORDER BY next_attempt_at LIMIT ?)
     RETURNING id, program_id, subscription_id, event_id, attempt_count,
       ${event("type", "event_type")}, ${event("program_id", "event_program_id")}, ${event("created_at", "event_created_at")},
       ${event("data", "event_data")},
       ${eventTagsSql("sqlite", `${d}.event_id`)} AS event_tags,
       ${subscription("url")}, ${subscription("disabled")}, ${subscription("tag", "subscription_tag")},
       ${subscription("secret_sealed")}, ${subscription("previous_secret_sealed")},
       ${subscription("previous_secret_expires_at")}, ${subscription("updated_at", "subscription_updated_at")}`,
    [leaseUntilIso, token, nowIso, limit]
  ]
}

/** The deliveries a SQLite claim answered, those whose event and subscription still exist. */
const claimedRows = (rows: ReadonlyArray<Record<string, unknown>>) =>
  rows.filter((row) => row.event_type != null && row.url != null).map(toClaimed)

/** SQLite: the renewal of the leases of `ids` this token still holds, answering the ids renewed. */
const sqliteRenew = (token: string, ids: ReadonlyArray<string>, leaseUntilIso: string): ThreadStatement => [
  `UPDATE issuing_webhook_deliveries SET next_attempt_at = ? WHERE id IN (${marks(ids.length)}) AND claim_token = ? RETURNING id`,
  [leaseUntilIso, ...ids, token]
]

/** Most attempts in one INSERT (10 parameters each, well within SQLite's 32,766). */
const ATTEMPTS_PER_INSERT = 500

/**
 * SQLite: the statements writing a batch of finished tries, to run in one transaction: the
 * attempts (once per id: a batch is recorded again when its commit may have gone through), the
 * retries and the finished deliveries (by id and claim token), and the failing streaks.
 */
const sqliteRecordTries = (token: string, tries: FinishedTries): Array<ThreadStatement> => {
  const statements: Array<ThreadStatement> = []
  for (let at = 0; at < tries.attempts.length; at += ATTEMPTS_PER_INSERT) {
    const chunk = tries.attempts.slice(at, at + ATTEMPTS_PER_INSERT)
    statements.push([
      `INSERT INTO issuing_webhook_attempts (id, program_id, event_id, subscription_id, status, response_code, response_body,
                                            attempted_at, created_at, updated_at)
       VALUES ${chunk.map(() => "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)").join(", ")}
       ON CONFLICT (id) DO NOTHING`,
      chunk.flatMap((a) => [
        a.id,
        a.program_id,
        a.event_id,
        a.webhook_subscription_id,
        a.status,
        a.response_code,
        a.response_body,
        a.attempted_at,
        a.created_at,
        a.updated_at
      ])
    ])
  }
  const { retries, finished, clearFailing, markFailing } = tries
  if (retries.length > 0) statements.push(sqliteReschedule(token, retries))
  if (finished.length > 0) {
    statements.push([
      `DELETE FROM issuing_webhook_deliveries WHERE id IN (${marks(finished.length)}) AND claim_token = ?`,
      [...finished, token]
    ])
  }
  if (clearFailing.length > 0) {
    statements.push([
      `UPDATE issuing_webhook_subscriptions SET failing_since = NULL WHERE id IN (${marks(clearFailing.length)}) AND failing_since IS NOT NULL`,
      clearFailing
    ])
  }
  if (markFailing.length > 0) {
    statements.push([
      `UPDATE issuing_webhook_subscriptions SET failing_since = ? WHERE id IN (${marks(markFailing.length)}) AND failing_since IS NULL`,
      [tries.nowIso, ...markFailing]
    ])
  }
  return statements
}

/** SQLite: many held deliveries back on the queue in one UPDATE … FROM a list of (id, tries, due). */
const sqliteReschedule = (token: string, retries: ReadonlyArray<DeliveryRetry>): ThreadStatement => [
  `UPDATE issuing_webhook_deliveries
   SET attempt_count = r.column2, next_attempt_at = r.column3, claim_token = NULL
   FROM (VALUES ${retries.map(() => "(?, ?, ?)").join(", ")}) AS r
   WHERE issuing_webhook_deliveries.id = r.column1 AND issuing_webhook_deliveries.claim_token = ?`,
  [...retries.flatMap((r) => [r.id, r.attemptCount, r.nextAttemptIso]), token]
]

/** Runs plain statements on the store's client, in order (inside the caller's transaction, if any); answers each one's rows. */
const runOnClient = (sql: Sql, statements: ReadonlyArray<ThreadStatement>) =>
  Effect.forEach(statements, ([text, params]) => sql.unsafe<Record<string, unknown>>(text, params))

/** The plain statements on the writer thread when the store has one, in one transaction; else on the client. */
const runPlain = (sql: Sql, thread: Option.Option<StoreWriterThread["Type"]>, statements: ReadonlyArray<ThreadStatement>) =>
  Option.isSome(thread) ? thread.value.transaction(statements) : runOnClient(sql, statements)

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
          orElse: () => sql.unsafe(...sqliteReschedule(token, retries))
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
        SELECT ${sql.unsafe(claimedColumns("e.tags", pgIsoText))} FROM claimed d
        JOIN LATERAL (SELECT type, program_id, created_at, data, ${sql.unsafe(eventTagsSql("pg", "d.event_id"))} AS tags
                      FROM issuing_events WHERE id = d.event_id LIMIT 1) e ON true
        JOIN issuing_webhook_subscriptions s ON s.id = d.subscription_id)`

/**
 * Claims up to `limit` due deliveries and reads when the next one after `nowIso` falls due. On
 * PostgreSQL one statement: its snapshot predates the claim, so the rows it claims (due by
 * `nowIso`) do not count as next, and a row committed after it is announced after its commit. (The
 * loop used to ask `nextDueAt` in a second round trip after every claim that left room: one more
 * query and pool checkout per round, on the path of the next wake-up.)
 */
const claimDueWithNext = (
  sql: Sql,
  thread: Option.Option<StoreWriterThread["Type"]>,
  token: string,
  nowIso: string,
  leaseUntilIso: string,
  limit: number
) =>
  sql.onDialectOrElse({
    // Committed without waiting for the WAL flush (`synchronous_commit` off for this statement's
    // transaction alone): the claim is on the path from an event's commit to its delivery, and a
    // flush there cost a second fsync after the emitting commit's. A claim is a lease: lost in a
    // database crash, its delivery is due again after the restart and sent again — at least once
    // (docs/operations.md#claims-and-leases).
    pg: () =>
      sql`WITH ${pgClaimCtes(sql, token, nowIso, leaseUntilIso, limit)}
          SELECT taken.*, ${sql.unsafe(pgIsoText("n.next_due"))} AS next_due FROM
            (SELECT set_config('synchronous_commit', 'off', true)) AS quick,
            (SELECT MIN(next_attempt_at) AS next_due FROM issuing_webhook_deliveries WHERE next_attempt_at > ${nowIso}) n
          LEFT JOIN taken ON true`.pipe(
        Effect.map((rows) => ({
          claimed: rows.filter((row) => row.id != null).map(toClaimed),
          nextDueAt: Option.map(Option.fromNullable(rows[0]?.next_due), toIso)
        }))
      ),
    // SQLite: the next due time read first (the rows claimed now do not count as next), then the
    // claim, in one transaction on the writer thread where there is one.
    orElse: () =>
      runPlain(sql, thread, [sqliteNextDue(nowIso), sqliteClaim(token, nowIso, leaseUntilIso, limit)]).pipe(
        Effect.map(([next, claimed]) => ({
          claimed: claimedRows(claimed!),
          nextDueAt: Option.map(Option.fromNullable(next![0]?.t), toIso)
        }))
      )
  })

/**
 * Claims up to `limit` due deliveries, in one statement: on PostgreSQL `pgClaimCtes`, on SQLite
 * `sqliteClaim` (one writer at a time).
 */
const claimDue = (sql: Sql, token: string, nowIso: string, leaseUntilIso: string, limit: number) =>
  sql.onDialectOrElse({
    pg: () =>
      sql`WITH ${pgClaimCtes(sql, token, nowIso, leaseUntilIso, limit)} SELECT * FROM taken`.pipe(
        Effect.map((rows) => rows.map(toClaimed))
      ),
    orElse: () => Effect.map(sql.unsafe<Record<string, unknown>>(...sqliteClaim(token, nowIso, leaseUntilIso, limit)), claimedRows)
  })

/**
 * The delivery queue over SqlClient: fan-out, replay, single enqueues and leased claims; the
 * worker's claim (`claimDueWithNext`, one autocommit statement) on `claimSql`, a connection of its
 * own where the store has one (WebhookClaimClient).
 */
export const queueStatements = (
  sql: Sql,
  queued: Effect.Effect<void>,
  claimSql: Sql = sql,
  thread: Option.Option<StoreWriterThread["Type"]> = Option.none()
): QueueStatements => ({
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
  claimDueWithNext: (token, nowIso, leaseUntilIso, limit) => claimDueWithNext(claimSql, thread, token, nowIso, leaseUntilIso, limit),
  ...claimStatements(sql, queued, thread)
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
const claimStatements = (
  sql: Sql,
  queued: Effect.Effect<void>,
  thread: Option.Option<StoreWriterThread["Type"]>
): Pick<QueueStatements, ClaimStatementName> => ({
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
            orElse: () => Effect.map(runPlain(sql, thread, [sqliteRenew(token, ids, leaseUntilIso)]), ([rows]) => rows!)
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
      orElse: () => Effect.asVoid(runOnClient(sql, sqliteRecordTries(token, tries)))
    }),
  // SQLite: on the writer thread, one transaction of its own, where the store has one.
  recordTriesAtOnce: sql.onDialectOrElse({
    pg: () => Option.some((token: string, tries: FinishedTries) => pgRecordTries(sql, token, tries)),
    orElse: () =>
      Option.map(
        thread,
        (writer) => (token: string, tries: FinishedTries) => Effect.asVoid(writer.transaction(sqliteRecordTries(token, tries)))
      )
  }),
  nextDueAt: sql`SELECT MIN(next_attempt_at) AS t FROM issuing_webhook_deliveries`.pipe(
    Effect.map((rows) => Option.map(Option.fromNullable(rows[0]?.t), toIso))
  )
})
