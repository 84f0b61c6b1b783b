import { bounded, listTotal } from "../sql/ListCounts.js"
import type { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import type { PageWindow } from "../platform/Paging.js"
import { metadataText } from "../platform/Metadata.js"
import { boolParam, toInt } from "../platform/Rows.js"
import { pageRows } from "../sql/OrderBy.js"
import { WEBHOOK_SUBSCRIPTION_ORDER_FIELDS, type WebhookSubscriptionOrderField } from "./OrderFields.js"
import type { StoredSubscription } from "./Records.js"
import { toSubscription } from "./SqlWebhookRows.js"
import type { WebhookStoreService } from "./WebhookStore.js"

type Sql = SqlClient.SqlClient

/** The subscription part of the webhook port. */
export type SubscriptionStatements = Pick<
  WebhookStoreService,
  | "insertSubscription"
  | "findSubscription"
  | "listSubscriptions"
  | "countSubscriptions"
  | "subscriptionsForType"
  | "updateSubscription"
  | "deleteSubscription"
  | "subscriptionsSealedWithOtherKeys"
  | "resealSubscription"
  | "markFailing"
  | "clearFailing"
  | "disableSubscriptions"
>

/** Subscriptions over SqlClient: one SQL text for both dialects except the row lock. */
export const subscriptionStatements = (sql: Sql): SubscriptionStatements => ({
  insertSubscription: (subscription) =>
    Effect.zipRight(
      sql`INSERT INTO issuing_webhook_subscriptions
            (id, program_id, url, description, event_types, disabled, tag, secret_sealed, previous_secret_sealed,
             previous_secret_expires_at, failing_since, metadata, created_at, updated_at)
          VALUES (${subscription.id}, ${subscription.program_id}, ${subscription.url}, ${subscription.description},
                  ${JSON.stringify(subscription.event_types)}, ${boolParam(subscription.disabled)}, ${subscription.tag},
                  ${subscription.secret_sealed}, ${subscription.previous_secret_sealed},
                  ${subscription.previous_secret_expires_at}, NULL, ${metadataText(subscription.metadata)}, ${subscription.created_at},
                  ${subscription.updated_at})`,
      insertEventTypes(sql, subscription)
    ),
  findSubscription: (programId, id, forUpdate = false) =>
    sql`SELECT * FROM issuing_webhook_subscriptions WHERE id = ${id} AND program_id = ${programId}${
      // SQLite writes are BEGIN IMMEDIATE (one writer), so only PostgreSQL needs the row lock.
      forUpdate ? sql.onDialectOrElse({ pg: () => sql.literal(" FOR UPDATE"), orElse: () => sql.literal("") }) : sql.literal("")
    }`.pipe(Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toSubscription))),
  listSubscriptions: (programId, filter, window) => listSubscriptions(sql, programId, filter, window),
  // Counted under the program row's lock on PostgreSQL, so concurrent creations in READ COMMITTED
  // cannot all count the same places free (SQLite writes are BEGIN IMMEDIATE: one writer). NO KEY
  // UPDATE leaves the KEY SHARE locks of foreign-key checks (transfers, events …) unblocked.
  countSubscriptions: (programId, tag) =>
    sql
      .onDialectOrElse({
        pg: () => Effect.asVoid(sql`SELECT id FROM issuing_programs WHERE id = ${programId} FOR NO KEY UPDATE`),
        orElse: () => Effect.void
      })
      .pipe(
        Effect.zipRight(
          tag === undefined
            ? sql`SELECT COUNT(*) AS n FROM issuing_webhook_subscriptions WHERE program_id = ${programId}`
            : sql`SELECT COUNT(*) AS n FROM issuing_webhook_subscriptions WHERE program_id = ${programId} AND tag = ${tag}`
        ),
        Effect.map((rows) => toInt(rows[0]!.n))
      ),
  subscriptionsForType: (programId, type) =>
    sql`SELECT s.* FROM issuing_webhook_event_types et
        JOIN issuing_webhook_subscriptions s ON s.id = et.subscription_id
        WHERE et.program_id = ${programId} AND et.event_type = ${type}
        ORDER BY s.created_at, s.id`.pipe(Effect.map((rows) => rows.map(toSubscription))),
  updateSubscription: (subscription) => updateSubscription(sql, subscription),
  deleteSubscription: (programId, id) =>
    Effect.gen(function* () {
      yield* sql`DELETE FROM issuing_webhook_deliveries WHERE subscription_id = ${id} AND program_id = ${programId}`
      yield* sql`DELETE FROM issuing_webhook_event_types WHERE subscription_id = ${id} AND program_id = ${programId}`
      const rows = yield* sql`DELETE FROM issuing_webhook_subscriptions WHERE id = ${id} AND program_id = ${programId}
                              RETURNING id`
      return rows.length > 0
    }),
  ...sealStatements(sql),
  ...streakStatements(sql)
})

const insertEventTypes = (sql: Sql, subscription: StoredSubscription) =>
  subscription.event_types.length === 0
    ? Effect.void
    : sql`INSERT INTO issuing_webhook_event_types ${sql.insert(
        subscription.event_types.map((type) => ({
          subscription_id: subscription.id,
          program_id: subscription.program_id,
          event_type: type
        }))
      )}`.pipe(Effect.asVoid)

const listSubscriptions = (
  sql: Sql,
  programId: string,
  filter: { readonly disabled?: boolean | undefined; readonly tag?: string | undefined },
  window: PageWindow<WebhookSubscriptionOrderField>
) => {
  // A tag's subscriptions are read through issuing_webhook_subscriptions_by_tag (migration 0280).
  const conditions = [
    sql`program_id = ${programId}`,
    ...(filter.tag === undefined ? [] : [sql`tag = ${filter.tag}`]),
    ...(filter.disabled === undefined ? [] : [sql`disabled = ${boolParam(filter.disabled)}`])
  ]
  const where = sql.and(conditions)
  return Effect.all({
    rows: pageRows(sql, window, WEBHOOK_SUBSCRIPTION_ORDER_FIELDS, {
      select: sql.literal("*"),
      from: sql.literal("issuing_webhook_subscriptions"),
      where
    }).pipe(Effect.map((rows) => rows.map(toSubscription))),
    total: listTotal(sql, bounded("issuing_webhook_subscriptions", where))
  })
}

/**
 * Saves every mutable field. The event types are replaced only when the subscription row of that
 * program was updated, so a mismatched program can never move another program's fan-out.
 */
const updateSubscription = (sql: Sql, subscription: StoredSubscription) =>
  Effect.gen(function* () {
    const updated = yield* sql`UPDATE issuing_webhook_subscriptions
        SET url = ${subscription.url}, description = ${subscription.description}, tag = ${subscription.tag},
            event_types = ${JSON.stringify(subscription.event_types)}, disabled = ${boolParam(subscription.disabled)},
            secret_sealed = ${subscription.secret_sealed}, previous_secret_sealed = ${subscription.previous_secret_sealed},
            previous_secret_expires_at = ${subscription.previous_secret_expires_at},
            metadata = ${metadataText(subscription.metadata)},
            failing_since = CASE WHEN disabled = true AND ${boolParam(subscription.disabled)} = 0 THEN NULL
                                 ELSE failing_since END,
            updated_at = ${subscription.updated_at}
        WHERE id = ${subscription.id} AND program_id = ${subscription.program_id}
        RETURNING id`
    if (updated.length === 0) return
    yield* sql`DELETE FROM issuing_webhook_event_types
               WHERE subscription_id = ${subscription.id} AND program_id = ${subscription.program_id}`
    yield* insertEventTypes(sql, subscription)
  })

/** Re-sealing after a vault key rotation. */
const sealStatements = (sql: Sql): Pick<WebhookStoreService, "subscriptionsSealedWithOtherKeys" | "resealSubscription"> => ({
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
        RETURNING id`.pipe(Effect.map((rows) => rows.length === 1))
})

/** Failing streaks and disabling (410 Gone, or failing too long). */
export const streakStatements = (sql: Sql): Pick<WebhookStoreService, "markFailing" | "clearFailing" | "disableSubscriptions"> => ({
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
    Effect.gen(function* () {
      if (ids.length === 0) return []
      const rows = yield* failingBefore === undefined
        ? sql`UPDATE issuing_webhook_subscriptions SET disabled = true, updated_at = ${nowIso}
              WHERE ${sql.in("id", ids)} AND disabled = false RETURNING id`
        : sql`UPDATE issuing_webhook_subscriptions SET disabled = true, updated_at = ${nowIso}
              WHERE ${sql.in("id", ids)} AND disabled = false AND failing_since <= ${failingBefore} RETURNING id`
      const disabled = rows.map((row: any) => row.id as string)
      if (disabled.length > 0) {
        yield* sql`DELETE FROM issuing_webhook_deliveries WHERE ${sql.in("subscription_id", disabled)}`
      }
      return disabled
    })
})
