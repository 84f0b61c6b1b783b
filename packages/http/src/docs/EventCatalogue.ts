import type { EventType } from "@issuing/core"

/** One event type in the catalogue: the resource its `data.object` holds (an OpenAPI schema name) and when it is sent. */
export interface EventDoc {
  readonly object: string
  readonly when: string
}

/**
 * Every event type with its payload, for the /docs/events page (docs/webhooks.md#event-types). Keyed by
 * core's `EventType`, so a type core emits without its entry here does not compile; `balance.updated`
 * is listed ahead of core emitting it (the client's `WebhookEvent` knows it too).
 */
export const EVENT_CATALOGUE: { readonly [T in EventType | "balance.updated"]: EventDoc } = {
  "wallet.created": { object: "Wallet", when: "A wallet was created (POST /v1/wallets)." },
  "wallet.updated": { object: "Wallet", when: "A wallet's tag or metadata changed (PATCH /v1/wallets/{wallet_id})." },
  "cardholder.created": { object: "Cardholder", when: "A cardholder was created (POST /v1/cardholders)." },
  "cardholder.updated": {
    object: "Cardholder",
    when: "A cardholder changed: its details or metadata (PATCH /v1/cardholders/{cardholder_id}) or the outcome of the program's verification (POST /v1/cardholders/{cardholder_id}/verification). Carries the tags of the cardholder's wallets."
  },
  "financial_account.created": {
    object: "FinancialAccount",
    when: "A financial account was created: a wallet's, or the program's settlement account of a currency on its first use."
  },
  "card.created": { object: "Card", when: "A card was issued (POST /v1/cards)." },
  "card.updated": {
    object: "Card",
    when: "A card changed: frozen, unfrozen, closed, reissued, or its spend controls (PATCH /v1/cards/{card_id})."
  },
  "transfer.created": { object: "Transfer", when: "A transfer was created, on any rail, in a batch too." },
  "transfer.settled": { object: "Transfer", when: "A transfer settled: a book transfer at once, ach_same_day and wire when they settle." },
  "transfer.settled.instant": { object: "Transfer", when: "A fednow_instant transfer settled (at once)." },
  "transfer.returned": {
    object: "Transfer",
    when: "The rail returned an ach_same_day or wire transfer (POST /v1/network/transfers/{transfer_id}/return): RETURNED with its return_code; the reversing transfer's transfer.created and transfer.settled follow."
  },
  "transaction.updated": {
    object: "Transaction",
    when: "A transaction was created or changed status (a transfer's, or a card authorization's)."
  },
  "balance.updated": {
    object: "FinancialAccount",
    when: "A wallet account's balance or pending balance changed (postings, card holds and their release)."
  },
  "dispute.created": {
    object: "Dispute",
    when: "A dispute of a card transaction was submitted (POST /v1/disputes): SUBMITTED, its provisional credit's transfer.created and transfer.settled, the transaction's transaction.updated (its disputed_amount) and the wallet's balance.updated follow in the same transaction (docs/disputes.md)."
  },
  "dispute.updated": {
    object: "Dispute",
    when: "A dispute was resolved, WON (the provisional credit stays) or LOST (the credit is taken back by a transfer wallet → settlement, whose transfer.created and transfer.settled follow), by POST /v1/simulate/disputes/{dispute_id}/resolve or POST /v1/network/disputes/{dispute_id}/resolve."
  },
  "oauth_grant.created": { object: "OAuthGrant", when: "A user granted a connected application access (an OAuth consent)." },
  "oauth_grant.revoked": {
    object: "OAuthGrant",
    when: "A grant was revoked: by DELETE /v1/oauth/grants/{grant_id}, its client's deletion, its key's revocation, or a refresh token replayed."
  },
  "webhook.test": {
    object: "WebhookSubscription",
    when: "Sent by POST /v1/webhook-subscriptions/{webhook_subscription_id}/test (or the endpoint portal's Send test event) to that one subscription only, never fanned out; no subscription can subscribe to it. `data.object` is the subscription it was sent to."
  }
}
