import type {
  Card,
  Cardholder,
  Dispute,
  FinancialAccount,
  OAuthGrant,
  Transaction,
  Transfer,
  Wallet,
  WebhookSubscription
} from "./records.js"

/**
 * Each event type and the resource its `data.object` holds (docs/webhooks.md#event-types). The
 * generation of records.ts checks that every type the platform emits is here.
 */
export interface EventObjects {
  "wallet.created": Wallet
  /** A wallet's `tag` or `metadata` changed (`wallets.update`). */
  "wallet.updated": Wallet
  "cardholder.created": Cardholder
  /** A cardholder's details or the program's verification of it changed (`cardholders.update`, `cardholders.recordVerification`). */
  "cardholder.updated": Cardholder
  "financial_account.created": FinancialAccount
  "card.created": Card
  "card.updated": Card
  "transfer.created": Transfer
  "transfer.settled": Transfer
  "transfer.settled.instant": Transfer
  /** An ach_same_day or wire transfer returned by its rail: RETURNED, with its `return_code`. */
  "transfer.returned": Transfer
  "transaction.updated": Transaction
  /** A wallet account's `balance` or `pending_balance` changed. */
  "balance.updated": FinancialAccount
  /** A dispute was submitted: its provisional credit's transfer and the transaction's update follow. */
  "dispute.created": Dispute
  /** A dispute was resolved, WON or LOST. */
  "dispute.updated": Dispute
  "oauth_grant.created": OAuthGrant
  "oauth_grant.revoked": OAuthGrant
  /** Sent by `webhooks.sendTest` to that one subscription only; its `data.object` is the subscription. */
  "webhook.test": WebhookSubscription
}

/** An event type the platform emits. */
export type EventType = keyof EventObjects

/** Every event type, in the order of the reference (a subscription's `event_types` takes any of them but `webhook.test`). */
export const EVENT_TYPES: ReadonlyArray<EventType> = [
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
] satisfies ReadonlyArray<EventType>

/** The event of one type: `data.object` is that type's resource. */
export interface EventOf<T extends EventType> {
  readonly id: string
  readonly object: "event"
  readonly type: T
  readonly program_id: string
  /** The tags of the wallets the event concerns (docs/webhooks.md#customers-and-tags). */
  readonly tags: ReadonlyArray<string>
  readonly created_at: string
  readonly data: { readonly object: EventObjects[T] }
}

/**
 * An event as a webhook delivers it (and as `GET /v1/events/{id}` answers), discriminated by
 * `type`: after `if (event.type === "card.created")`, `event.data.object` is a `Card`.
 */
export type WebhookEvent = { [T in EventType]: EventOf<T> }[EventType]
