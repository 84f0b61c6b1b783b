import { newId } from "../platform/Ids.js"

/** Event types the platform emits (CONTRACT §5 and interface §6). */
export const EVENT_TYPES = [
  "wallet.created",
  "financial_account.created",
  "card.created",
  "card.updated",
  "transfer.created",
  "transfer.settled",
  "transfer.settled.instant",
  "transaction.updated"
] as const

export type EventType = (typeof EVENT_TYPES)[number]

/** The event record: also the webhook payload (CONTRACT §5). */
export interface IssuingEvent {
  readonly id: string
  readonly object: "event"
  readonly type: EventType
  readonly program_id: string
  readonly created_at: string
  readonly data: { readonly object: unknown }
}

/** A new event about `object` (a fresh id); written by the change's own transaction. */
export const newEvent = (programId: string, type: EventType, createdAt: string, object: unknown): IssuingEvent => ({
  id: newId(),
  object: "event",
  type,
  program_id: programId,
  created_at: createdAt,
  data: { object }
})
