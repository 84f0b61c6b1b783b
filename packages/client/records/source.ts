// What packages/client/src/records.ts is generated from (`npm run client-records`): each alias
// below is printed there expanded, as a plain type, so that the client's main entry and its
// declarations load and name nothing of @issuing/core or effect (docs/client.md#installing).
// Every record and input is the wire form (`Encoded`) of core's one schema for it: the types the
// server decodes and encodes with, never a second hand-written copy. Not published, not built.
import type * as Core from "@issuing/core"
import type { EventObjects } from "../src/events.js"

/** A program of the organization. */
export type Program = typeof Core.Program.Encoded
/** An API key (never its secret). */
export type ApiKey = typeof Core.ApiKey.Encoded
/** A new API key: its secret is in this answer only. */
export type ApiKeyWithSecret = typeof Core.ApiKeyWithSecret.Encoded
/** A card: never its number or code (see `CardReveal`). */
export type Card = typeof Core.Card.Encoded
/** A card's number and code (keys with `pan_reveal`). */
export type CardReveal = typeof Core.CardReveal.Encoded
/** An embed session of the secure card display. */
export type CardEmbedSession = typeof Core.CardEmbedSession.Encoded
/** An access to card data, as the audit trail keeps it. */
export type CardAuditRecord = typeof Core.CardAuditRecord.Encoded
/** One of a card's limits with its current window's spend and what remains (`cards.spendLimits`). */
export type SpendLimitStatus = typeof Core.SpendLimitStatus.Encoded
/** A wallet and its holder. */
export type Wallet = typeof Core.Wallet.Encoded
/** A person or business the program issues cards to, with the outcome of the program's verification. */
export type Cardholder = typeof Core.Cardholder.Encoded
/** A financial account (a wallet's or the program's settlement account) and its balance. */
export type FinancialAccount = typeof Core.FinancialAccount.Encoded
/** One book of an account: debits, credits, balance. */
export type BookBalance = typeof Core.BookBalance.Encoded
/** A balanced book transfer and its entries. */
export type BookTransfer = typeof Core.BookTransfer.Encoded
/** A transfer on a rail. */
export type Transfer = typeof Core.Transfer.Encoded
/** A transaction (a card authorization's, or the one a transfer created). */
export type Transaction = typeof Core.Transaction.Encoded
/** One message of a card transaction (`transaction.card_events`), as it was decided. */
export type CardEvent = typeof Core.CardEvent.Encoded
/** One real-time decision asked of the program (`transaction.request_history`). */
export type RequestHistoryEntry = typeof Core.RequestHistoryEntry.Encoded
/** The program's authorization endpoint (never its secret). */
export type AuthorizationEndpoint = typeof Core.AuthorizationEndpoint.Encoded
/** An authorization endpoint with its secret (creation, rotation). */
export type AuthorizationEndpointWithSecret = typeof Core.AuthorizationEndpointWithSecret.Encoded
/** What an authorization endpoint answers (docs/card-transactions.md#real-time-decisions). */
export type AuthorizationAnswer = { readonly [K in keyof Core.AuthorizationAnswer]: Core.AuthorizationAnswer[K] }
/** The answer to a card network message (docs/network.md#the-answer): the same for its first delivery and every retransmission. */
export type NetworkCardMessage = typeof Core.NetworkCardMessage.Encoded
/** A program's settlement totals of one UTC day and currency (docs/network.md#reconciliation). */
export type SettlementReport = typeof Core.SettlementReport.Encoded
/** A dispute of a card transaction's settled money (docs/disputes.md). */
export type Dispute = typeof Core.Dispute.Encoded
/** An event as `GET /v1/events` lists it, `data.object` untyped (see `WebhookEvent` for the typed union). */
export type Event = typeof Core.IssuingEvent.Encoded
/** A webhook subscription (never its secret). */
export type WebhookSubscription = typeof Core.WebhookSubscription.Encoded
/** A webhook subscription with its secret (creation, rotation). */
export type WebhookSubscriptionWithSecret = typeof Core.WebhookSubscriptionWithSecret.Encoded
/** One delivery attempt of an event to a subscription. */
export type WebhookAttempt = typeof Core.WebhookAttempt.Encoded
/** What a replay queued. */
export type WebhookReplay = typeof Core.WebhookReplay.Encoded
/** A short-lived URL of the endpoint portal for one customer (a tag). */
export type WebhookPortalSession = typeof Core.WebhookPortalSession.Encoded
/** A connected application (OAuth client), never its secret. */
export type OAuthClient = typeof Core.OAuthClient.Encoded
/** A new or rotated OAuth client: a confidential client's secret is in this answer only. */
export type OAuthClientWithSecret = typeof Core.OAuthClientWithSecret.Encoded
/** A pending authorization request, as the host app's consent screen reads it. */
export type OAuthInteraction = typeof Core.OAuthInteraction.Encoded
/** Where the host app sends the browser after a grant or a denial. */
export type OAuthRedirect = typeof Core.OAuthRedirect.Encoded
/** A grant a user consented to. */
export type OAuthGrant = typeof Core.OAuthGrant.Encoded

/** Your own key-value pairs on a wallet, card, transfer or webhook subscription: `{}` when unset (docs/api.md#metadata). */
export type Metadata = typeof Core.Metadata.Type
/** `metadata` as a creation or an update sends it: keys set, a key given as "" removed, "" or null for none. */
export type MetadataParams = typeof Core.MetadataInput.Encoded

/** The body of `programs.create`. */
export type CreateProgramParams = typeof Core.CreateProgram.Encoded
/** The body of `programs.update` (admin keys): a field left out is kept. */
export type UpdateProgramParams = typeof Core.UpdateProgram.Encoded
/** The body of `cardholders.create`. */
export type CreateCardholderParams = typeof Core.CreateCardholder.Encoded
/** The body of `cardholders.update`: a field left out is kept, null clears an optional one; `metadata` is merged. */
export type UpdateCardholderParams = typeof Core.UpdateCardholder.Encoded
/** The body of `cardholders.recordVerification`. */
export type RecordVerificationParams = typeof Core.RecordVerification.Encoded
/** The body of `apiKeys.create`. */
export type CreateApiKeyParams = typeof Core.CreateApiKey.Encoded
/** The body of `cards.create`. */
export type CreateCardParams = typeof Core.IssueCard.Encoded
/** The body of `cards.update`: a control left out is kept, null clears it; `metadata` is merged (docs/api.md#metadata). */
export type UpdateCardParams = typeof Core.UpdateCard.Encoded
/** The body of `cards.searchByPan`. */
export type SearchByPanParams = typeof Core.SearchByPan.Encoded
/** The body of `wallets.create`. */
export type CreateWalletParams = typeof Core.CreateWallet.Encoded
/** The body of `wallets.update`: a field left out is kept, a tag of null clears it; `metadata` is merged (docs/api.md#metadata). */
export type UpdateWalletParams = typeof Core.UpdateWallet.Encoded
/** The body of `transfers.create`, and each item of `transfers.batch`. */
export type CreateTransferParams = typeof Core.CreateTransfer.Encoded
/** The body of `network.returnTransfer`: the rail's return code (ACH R01–R85, a wire's own text) and an optional reason. */
export type ReturnTransferParams = typeof Core.ReturnTransfer.Encoded
/** The body of `disputes.create`: `amount` defaults to all that is disputable. */
export type CreateDisputeParams = typeof Core.CreateDispute.Encoded
/** The body of `simulate.resolveDispute` and `network.resolveDispute`: WON or LOST. */
export type ResolveDisputeParams = typeof Core.ResolveDispute.Encoded
/** A dispute's status. */
export type DisputeStatus = typeof Core.DisputeStatus.Encoded
/** The body of `network.sendCardMessage`: one message of a card network (docs/network.md#card-messages). */
export type SendCardMessageParams = typeof Core.CardMessageRequest.Encoded
/** The body of `webhooks.create`. */
export type CreateWebhookSubscriptionParams = typeof Core.CreateWebhookSubscription.Encoded
/** The body of `webhooks.update`. */
export type UpdateWebhookSubscriptionParams = typeof Core.UpdateWebhookSubscription.Encoded
/** The body of `simulate.authorization`. */
export type SimulateAuthorizationParams = typeof Core.SimulateAuthorization.Encoded
/** The body of `simulate.increment`. */
export type SimulateIncrementParams = typeof Core.SimulateIncrement.Encoded
/** The body of `simulate.clearing`: `amount` defaults to the hold, `final` to true. */
export type SimulateClearingParams = typeof Core.SimulateClearing.Encoded
/** A reversal's or a return's body: `amount` defaults to all that may be released or refunded. */
export type SimulateAmountParams = typeof Core.SimulateAmount.Encoded
/** The body of `authorizationEndpoints.create`. */
export type CreateAuthorizationEndpointParams = typeof Core.CreateAuthorizationEndpoint.Encoded
/** The body of `authorizationEndpoints.update`. */
export type UpdateAuthorizationEndpointParams = typeof Core.UpdateAuthorizationEndpoint.Encoded
/** The body of `webhooks.createPortalSession`. */
export type CreateWebhookPortalSessionParams = typeof Core.CreateWebhookPortalSession.Encoded
/** The body of `webhooks.replay`. */
export type ReplayParams = typeof Core.ReplayRequest.Encoded
/** The body of `events.resend`. */
export type ResendParams = typeof Core.ResendRequest.Encoded
/** The body of `oauthClients.create`. */
export type CreateOAuthClientParams = typeof Core.CreateOAuthClient.Encoded
/** The body of `oauth.interactions.grant`. */
export type GrantInteractionParams = typeof Core.GrantInteraction.Encoded

/** The filters of `cards.list`. */
export type CardListQuery = typeof Core.CardListQuery.Encoded
/** The filters of `cards.listAuditRecords`. */
export type CardAuditQuery = typeof Core.CardAuditQuery.Encoded
/** The filters of `events.list`. */
export type EventFilter = typeof Core.EventFilter.Encoded
/** The filters of `wallets.list`. */
export type WalletFilter = typeof Core.WalletFilter.Encoded
/** The filters of `cardholders.list`. */
export type CardholderFilter = typeof Core.CardholderFilter.Encoded
/** The filters of `webhooks.list`. */
export type SubscriptionFilter = typeof Core.SubscriptionFilter.Encoded
/** The filters of `webhooks.listAttempts`. */
export type AttemptFilter = typeof Core.AttemptFilter.Encoded
/** A financial account's kind. */
export type FinancialAccountKind = (typeof Core.FinancialAccount.Encoded)["kind"]
/** A transfer's status. */
export type TransferStatus = typeof Core.TransferStatus.Encoded
/** A transfer's rail. */
export type TransferRail = typeof Core.TransferRail.Encoded
/** A transaction's status. */
export type TransactionStatus = typeof Core.TransactionStatus.Encoded

// Checked when the file is generated: every event type core emits has its typed payload in the
// client (src/events.ts); the client may know a type core is about to emit.
type Assert<T extends true> = T
export type __EveryCoreEventIsTyped = Assert<Core.EventType extends keyof EventObjects ? true : false>
