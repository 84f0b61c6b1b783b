/**
 * What a person reads about each operation, by its OpenAPI operationId (`group.endpoint`): a
 * summary, a description and, for the main ones, an example body. Kept apart from the API
 * definition (api/*.ts) so that the definition stays what the server runs; the OpenAPI document
 * and the /docs reference take them from here (docs/OpenApiDocument.ts), and
 * test/foundation/docs.test.ts fails for an operation without its entry.
 */
export interface OperationDoc {
  readonly summary: string
  readonly description: string
  /** An example request body (JSON), for the main operations. */
  readonly example?: Record<string, unknown>
}

const WALLET = "0196a0b2-7c3e-7d41-9a55-2f1e4c8b9a01"
const ACCOUNT = "0196a0b2-7c3e-7d41-9a55-2f1e4c8b9a02"
const OTHER_ACCOUNT = "0196a0b2-7c3e-7d41-9a55-2f1e4c8b9a03"
const CARD = "0196a0b2-7c3e-7d41-9a55-2f1e4c8b9a04"
const PROGRAM = "0196a0b2-7c3e-7d41-9a55-2f1e4c8b9a05"

const list = (what: string, more = "") =>
  `One page of ${what}, newest first unless \`order_by\` is given, with \`total_count\` for the whole filtered list. Page with \`page\` or \`starting_after\` (docs/api.md#paging).${more === "" ? "" : ` ${more}`}`

export const OPERATION_DOCS: Readonly<Record<string, OperationDoc>> = {
  "programs.create": {
    summary: "Create a program",
    description:
      "A new program of the organization (admin keys not limited by program_ids). `bin` is the 6–8 digit prefix of its card numbers (default 400000).",
    example: { name: "Expense cards", bin: "411111" }
  },
  "programs.list": { summary: "List programs", description: list("the programs the key may use") },
  "programs.get": { summary: "Retrieve a program", description: "One program of the organization; 404 when the key cannot see it." },
  "programs.update": {
    summary: "Change a program's settings",
    description:
      "Admin keys: `require_verified_cardholder` true makes every new card need a VERIFIED cardholder (its own `cardholder_id`, else its wallet's), else 422 cardholder_not_verified. Read by every issuance from the database, so it holds on every node at once.",
    example: { require_verified_cardholder: true }
  },
  "apiKeys.create": {
    summary: "Create an API key",
    description:
      "A new key of the organization with a role (admin, developer, viewer), optionally limited to program_ids. Its `secret` is in this answer only. A key hands out only the rights it has (pan_reveal, card_display, inbound_funding, network).",
    example: { name: "Back office", role: "developer", program_ids: null, pan_reveal: false }
  },
  "apiKeys.list": { summary: "List API keys", description: list("the keys within the caller's reach (never their secrets)") },
  "apiKeys.revoke": {
    summary: "Revoke an API key",
    description: "The key is refused (401) from this answer on, on every node; the OAuth grants it consented to are revoked with it."
  },
  "cards.create": {
    summary: "Issue a card",
    description:
      "A VIRTUAL or PHYSICAL card on a wallet, with optional spend controls: allowed and blocked merchant category codes, allowed and blocked merchant countries (ISO 3166-1 alpha-2) and a spending period. Emits `card.created`.",
    example: {
      wallet_id: WALLET,
      type: "VIRTUAL",
      allowed_mcc_codes: ["5411", "5812"],
      spending_period: { interval: "MONTHLY", amount: 50000 }
    }
  },
  "cards.list": { summary: "List cards", description: list("the program's cards", "Filter by `wallet_id` and `state`.") },
  "cards.spendLimits": {
    summary: "A card's remaining spend",
    description:
      "Each limit of the card with its current UTC window (`window_start` inclusive, `window_end` exclusive), what the window has spent (approved authorizations and increments, less reversals, expiries and returns) and what remains. Read from the spend kept per card and day, not from the card's transactions (docs/card-transactions.md#remaining-spend)."
  },
  "cards.searchByPan": {
    summary: "Find a card by its number",
    description: "The program's card with this number (keys with pan_reveal), found through a keyed hash; 404 otherwise.",
    example: { pan: "4000001234567899" }
  },
  "cards.get": { summary: "Retrieve a card", description: "One card: never its number or code." },
  "cards.update": {
    summary: "Change a card's spend controls",
    description:
      "New allowed or blocked merchant category codes or spending period for a card that is not closed: a control left out is kept, null clears it. Effective at the next authorization on every node; emits `card.updated`.",
    example: { blocked_mcc_codes: ["7995"], spending_period: { interval: "DAILY", amount: 20000 } }
  },
  "cards.freeze": {
    summary: "Freeze a card",
    description:
      "ACTIVE → FROZEN: authorizations are declined (CARD_FROZEN) until it is unfrozen. Emits `card.updated`; 409 from another state."
  },
  "cards.unfreeze": { summary: "Unfreeze a card", description: "FROZEN → ACTIVE. Emits `card.updated`; 409 from another state." },
  "cards.close": { summary: "Close a card", description: "Final: a CLOSED card takes no further action (409). Emits `card.updated`." },
  "cards.reissue": {
    summary: "Reissue a card",
    description: "A new number, code and expiry for the same card (the old number stops working). Emits `card.updated`."
  },
  "cards.reveal": {
    summary: "Reveal a card's number and code",
    description: "The number, code and expiry, for keys with pan_reveal (OAuth: the pan_reveal scope). Every reveal is in the audit trail."
  },
  "cards.createEmbedSession": {
    summary: "Create an embed session",
    description:
      "A short-lived session_token and embed_url for the secure card display, so a page outside PCI scope can show the card in a sandboxed iframe (keys with card_display)."
  },
  "cards.listAuditRecords": {
    summary: "List card-data audit records",
    description: list("every access to card data (reveal, search by number, embed sessions and views)", "Filter by `card_id` and `action`.")
  },
  "cardEmbed.document": {
    summary: "Card display document",
    description:
      'The HTML card display for a sandbox="allow-scripts" iframe, authenticated by its session_token alone (401 when unknown or expired).'
  },
  "simulateAuthorizations.create": {
    summary: "Simulate a card authorization",
    description:
      "Sandbox only (404 in production): an authorization on a card, decided by its state, merchant category lists, spending period, the program's real-time decision (its authorization endpoint) and the wallet's available funds. AUTHORIZATION (the default) answers a PENDING transaction holding the amount; FINANCIAL_AUTHORIZATION clears at once (SETTLED); a decline is DECLINED with its decline_reason (docs/card-transactions.md). The merchant is `merchant` (the network message's object) or `mcc` and `merchant_name`; it is the network message's path for a card named by id (docs/network.md#the-sandbox).",
    example: {
      card_id: CARD,
      amount: 1250,
      currency: "USD",
      merchant: { acceptor_id: "ACQ-000123", name: "Corner Cafe", city: "Springfield", country: "US", mcc: "5812" },
      kind: "AUTHORIZATION"
    }
  },
  "networkCardMessages.create": {
    summary: "Receive a card network message",
    description:
      "A network gateway's or processor's card message (docs/network.md): AUTHORIZATION, FINANCIAL_AUTHORIZATION, INCREMENTAL_AUTHORIZATION, AUTHORIZATION_ADVICE, AUTHORIZATION_REVERSAL, CLEARING, FORCE_POST or RETURN. The card is found by its number (no X-Program-ID), the transaction by network_transaction_id; the answer is the ISO 8583 one (response_code, authorization_code on every approval, approved_amount), 200 for every decision, declines included. Exactly once per network_message_id for 35 days: a repeat returns the first answer with Idempotent-Replayed: true. Needs the key's `network` right (403 otherwise), in every environment.",
    example: {
      network_message_id: "msg-0001",
      type: "AUTHORIZATION",
      network_transaction_id: "ntx-0001",
      card: { number: "4000001234567899", exp_month: 12, exp_year: 2028, cvv: "123" },
      amount: 1250,
      currency: "USD",
      merchant: { acceptor_id: "ACQ-000123", name: "Corner Cafe", city: "Springfield", country: "US", mcc: "5812" }
    }
  },
  "simulateTransactions.increment": {
    summary: "Simulate an incremental authorization",
    description:
      "Sandbox only: grows a PENDING card transaction's hold, decided like a new authorization; a decline is recorded in card_events and the hold kept. 409 unless PENDING.",
    example: { amount: 500 }
  },
  "simulateTransactions.clearing": {
    summary: "Simulate a clearing",
    description:
      "Sandbox only: posts the book transfer wallet → settlement for `amount` (default: the hold) and releases the hold, or only what cleared when `final` is false. More than the hold posts too; never refused for funds; a clearing after a void or an expiry posts (a late presentment).",
    example: { amount: 1250, final: true }
  },
  "simulateTransactions.reversal": {
    summary: "Simulate a reversal",
    description:
      "Sandbox only: releases all (the default) or part of a PENDING card transaction's hold; VOIDED when all is released and nothing cleared. 422 amount_exceeds_pending beyond the hold."
  },
  "simulateTransactions.return": {
    summary: "Simulate a return",
    description:
      "Sandbox only: refunds all (the default) or part of what the card transaction settled, as a book transfer settlement → wallet. 422 amount_exceeds_settled beyond it."
  },
  "wallets.create": {
    summary: "Create a wallet",
    description:
      "A wallet for a holder, with its financial account in the currency given (default USD) and, optionally, the `tag` of the program's customer it belongs to. Emits `wallet.created`.",
    example: { holder: { name: "Ada Lovelace", email: "ada@example.com" }, currency: "USD", tag: "customer_42" }
  },
  "wallets.list": { summary: "List wallets", description: list("the program's wallets", "Filter by `tag`.") },
  "wallets.get": { summary: "Retrieve a wallet", description: "One wallet of the program." },
  "wallets.update": {
    summary: "Change a wallet's tag or metadata",
    description:
      'A new `tag` (null clears it) or a change of `metadata` (keys given are set, "" removes one); a field left out is kept. Emits `wallet.updated`, unless nothing changed.',
    example: { tag: "customer_42", metadata: { plan: "gold" } }
  },
  "cardholders.create": {
    summary: "Create a cardholder",
    description:
      "A person (`individual`, with `individual.dob`) or a `business` the program issues cards to, PENDING_VERIFICATION until the program records its own check. Its personal data is never written to logs (docs/cardholders.md). Emits `cardholder.created`.",
    example: {
      type: "individual",
      name: "Ada Lovelace",
      email: "ada@example.com",
      phone_number: "+14155550123",
      billing_address: { line1: "1 Main St", city: "San Francisco", state: "CA", postal_code: "94105", country: "US" },
      individual: { first_name: "Ada", last_name: "Lovelace", dob: { day: 10, month: 12, year: 1990 } }
    }
  },
  "cardholders.list": { summary: "List cardholders", description: list("the program's cardholders", "Filter by `status` and `email`.") },
  "cardholders.get": { summary: "Retrieve a cardholder", description: "One cardholder of the program." },
  "cardholders.update": {
    summary: "Change a cardholder",
    description:
      'A field given replaces the cardholder\'s (null clears an optional one); `metadata` is merged ("" removes a key). The verification is kept. Emits `cardholder.updated`, unless nothing changed.',
    example: {
      email: "ada@lovelace.example",
      billing_address: { line1: "2 Side St", city: "Oakland", postal_code: "94607", country: "US" }
    }
  },
  "cardholders.verify": {
    summary: "Record a cardholder's verification",
    description:
      "The outcome of the program's own identity check (admin or developer keys): VERIFIED or REJECTED, with the program's `reference` for it. Sets `status` and `verification`; emits `cardholder.updated`.",
    example: { status: "VERIFIED", reference: "kyc_case_8841" }
  },
  "financialAccounts.list": {
    summary: "List financial accounts",
    description: list("the program's accounts (wallet and settlement)", "Filter by `kind`, `wallet_id`, `currency`.")
  },
  "financialAccounts.get": {
    summary: "Retrieve a financial account",
    description: "One account and its balance (credits − debits of its principal book)."
  },
  "financialAccounts.balances": {
    summary: "An account's balances per book",
    description: "Both books of the account, principal first: debits, credits and balance of each (a fixed two-row list)."
  },
  "financialAccounts.bookTransfers": {
    summary: "List an account's book transfers",
    description: list(
      "the balanced book transfers touching the account, with their entries",
      "Filter by `book`, `transfer_id`, `transaction_id`."
    )
  },
  "transfers.create": {
    summary: "Create a transfer",
    description:
      "Moves money between accounts on a rail: book (both accounts), or an external rail (ach_same_day, wire, fednow_instant) with one side, the program's settlement account being the other. book and fednow_instant settle at once; 422 insufficient_funds when a wallet account would go below zero, nothing written.",
    example: {
      payment_rail: "book",
      amount: 2500,
      currency: "USD",
      from_financial_account_id: ACCOUNT,
      to_financial_account_id: OTHER_ACCOUNT,
      description: "Team lunch"
    }
  },
  "transfers.list": {
    summary: "List transfers",
    description: list(
      "the program's transfers",
      "Filter by `status`, `payment_rail`, `transaction_id`, `financial_account_id` (either side)."
    )
  },
  "transfers.batch": {
    summary: "Create transfers in one request",
    description:
      "Up to 1,000 transfers, each a POST /v1/transfers body, posted in one database transaction and answered in order, each with its transfer or its error. `atomic`: any item's failure is the request's (param names the item) and nothing is written.",
    example: {
      atomic: true,
      transfers: [
        { payment_rail: "book", amount: 1000, currency: "USD", from_financial_account_id: ACCOUNT, to_financial_account_id: OTHER_ACCOUNT },
        { payment_rail: "book", amount: 500, currency: "USD", from_financial_account_id: ACCOUNT, to_financial_account_id: OTHER_ACCOUNT }
      ]
    }
  },
  "transfers.get": { summary: "Retrieve a transfer", description: "One transfer of the program." },
  "transactions.list": {
    summary: "List transactions",
    description: list("the program's transactions", "Filter by `status` and `card_id`.")
  },
  "transactions.get": { summary: "Retrieve a transaction", description: "One transaction of the program." },
  "transactions.expire": {
    summary: "Expire a card transaction's hold",
    description:
      "Releases a PENDING card transaction's open hold at once (an AUTHORIZATION_EXPIRY card event): EXPIRED, or SETTLED when part of it cleared. In every environment; 409 unless PENDING."
  },
  "transactions.bookTransfers": {
    summary: "List a transaction's book transfers",
    description: list("the book transfers of the transaction, with their entries")
  },
  "disputes.create": {
    summary: "Dispute a card transaction",
    description:
      "Disputes `amount` (default: all that is disputable) of a card transaction's settled money for the cardholder: a SUBMITTED dispute and, in the same transaction, a provisional credit settlement → the card's wallet account. At most settled − returned − already disputed (422 amount_exceeds_disputable, param amount), also under concurrent submissions; a transfer's or a DECLINED transaction: 422 transaction_not_disputable. Emits `dispute.created` (docs/disputes.md).",
    example: {
      transaction_id: "0196a0b2-7c3e-7d41-9a55-2f1e4c8b9a06",
      amount: 1200,
      reason: "NOT_RECEIVED",
      explanation: "Never delivered"
    }
  },
  "disputes.list": {
    summary: "List disputes",
    description: list("the program's disputes", "Filter by `transaction_id` and `status`; ordered by `created_at` or `updated_at`.")
  },
  "disputes.get": { summary: "Retrieve a dispute", description: "One dispute of the program." },
  "simulateDisputes.resolve": {
    summary: "Resolve a dispute (simulation)",
    description:
      "Sandbox only (404 in production): the network's decision, as POST /v1/network/disputes/{dispute_id}/resolve records it. WON keeps the provisional credit; LOST takes it back (wallet → settlement, possibly below zero). 409 once resolved. Emits `dispute.updated`.",
    example: { outcome: "WON" }
  },
  "networkDisputes.resolve": {
    summary: "Resolve a dispute (network outcome)",
    description:
      "The network's decision on a SUBMITTED dispute: WON keeps the provisional credit; LOST takes it back by a transfer wallet → settlement (the wallet may go below zero). Every environment; needs the key's `network` right (403 otherwise); 409 once resolved. Emits `dispute.updated` (docs/disputes.md).",
    example: { outcome: "LOST" }
  },
  "simulateTransfers.settle": {
    summary: "Settle a pending transfer",
    description:
      "Sandbox only (404 in production): a PENDING ach_same_day or wire transfer becomes SETTLED, as the rail's settle (POST /v1/network/transfers/{transfer_id}/settle) does. Emits `transfer.settled`."
  },
  "networkTransfers.settle": {
    summary: "Settle a pending transfer (rail outcome)",
    description:
      "The bank partner's settlement of a PENDING ach_same_day or wire transfer: SETTLED, `transfer.settled`; an inbound credit becomes available. Every environment; needs the key's `network` right (403 otherwise); 409 unless PENDING (docs/network.md#rail-outcomes)."
  },
  "networkTransfers.return": {
    summary: "Return a transfer (rail outcome)",
    description:
      "The rail returned a PENDING or SETTLED ach_same_day or wire transfer: RETURNED with `return_code` (ACH R01–R85; a wire's own text, 1–32 characters) and `return_reason`, the money back by a reversing transfer in the same transaction (an outbound return re-credits the wallet; an inbound return debits it, possibly below zero; a PENDING inbound credit's pending amount is released). Emits `transfer.returned`. Every environment; needs the `network` right (403); 409 for another rail or a second return; 400 param return_code for a code the rail does not take (docs/ledger.md#returns).",
    example: { return_code: "R01", reason: "Insufficient funds at the receiving bank" }
  },
  "settlementReports.get": {
    summary: "Settlement totals of a day",
    description:
      "The program's card settlement totals of one UTC day (`date`, YYYY-MM-DD) and `currency`: `clearings`, `force_posts` and `returns`, each `{count, amount}`, and `net_amount` = clearings + force posts − returns (minor units), read from totals kept as each card message posts, for reconciling against the network's settlement file. Any key that may read. 400 param date or currency for a missing or malformed one (docs/network.md#reconciliation)."
  },
  "events.list": {
    summary: "List events",
    description: list("the program's events (the /docs/events catalogue shows each type's payload)", "Filter by `type`.")
  },
  "events.get": { summary: "Retrieve an event", description: "One event, as webhooks deliver it." },
  "webhookSubscriptions.create": {
    summary: "Create a webhook subscription",
    description:
      "An HTTPS endpoint that receives the listed event types, signed per Standard Webhooks. The `secret` (whsec_…) is in this answer only.",
    example: { url: "https://example.com/webhooks/issuing", description: "Ledger sync", event_types: ["card.created", "transfer.created"] }
  },
  "webhookSubscriptions.list": {
    summary: "List webhook subscriptions",
    description: list("the program's subscriptions", "Filter by `disabled`.")
  },
  "webhookSubscriptions.get": { summary: "Retrieve a webhook subscription", description: "One subscription (never its secret)." },
  "webhookSubscriptions.update": {
    summary: "Update a webhook subscription",
    description: "Changes url, description, event_types or disabled; effective for the next delivery on every node.",
    example: { disabled: true }
  },
  "webhookSubscriptions.delete": { summary: "Delete a webhook subscription", description: "No further deliveries to it." },
  "webhookSubscriptions.rotateSecret": {
    summary: "Rotate a subscription's secret",
    description: "A new secret, in this answer only; deliveries are signed with both for a while so receivers can switch."
  },
  "webhookSubscriptions.replay": {
    summary: "Replay events to a subscription",
    description:
      "Queues again every event of the subscription's types created between `begin` and `end` (RFC 3339, at most 31 days). 409 on a disabled subscription.",
    example: { begin: "2026-05-01T00:00:00.000Z", end: "2026-05-02T00:00:00.000Z" }
  },
  "webhookSubscriptions.sendTest": {
    summary: "Send a test event",
    description:
      "Sends a signed `webhook.test` event (its `data.object` the subscription) now to this subscription only, never to others whatever they subscribe to, and answers the attempt it made. A failed try is retried like any delivery. 409 on a disabled subscription."
  },
  "webhookPortalSessions.create": {
    summary: "Create an endpoint portal session",
    description:
      "A short-lived `url` (one hour) of the endpoint portal, for an iframe of the program's page, where one customer manages its own webhook endpoints: only the subscriptions tagged `scope_tag` (absent: a new tag, returned), subscribing only to `allowed_event_types` (absent: every type). The token in the URL is the only credential; keep it out of logs.",
    example: { scope_tag: "customer_42", allowed_event_types: ["card.created", "transaction.updated"] }
  },
  "webhookPortal.document": {
    summary: "The endpoint portal page",
    description:
      "The HTML endpoint portal of a session (`session_token` from its `url`), meant for an iframe; 401 when the token is unknown, expired or its key revoked. See docs/webhooks.md#the-endpoint-portal."
  },
  "webhookPortal.listSubscriptions": {
    summary: "Portal: list the customer's endpoints",
    description: list("the subscriptions of the session's tag", "Authenticated with `Authorization: Bearer <session token>`.")
  },
  "webhookPortal.createSubscription": {
    summary: "Portal: add an endpoint",
    description:
      "A subscription with the session's tag, its event types within the session's allowed ones (400 otherwise). Its `secret` is in this answer only."
  },
  "webhookPortal.updateSubscription": {
    summary: "Portal: change an endpoint",
    description: "Its url, description, event types (within the allowed ones) or disabled. Another tag's subscription is a 404."
  },
  "webhookPortal.deleteSubscription": {
    summary: "Portal: delete an endpoint",
    description: "Deletes a subscription of the session's tag (404 otherwise)."
  },
  "webhookPortal.rotateSecret": {
    summary: "Portal: rotate an endpoint's secret",
    description: "A new secret, in this answer only, as in the API."
  },
  "webhookPortal.replay": {
    summary: "Portal: replay a window",
    description: "Queues again the window's events of the endpoint's types, as `POST /v1/webhook-subscriptions/{id}/replay` does."
  },
  "webhookPortal.sendTest": {
    summary: "Portal: send a test event",
    description: "A signed `webhook.test` event to this endpoint only; answers its attempt."
  },
  "webhookPortal.attempts": {
    summary: "Portal: list an endpoint's attempts",
    description: list("delivery attempts of one endpoint (`webhook_subscription_id`, required) of the session's tag", "Filter by `status`.")
  },
  "webhookPortal.resend": {
    summary: "Portal: resend an event",
    description:
      "Delivers the event again, at once, to the endpoint named by `subscription_id` (of the session's tag); answers the attempt."
  },
  "authorizationEndpoints.create": {
    summary: "Create the authorization endpoint",
    description:
      "The program's one endpoint for real-time authorization decisions (a second is 409): asked after the platform's own checks approve, signed as Standard Webhooks, waited for at most `timeout_ms` (100–5000, default 2000); no answer applies `timeout_decision` (default DECLINE). Its `secret` is in this answer only.",
    example: { url: "https://decisions.example.com/authorize", timeout_ms: 1500, timeout_decision: "DECLINE" }
  },
  "authorizationEndpoints.list": {
    summary: "List authorization endpoints",
    description: list("the program's authorization endpoint (one at most)")
  },
  "authorizationEndpoints.get": { summary: "Retrieve the authorization endpoint", description: "The endpoint, never its secret." },
  "authorizationEndpoints.update": {
    summary: "Update the authorization endpoint",
    description: "Changes its url, timeout_ms, timeout_decision or disabled; effective at once on every node."
  },
  "authorizationEndpoints.delete": {
    summary: "Delete the authorization endpoint",
    description: "Authorizations are decided by the platform's own checks alone from this answer on."
  },
  "authorizationEndpoints.rotateSecret": {
    summary: "Rotate the endpoint's secret",
    description: "A new `whsec_` secret, in this answer only; requests are signed with both for 24 hours."
  },
  "webhookDeliveries.resend": {
    summary: "Resend an event",
    description:
      "Delivers an event again, at once, to one subscription or to every subscription of its type; answers the attempts with their outcome."
  },
  "webhookDeliveries.attempts": {
    summary: "List delivery attempts",
    description: list("delivery attempts", "Filter by `event_id`, `webhook_subscription_id`, `status`.")
  },
  "oauthClients.create": {
    summary: "Register an OAuth client",
    description:
      "A connected application (admin keys): its redirect URIs, type (confidential or public) and the scopes it may ask for. A confidential client's `client_secret` is in this answer only.",
    example: { name: "Expense tool", type: "confidential", redirect_uris: ["https://app.example.com/callback"], scopes: ["read", "write"] }
  },
  "oauthClients.list": { summary: "List OAuth clients", description: list("the organization's connected applications") },
  "oauthClients.get": { summary: "Retrieve an OAuth client", description: "One connected application (never its secret)." },
  "oauthClients.delete": {
    summary: "Delete an OAuth client",
    description: "Deletes the client and revokes every grant and token of it, on every node at once."
  },
  "oauthClients.rotateSecret": {
    summary: "Rotate an OAuth client's secret",
    description: "A new client_secret for a confidential client, in this answer only; the old one stops working."
  },
  "oauthInteractions.get": {
    summary: "Retrieve an authorization request",
    description:
      "The pending request the consent page was sent with (?interaction=…): the client, the scopes asked for, the redirect URI. Lives 10 minutes."
  },
  "oauthInteractions.grant": {
    summary: "Grant an authorization request",
    description:
      "After the host app's own login and consent: the programs and scopes granted. Answers where to send the browser (the client's redirect_uri with code, state and iss).",
    example: { program_ids: [PROGRAM], scopes: ["read"] }
  },
  "oauthInteractions.deny": {
    summary: "Deny an authorization request",
    description: "Answers where to send the browser: the client's redirect_uri with error=access_denied."
  },
  "oauthGrants.list": { summary: "List OAuth grants", description: list("the grants users gave connected applications") },
  "oauthGrants.revoke": {
    summary: "Revoke an OAuth grant",
    description: "Revokes the grant and every token of it, on every node at once."
  },
  "oauth.authorize": {
    summary: "Authorization request",
    description:
      "RFC 6749 §4.1 with PKCE (RFC 7636, S256 only) and RFC 9207's iss: a valid request redirects the browser to the host app's consent page (ISSUING_OAUTH_INTERACTION_URL?interaction=…); an unknown client or redirect_uri gets an HTML error page, any other error redirects back with error and state. Unknown parameters are ignored (RFC 6749 §3.1)."
  },
  "oauth.token": {
    summary: "Token endpoint",
    description:
      "grant_type=authorization_code (with the code_verifier) or refresh_token (rotating: every refresh returns a new refresh token; presenting a retired one revokes the grant). Confidential clients authenticate with client_secret_basic or client_secret_post. Errors in RFC 6749 §5.2's format."
  },
  "oauth.revoke": {
    summary: "Token revocation",
    description:
      "RFC 7009: revokes an access or refresh token; a refresh token revokes its whole grant. Always 200 for a well-formed request."
  },
  "oauth.introspect": {
    summary: "Token introspection",
    description: "RFC 7662, for the authenticated client's own tokens: active, scope, client_id, exp and the grant's programs."
  },
  "oauth.metadata": {
    summary: "Authorization server metadata",
    description:
      "RFC 8414; issuer = ISSUING_BASE_URL. Also answered at /.well-known/oauth-authorization-server/<mount path> when the platform is mounted in a host app."
  }
}
