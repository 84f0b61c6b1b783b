import { Schema } from "effect"
import { newId } from "../platform/Ids.js"
import { storedEventData } from "./StoredData.js"

/** Event types the platform emits (docs/webhooks.md). */
export const EVENT_TYPES = [
  "wallet.created",
  "wallet.updated",
  "cardholder.created",
  "cardholder.updated",
  "financial_account.created",
  "card.created",
  "card.updated",
  "transfer.created",
  "transfer.settled",
  "transfer.settled.instant",
  "transfer.returned",
  "transaction.updated",
  "balance.updated",
  "dispute.created",
  "dispute.updated",
  "oauth_grant.created",
  "oauth_grant.revoked",
  "webhook.test"
] as const

export type EventType = (typeof EVENT_TYPES)[number]

/** The event types a subscription may hold: every type but the test event's. */
export const SUBSCRIBABLE_EVENT_TYPES = EVENT_TYPES.filter((type) => type !== "webhook.test")

/** True when `text` names an event type a subscription may hold. */
export const isSubscribableEventType = (text: string): text is EventType =>
  text !== "webhook.test" && (EVENT_TYPES as ReadonlyArray<string>).includes(text)

/**
 * Sent only by `POST /v1/webhook-subscriptions/{id}/test`, to that one subscription: never fanned out,
 * so no subscription can subscribe to it (docs/webhooks.md#test-events).
 */
export const TEST_EVENT_TYPE = "webhook.test" satisfies EventType

/** True when `text` names an event type the platform emits. */
export const isEventType = (text: string): text is EventType => (EVENT_TYPES as ReadonlyArray<string>).includes(text)

/**
 * An event type name. Documented as a plain string, so the list can grow without breaking clients;
 * the message never echoes the rejected text (it may be a secret sent in the wrong field).
 */
export const EventTypeName = Schema.String.pipe(Schema.filter(isEventType, { message: () => `must be one of ${EVENT_TYPES.join(", ")}` }))

/** The event record: also the webhook payload (docs/webhooks.md, What a delivery looks like). */
export const IssuingEvent = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("event"),
  type: EventTypeName,
  program_id: Schema.String,
  /**
   * The tags of the wallets the event concerns when it was written (a test event: its
   * subscription's tag); a tagged subscription receives only events that carry its tag
   * (docs/webhooks.md#customers-and-tags). Written by the store with the event, from its object.
   */
  tags: Schema.Array(Schema.String),
  created_at: Schema.String,
  data: Schema.Struct({ object: Schema.Unknown })
}).annotations({ identifier: "Event" })
export type IssuingEvent = typeof IssuingEvent.Type

/** The filters of GET /v1/events (paging aside): an unknown `type` is a 400 naming it. */
export const EventFilter = Schema.Struct({
  type: Schema.optional(EventTypeName)
})
export type EventFilter = typeof EventFilter.Type

/** An event as a row of `issuing_events` (its object as storedEventData keeps it), for every store's writes. */
export const eventRow = (event: IssuingEvent) => ({
  id: event.id,
  program_id: event.program_id,
  type: event.type,
  created_at: event.created_at,
  data: storedEventDataOf(event)
})

/** The `data` an event's row stores (StoredData.ts). */
export const storedEventDataOf = (event: IssuingEvent): string => storedEventData(event.data.object, event.program_id, event.created_at)

/**
 * A new event about `object` (a fresh id); written by the change's own transaction. Its `tags` are
 * the store's to find from the object as it writes the row; `tags` here is what the caller already
 * knows them to be (a test event's subscription tag), for the copy it keeps in memory.
 */
export const newEvent = (
  programId: string,
  type: EventType,
  createdAt: string,
  object: unknown,
  tags: ReadonlyArray<string> = []
): IssuingEvent => ({
  id: newId(),
  object: "event",
  type,
  program_id: programId,
  tags,
  created_at: createdAt,
  data: { object }
})

/**
 * The SQL expression of an event's tags as a JSON array text (`[]` when none), by its id column:
 * read from `issuing_event_tags`, which the stores' triggers write with the event.
 */
export const eventTagsSql = (dialect: "pg" | "sqlite", eventIdColumn: string): string =>
  dialect === "pg"
    ? `(SELECT coalesce(json_agg(t.tag ORDER BY t.tag), '[]'::json)::text FROM issuing_event_tags t WHERE t.event_id = ${eventIdColumn})`
    : `(SELECT json_group_array(x.tag) FROM (SELECT t.tag FROM issuing_event_tags t WHERE t.event_id = ${eventIdColumn} ORDER BY t.tag) x)`

/** True when a subscription of `subscriptionTag` (null: untagged) may receive an event of `eventTags`. */
export const tagMayReceive = (subscriptionTag: string | null | undefined, eventTags: ReadonlyArray<string>): boolean =>
  subscriptionTag === null || subscriptionTag === undefined || eventTags.includes(subscriptionTag)
