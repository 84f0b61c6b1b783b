import { bounded, listTotal, maintained } from "../sql/ListCounts.js"
import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { mergedPage, mergedPageRows } from "../sql/MergedRanges.js"
import type { PageWindow } from "../platform/Paging.js"
import { pageRows } from "../sql/OrderBy.js"
import { WEBHOOK_ATTEMPT_ORDER_FIELDS, type WebhookAttemptOrderField } from "./OrderFields.js"
import { ATTEMPT_STATUSES, type AttemptFilter } from "./Records.js"
import { toAttempt } from "./SqlWebhookRows.js"
import type { WebhookStoreService } from "./WebhookStore.js"

const attemptWhere = (sql: SqlClient.SqlClient, programId: string, filter: AttemptFilter) => {
  const parts = [sql`program_id = ${programId}`]
  if (filter.event_id !== undefined) parts.push(sql`event_id = ${filter.event_id}`)
  // An event's attempts are a few (one per subscription and try): read through its index, the
  // other filters applied along it, written out of the index choice (SQLite has no statistics to
  // prefer the event's range to a subscription's).
  const along = (column: string) => sql.literal(filter.event_id !== undefined ? `(${column} || '')` : column)
  if (filter.webhook_subscription_id !== undefined) parts.push(sql`${along("subscription_id")} = ${filter.webhook_subscription_id}`)
  if (filter.status !== undefined) parts.push(sql`${along("status")} = ${filter.status}`)
  return sql.and(parts)
}

/**
 * A subscription's attempts, with or without `status`: ranges of
 * `issuing_webhook_attempts_by_subscription[_attempt]` (subscription, status, order column, id),
 * the status's one or both merged (`mergedPage`). A subscription's attempts are all of its program,
 * so the ranges need none; the page's rows and the `starting_after` row are read with it, written
 * out of the index choice (another program's subscription lists nothing).
 */
const subscriptionAttempts = (
  sql: SqlClient.SqlClient,
  programId: string,
  subscriptionId: string,
  status: AttemptFilter["status"],
  window: PageWindow<WebhookAttemptOrderField>
) => {
  const ofProgram = sql`(program_id || '') = ${programId}`
  return mergedPage(sql, window, WEBHOOK_ATTEMPT_ORDER_FIELDS, {
    table: "issuing_webhook_attempts",
    ranges: (status !== undefined ? [status] : ATTEMPT_STATUSES).map(
      (value) => sql`subscription_id = ${subscriptionId} AND status = ${value}`
    ),
    pageRows: ofProgram,
    member: sql.and([
      ofProgram,
      sql`(subscription_id || '') = ${subscriptionId}`,
      ...(status !== undefined ? [sql`(status || '') = ${status}`] : [])
    ])
  })
}

/**
 * The rows of a page of attempts. Every index of attempts but the event's holds the status before
 * the order column (migration 0410): with `status` the list is one range, without it the merge of
 * the two statuses' ranges (docs/operations.md#volume). A subscription's indexes hold no program
 * (migration 0450: a deep page's cost is the width of the entries it skips), so its ranges are read
 * without one and the page's rows with it.
 */
const attemptPageRows = (
  sql: SqlClient.SqlClient,
  programId: string,
  filter: AttemptFilter,
  window: PageWindow<WebhookAttemptOrderField>
) => {
  if (filter.event_id === undefined && filter.webhook_subscription_id !== undefined)
    return subscriptionAttempts(sql, programId, filter.webhook_subscription_id, filter.status, window)
  if (filter.event_id === undefined && filter.status === undefined)
    return mergedPageRows(sql, window, WEBHOOK_ATTEMPT_ORDER_FIELDS, {
      table: "issuing_webhook_attempts",
      where: attemptWhere(sql, programId, filter),
      column: "status",
      values: ATTEMPT_STATUSES
    })
  return pageRows(sql, window, WEBHOOK_ATTEMPT_ORDER_FIELDS, {
    select: sql.literal("*"),
    from: sql.literal("issuing_webhook_attempts"),
    where: attemptWhere(sql, programId, filter)
  })
}

/** Attempts over SqlClient, one SQL text for both dialects. */
export const attemptStatements = (sql: SqlClient.SqlClient): Pick<WebhookStoreService, "insertAttempts" | "listAttempts"> => ({
  insertAttempts: (attempts) =>
    attempts.length === 0
      ? Effect.void
      : sql`INSERT INTO issuing_webhook_attempts ${sql.insert(
          attempts.map((attempt) => ({
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
          }))
          // Once per id: the worker records a batch again when its commit may have gone through.
        )} ON CONFLICT (id) DO NOTHING`.pipe(Effect.asVoid),
  listAttempts: (programId, filter, window) =>
    Effect.all({
      rows: attemptPageRows(sql, programId, filter, window).pipe(Effect.map((rows) => rows.map(toAttempt))),
      total: listTotal(
        sql,
        filter.event_id !== undefined
          ? bounded("issuing_webhook_attempts", attemptWhere(sql, programId, filter))
          : maintained("webhook_attempts", programId, filter)
      )
    })
})
