import type { CurrencyCode } from "./currency.js"
import type { ErrorEnvelope } from "./errors.js"
import type { WebhookEvent } from "./events.js"
import { type Page, PageList, type PageParams } from "./pagination.js"
import type {
  SpendLimitStatus,
  Cardholder,
  CardholderFilter,
  CreateCardholderParams,
  RecordVerificationParams,
  UpdateCardholderParams,
  UpdateProgramParams,
  ApiKey,
  ApiKeyWithSecret,
  AttemptFilter,
  BookBalance,
  BookTransfer,
  Card,
  CardAuditQuery,
  CardAuditRecord,
  CardEmbedSession,
  CardListQuery,
  CardReveal,
  CreateApiKeyParams,
  CreateCardParams,
  CreateDisputeParams,
  Dispute,
  DisputeStatus,
  CreateOAuthClientParams,
  CreateProgramParams,
  CreateTransferParams,
  CreateWalletParams,
  CreateWebhookPortalSessionParams,
  CreateWebhookSubscriptionParams,
  EventFilter,
  FinancialAccount,
  FinancialAccountKind,
  GrantInteractionParams,
  OAuthClient,
  OAuthClientWithSecret,
  OAuthGrant,
  OAuthInteraction,
  OAuthRedirect,
  Program,
  ReplayParams,
  ResendParams,
  SearchByPanParams,
  SimulateAuthorizationParams,
  SubscriptionFilter,
  Transaction,
  TransactionStatus,
  Transfer,
  TransferRail,
  TransferStatus,
  UpdateCardParams,
  UpdateWalletParams,
  UpdateWebhookSubscriptionParams,
  Wallet,
  WalletFilter,
  WebhookAttempt,
  WebhookPortalSession,
  WebhookReplay,
  WebhookSubscription,
  WebhookSubscriptionWithSecret,
  AuthorizationEndpoint,
  AuthorizationEndpointWithSecret,
  CreateAuthorizationEndpointParams,
  NetworkCardMessage,
  ResolveDisputeParams,
  ReturnTransferParams,
  SendCardMessageParams,
  SettlementReport,
  SimulateAmountParams,
  SimulateClearingParams,
  SimulateIncrementParams,
  UpdateAuthorizationEndpointParams
} from "./records.js"
import { type ClientOptions, type Query, type RequestOptions, Transport } from "./transport.js"
import { verifyWebhook, type WebhookHeaders } from "./webhooks.js"

// The records and inputs are core's schemas' wire forms, generated as plain types (records.ts).
export type * from "./records.js"

/** One result of a transfer batch: the transfer, or the error a single POST would have answered. */
export type TransferBatchItem = Transfer | { readonly error: ErrorEnvelope }
/** The body of `transfers.batch`: up to 1,000 transfers, each a `transfers.create` body; `atomic`: all or nothing. */
export interface CreateTransferBatchParams {
  readonly transfers: ReadonlyArray<CreateTransferParams>
  readonly atomic?: boolean | undefined
}
/** The answer of `transfers.batch`. */
export interface TransferBatch {
  readonly object: "transfer_batch"
  readonly data: ReadonlyArray<TransferBatchItem>
}

export type CardListParams = PageParams & Partial<CardListQuery>
export type CardAuditListParams = PageParams & Partial<CardAuditQuery>
export type EventListParams = PageParams & Partial<EventFilter>
export type WalletListParams = PageParams & Partial<WalletFilter>
/** The query of `cardholders.list`: paging and the filters `status` and `email`. */
export type CardholderListParams = PageParams & Partial<CardholderFilter>
export type WebhookSubscriptionListParams = PageParams & Partial<SubscriptionFilter>
export type WebhookAttemptListParams = PageParams & Partial<AttemptFilter>
export type FinancialAccountListParams = PageParams & {
  readonly kind?: FinancialAccountKind | undefined
  readonly wallet_id?: string | undefined
  readonly currency?: CurrencyCode | undefined
}
export type TransferListParams = PageParams & {
  readonly status?: TransferStatus | undefined
  readonly payment_rail?: TransferRail | undefined
  readonly transaction_id?: string | undefined
  readonly financial_account_id?: string | undefined
}
export type TransactionListParams = PageParams & {
  readonly status?: TransactionStatus | undefined
  readonly card_id?: string | undefined
}
export type DisputeListParams = PageParams & {
  readonly transaction_id?: string | undefined
  readonly status?: DisputeStatus | undefined
}
export type BookTransferListParams = PageParams & {
  readonly book?: string | undefined
  readonly transfer_id?: string | undefined
  readonly transaction_id?: string | undefined
}

const segment = (id: string) => encodeURIComponent(id)

/**
 * The issuing platform's /v1 API as Promises over `fetch`. Lists are awaitable (one page) and
 * async-iterable (every item); POSTs carry an Idempotency-Key, reused on their retries; 408, 429
 * (after Retry-After), 5xx, dropped connections and time-outs are retried with back-off; failures
 * throw typed errors carrying the envelope. See docs/client.md.
 *
 * ```ts
 * const client = new IssuingClient({ apiKey: process.env.ISSUING_API_KEY!, baseUrl, programId })
 * const wallet = await client.wallets.create({ holder: { name: "Ada Lovelace" } })
 * for await (const card of client.cards.list()) console.log(card.last_four)
 * ```
 */
export class IssuingClient {
  private readonly transport: Transport

  constructor(options: ClientOptions) {
    this.transport = new Transport(options)
  }

  private get<A>(path: string, query?: Query, options?: RequestOptions) {
    return this.transport.request<A>({ method: "GET", path, query }, options)
  }
  private patch<A>(path: string, body: unknown, options?: RequestOptions) {
    return this.transport.request<A>({ method: "PATCH", path, body }, options)
  }
  private post<A>(path: string, body?: unknown, options?: RequestOptions) {
    return this.transport.request<A>({ method: "POST", path, body }, options)
  }
  private list<T, P extends PageParams>(path: string, params: P | undefined, options?: RequestOptions): PageList<T> {
    return new PageList<T>((query) => this.get<Page<T>>(path, query as Query, options), params ?? {})
  }

  /** Programs of the key's organization (organization-scoped: no X-Program-ID needed). */
  readonly programs = {
    create: (params: CreateProgramParams, options?: RequestOptions) => this.post<Program>("/v1/programs", params, options),
    list: (params?: PageParams, options?: RequestOptions) => this.list<Program, PageParams>("/v1/programs", params, options),
    retrieve: (id: string, options?: RequestOptions) => this.get<Program>(`/v1/programs/${segment(id)}`, undefined, options),
    /** A program's settings (admin keys): `require_verified_cardholder` (docs/cardholders.md). */
    update: (id: string, params: UpdateProgramParams, options?: RequestOptions) =>
      this.patch<Program>(`/v1/programs/${segment(id)}`, params, options)
  }

  /** API keys of the organization (admin keys only). */
  readonly apiKeys = {
    create: (params: CreateApiKeyParams, options?: RequestOptions) => this.post<ApiKeyWithSecret>("/v1/api-keys", params, options),
    list: (params?: PageParams, options?: RequestOptions) => this.list<ApiKey, PageParams>("/v1/api-keys", params, options),
    revoke: (id: string, options?: RequestOptions) =>
      this.transport.request<ApiKey>({ method: "DELETE", path: `/v1/api-keys/${segment(id)}` }, options)
  }

  /** Cards: issuance, lifecycle, reveal (keys with `pan_reveal`), search by number, embed sessions, audit records. */
  readonly cards = {
    create: (params: CreateCardParams, options?: RequestOptions) => this.post<Card>("/v1/cards", params, options),
    list: (params?: CardListParams, options?: RequestOptions) => this.list<Card, CardListParams>("/v1/cards", params, options),
    retrieve: (id: string, options?: RequestOptions) => this.get<Card>(`/v1/cards/${segment(id)}`, undefined, options),
    /** Each limit of the card with its current window's spend and what remains (docs/card-transactions.md#remaining-spend). */
    spendLimits: (id: string, options?: RequestOptions) =>
      this.get<Page<SpendLimitStatus>>(`/v1/cards/${segment(id)}/spend-limits`, undefined, options),
    /** New spend controls: a control left out is kept, null clears it (docs/card-data.md#changing-spend-controls). */
    update: (id: string, params: UpdateCardParams, options?: RequestOptions) =>
      this.patch<Card>(`/v1/cards/${segment(id)}`, params, options),
    freeze: (id: string, options?: RequestOptions) => this.post<Card>(`/v1/cards/${segment(id)}/freeze`, undefined, options),
    unfreeze: (id: string, options?: RequestOptions) => this.post<Card>(`/v1/cards/${segment(id)}/unfreeze`, undefined, options),
    close: (id: string, options?: RequestOptions) => this.post<Card>(`/v1/cards/${segment(id)}/close`, undefined, options),
    reissue: (id: string, options?: RequestOptions) => this.post<Card>(`/v1/cards/${segment(id)}/reissue`, undefined, options),
    reveal: (id: string, options?: RequestOptions) => this.post<CardReveal>(`/v1/cards/${segment(id)}/reveal`, undefined, options),
    searchByPan: (params: SearchByPanParams, options?: RequestOptions) => this.post<Card>("/v1/cards/search-by-pan", params, options),
    createEmbedSession: (id: string, options?: RequestOptions) =>
      this.post<CardEmbedSession>(`/v1/cards/${segment(id)}/embed-sessions`, undefined, options),
    listAuditRecords: (params?: CardAuditListParams, options?: RequestOptions) =>
      this.list<CardAuditRecord, CardAuditListParams>("/v1/card-audit-records", params, options)
  }

  /** Wallets (docs/ledger.md). */
  readonly wallets = {
    create: (params: CreateWalletParams, options?: RequestOptions) => this.post<Wallet>("/v1/wallets", params, options),
    /** The program's wallets, or one `tag`'s. */
    list: (params?: WalletListParams, options?: RequestOptions) => this.list<Wallet, WalletListParams>("/v1/wallets", params, options),
    retrieve: (id: string, options?: RequestOptions) => this.get<Wallet>(`/v1/wallets/${segment(id)}`, undefined, options),
    /** A new tag (null clears it) or a metadata change; a field left out is kept (docs/ledger.md#wallet-tags). */
    update: (id: string, params: UpdateWalletParams, options?: RequestOptions) =>
      this.patch<Wallet>(`/v1/wallets/${segment(id)}`, params, options)
  }

  /** Cardholders and the outcome of the program's own verification of them (docs/cardholders.md). */
  readonly cardholders = {
    create: (params: CreateCardholderParams, options?: RequestOptions) => this.post<Cardholder>("/v1/cardholders", params, options),
    /** The program's cardholders, newest first, optionally of one `status` or `email`. */
    list: (params?: CardholderListParams, options?: RequestOptions) =>
      this.list<Cardholder, CardholderListParams>("/v1/cardholders", params, options),
    retrieve: (id: string, options?: RequestOptions) => this.get<Cardholder>(`/v1/cardholders/${segment(id)}`, undefined, options),
    /** New details: a field left out is kept, null clears an optional one; `metadata` is merged. */
    update: (id: string, params: UpdateCardholderParams, options?: RequestOptions) =>
      this.patch<Cardholder>(`/v1/cardholders/${segment(id)}`, params, options),
    /** Records the outcome of the program's own check: VERIFIED or REJECTED, with its `reference`. */
    recordVerification: (id: string, params: RecordVerificationParams, options?: RequestOptions) =>
      this.post<Cardholder>(`/v1/cardholders/${segment(id)}/verification`, params, options)
  }

  /** Financial accounts, their balances per book and their book transfers. */
  readonly financialAccounts = {
    list: (params?: FinancialAccountListParams, options?: RequestOptions) =>
      this.list<FinancialAccount, FinancialAccountListParams>("/v1/financial-accounts", params, options),
    retrieve: (id: string, options?: RequestOptions) =>
      this.get<FinancialAccount>(`/v1/financial-accounts/${segment(id)}`, undefined, options),
    balances: (id: string, options?: RequestOptions) =>
      this.get<Page<BookBalance>>(`/v1/financial-accounts/${segment(id)}/balances`, undefined, options),
    bookTransfers: (id: string, params?: BookTransferListParams, options?: RequestOptions) =>
      this.list<BookTransfer, BookTransferListParams>(`/v1/financial-accounts/${segment(id)}/book-transfers`, params, options)
  }

  /** Transfers on book, ACH same day, wire and FedNow. */
  readonly transfers = {
    create: (params: CreateTransferParams, options?: RequestOptions) => this.post<Transfer>("/v1/transfers", params, options),
    batch: (params: CreateTransferBatchParams, options?: RequestOptions) =>
      this.post<TransferBatch>("/v1/transfers/batch", params, options),
    list: (params?: TransferListParams, options?: RequestOptions) =>
      this.list<Transfer, TransferListParams>("/v1/transfers", params, options),
    retrieve: (id: string, options?: RequestOptions) => this.get<Transfer>(`/v1/transfers/${segment(id)}`, undefined, options)
  }

  /** Transactions and their book transfers. */
  readonly transactions = {
    list: (params?: TransactionListParams, options?: RequestOptions) =>
      this.list<Transaction, TransactionListParams>("/v1/transactions", params, options),
    retrieve: (id: string, options?: RequestOptions) => this.get<Transaction>(`/v1/transactions/${segment(id)}`, undefined, options),
    /** Releases a card transaction's open hold at once: EXPIRED (SETTLED if some of it cleared); 409 unless PENDING. */
    expire: (id: string, options?: RequestOptions) => this.post<Transaction>(`/v1/transactions/${segment(id)}/expire`, undefined, options),
    bookTransfers: (id: string, params?: BookTransferListParams, options?: RequestOptions) =>
      this.list<BookTransfer, BookTransferListParams>(`/v1/transactions/${segment(id)}/book-transfers`, params, options)
  }

  /**
   * Disputes of card transactions' settled money (docs/disputes.md): a submission credits the
   * wallet provisionally; BusinessRuleError `amount_exceeds_disputable` beyond settled − returned −
   * already disputed, `transaction_not_disputable` for a transfer's or a DECLINED transaction.
   */
  readonly disputes = {
    create: (params: CreateDisputeParams, options?: RequestOptions) => this.post<Dispute>("/v1/disputes", params, options),
    /** The program's disputes in time order, or one transaction's, or one status's. */
    list: (params?: DisputeListParams, options?: RequestOptions) => this.list<Dispute, DisputeListParams>("/v1/disputes", params, options),
    retrieve: (id: string, options?: RequestOptions) => this.get<Dispute>(`/v1/disputes/${segment(id)}`, undefined, options)
  }

  /** Settlement totals per UTC day, for reconciling against the network's settlement file (docs/network.md#reconciliation). */
  readonly settlementReports = {
    /** A day's (`date`, YYYY-MM-DD) clearings, force posts, returns and net in `currency`; any key that may read. */
    get: (params: { readonly date: string; readonly currency: CurrencyCode }, options?: RequestOptions) =>
      this.get<SettlementReport>("/v1/settlement-reports", { date: params.date, currency: params.currency }, options)
  }

  /** Events of the program, newest first; `resend` delivers one again. */
  readonly events = {
    /** Events typed by `type`: narrowing on it types `data.object` (`WebhookEvent`). */
    list: (params?: EventListParams, options?: RequestOptions) => this.list<WebhookEvent, EventListParams>("/v1/events", params, options),
    retrieve: (id: string, options?: RequestOptions) => this.get<WebhookEvent>(`/v1/events/${segment(id)}`, undefined, options),
    resend: (id: string, params: ResendParams = {}, options?: RequestOptions) =>
      this.post<Page<WebhookAttempt>>(`/v1/events/${segment(id)}/resend`, params, options)
  }

  /** Webhook subscriptions, their delivery attempts, and verification of the deliveries a receiver gets. */
  readonly webhooks = {
    create: (params: CreateWebhookSubscriptionParams, options?: RequestOptions) =>
      this.post<WebhookSubscriptionWithSecret>("/v1/webhook-subscriptions", params, options),
    list: (params?: WebhookSubscriptionListParams, options?: RequestOptions) =>
      this.list<WebhookSubscription, WebhookSubscriptionListParams>("/v1/webhook-subscriptions", params, options),
    retrieve: (id: string, options?: RequestOptions) =>
      this.get<WebhookSubscription>(`/v1/webhook-subscriptions/${segment(id)}`, undefined, options),
    update: (id: string, params: UpdateWebhookSubscriptionParams, options?: RequestOptions) =>
      this.transport.request<WebhookSubscription>(
        { method: "PATCH", path: `/v1/webhook-subscriptions/${segment(id)}`, body: params },
        options
      ),
    delete: (id: string, options?: RequestOptions) =>
      this.transport.request<WebhookSubscription>({ method: "DELETE", path: `/v1/webhook-subscriptions/${segment(id)}` }, options),
    rotateSecret: (id: string, options?: RequestOptions) =>
      this.post<WebhookSubscriptionWithSecret>(`/v1/webhook-subscriptions/${segment(id)}/rotate-secret`, undefined, options),
    replay: (id: string, params: ReplayParams, options?: RequestOptions) =>
      this.post<WebhookReplay>(`/v1/webhook-subscriptions/${segment(id)}/replay`, params, options),
    /** Sends a signed `webhook.test` event to this subscription only; answers with its attempt. */
    sendTest: (id: string, options?: RequestOptions) =>
      this.post<WebhookAttempt>(`/v1/webhook-subscriptions/${segment(id)}/test`, undefined, options),
    /** A short-lived URL of the endpoint portal for one customer (`scope_tag`), to embed in an iframe. */
    createPortalSession: (params?: CreateWebhookPortalSessionParams, options?: RequestOptions) =>
      this.post<WebhookPortalSession>("/v1/webhook-portal-sessions", params ?? {}, options),
    listAttempts: (params?: WebhookAttemptListParams, options?: RequestOptions) =>
      this.list<WebhookAttempt, WebhookAttemptListParams>("/v1/webhook-attempts", params, options),
    /** Verifies a delivery (Standard Webhooks) against the raw body and returns its event; throws WebhookVerificationError. */
    verify: (body: string | Uint8Array, headers: WebhookHeaders, secret: string): WebhookEvent => verifyWebhook(body, headers, secret)
  }

  /** Connected applications (OAuth clients) of the organization: admin keys, no X-Program-ID (docs/oauth.md#clients). */
  readonly oauthClients = {
    create: (params: CreateOAuthClientParams, options?: RequestOptions) =>
      this.post<OAuthClientWithSecret>("/v1/oauth-clients", params, options),
    list: (params?: PageParams, options?: RequestOptions) => this.list<OAuthClient, PageParams>("/v1/oauth-clients", params, options),
    retrieve: (id: string, options?: RequestOptions) => this.get<OAuthClient>(`/v1/oauth-clients/${segment(id)}`, undefined, options),
    /** Deletes the client and revokes every grant and token of it. */
    delete: (id: string, options?: RequestOptions) =>
      this.transport.request<OAuthClient>({ method: "DELETE", path: `/v1/oauth-clients/${segment(id)}` }, options),
    rotateSecret: (id: string, options?: RequestOptions) =>
      this.post<OAuthClientWithSecret>(`/v1/oauth-clients/${segment(id)}/rotate-secret`, undefined, options)
  }

  /**
   * The host app's side of OAuth (admin keys, docs/oauth.md#the-consent-screen): read the pending
   * request its consent page was sent with, then grant or deny it and redirect the browser to
   * `redirect_to`; the grants users gave, and their revocation.
   */
  readonly oauth = {
    interactions: {
      retrieve: (id: string, options?: RequestOptions) =>
        this.get<OAuthInteraction>(`/v1/oauth/interactions/${segment(id)}`, undefined, options),
      grant: (id: string, params: GrantInteractionParams, options?: RequestOptions) =>
        this.post<OAuthRedirect>(`/v1/oauth/interactions/${segment(id)}/grant`, params, options),
      deny: (id: string, options?: RequestOptions) =>
        this.post<OAuthRedirect>(`/v1/oauth/interactions/${segment(id)}/deny`, undefined, options)
    },
    grants: {
      list: (params?: PageParams, options?: RequestOptions) => this.list<OAuthGrant, PageParams>("/v1/oauth/grants", params, options),
      /** Revokes the grant and every token of it. */
      revoke: (id: string, options?: RequestOptions) =>
        this.transport.request<OAuthGrant>({ method: "DELETE", path: `/v1/oauth/grants/${segment(id)}` }, options)
    }
  }

  /**
   * The program's authorization endpoint (one at most), asked in real time whether to approve an
   * authorization (docs/card-transactions.md#real-time-decisions). Its requests are signed as
   * webhooks are: verify them with `webhooks.verify`'s Standard Webhooks check.
   */
  readonly authorizationEndpoints = {
    create: (params: CreateAuthorizationEndpointParams, options?: RequestOptions) =>
      this.post<AuthorizationEndpointWithSecret>("/v1/authorization-endpoints", params, options),
    list: (params?: PageParams, options?: RequestOptions) =>
      this.list<AuthorizationEndpoint, PageParams>("/v1/authorization-endpoints", params, options),
    retrieve: (id: string, options?: RequestOptions) =>
      this.get<AuthorizationEndpoint>(`/v1/authorization-endpoints/${segment(id)}`, undefined, options),
    update: (id: string, params: UpdateAuthorizationEndpointParams, options?: RequestOptions) =>
      this.transport.request<AuthorizationEndpoint>(
        { method: "PATCH", path: `/v1/authorization-endpoints/${segment(id)}`, body: params },
        options
      ),
    delete: (id: string, options?: RequestOptions) =>
      this.transport.request<AuthorizationEndpoint>({ method: "DELETE", path: `/v1/authorization-endpoints/${segment(id)}` }, options),
    rotateSecret: (id: string, options?: RequestOptions) =>
      this.post<AuthorizationEndpointWithSecret>(`/v1/authorization-endpoints/${segment(id)}/rotate-secret`, undefined, options)
  }

  /**
   * Sandbox simulations (404 in production): card network messages (docs/card-transactions.md) and
   * the settlement of a PENDING transfer. A message from a state it cannot apply to throws
   * ConflictError (409); an amount beyond the hold or the settled amount, BusinessRuleError
   * (`amount_exceeds_pending` / `amount_exceeds_settled`).
   */
  readonly simulate = {
    /** An authorization: PENDING holding the amount (AUTHORIZATION, the default), SETTLED (FINANCIAL_AUTHORIZATION) or DECLINED. */
    authorization: (params: SimulateAuthorizationParams, options?: RequestOptions) =>
      this.post<Transaction>("/v1/simulate/authorizations", params, options),
    /** An incremental authorization on a PENDING transaction: approved, the hold grows; declined, it is recorded and the hold kept. */
    increment: (transactionId: string, params: SimulateIncrementParams, options?: RequestOptions) =>
      this.post<Transaction>(`/v1/simulate/transactions/${segment(transactionId)}/increment`, params, options),
    /** A clearing: `amount` defaults to the hold; less releases the rest unless `final: false`; more posts the excess too. */
    clearing: (transactionId: string, params: SimulateClearingParams = {}, options?: RequestOptions) =>
      this.post<Transaction>(`/v1/simulate/transactions/${segment(transactionId)}/clearing`, params, options),
    /** A reversal of all (the default) or part of the open hold. */
    reversal: (transactionId: string, params: SimulateAmountParams = {}, options?: RequestOptions) =>
      this.post<Transaction>(`/v1/simulate/transactions/${segment(transactionId)}/reversal`, params, options),
    /** A return (refund) of all (the default) or part of what settled: settlement → wallet. */
    return: (transactionId: string, params: SimulateAmountParams = {}, options?: RequestOptions) =>
      this.post<Transaction>(`/v1/simulate/transactions/${segment(transactionId)}/return`, params, options),
    settleTransfer: (id: string, options?: RequestOptions) =>
      this.post<Transfer>(`/v1/simulate/transfers/${segment(id)}/settle`, undefined, options),
    /** The network's decision on a SUBMITTED dispute: WON keeps the provisional credit, LOST takes it back; ConflictError once resolved. */
    resolveDispute: (id: string, params: ResolveDisputeParams, options?: RequestOptions) =>
      this.post<Dispute>(`/v1/simulate/disputes/${segment(id)}/resolve`, params, options)
  }

  /**
   * What the network and the bank partner send, in every environment (docs/network.md); the key
   * needs the `network` right (PermissionError otherwise). Card messages, and rail outcomes of a program's transfers:
   * a settlement, or a return (RETURNED, the money back by a reversing transfer; ConflictError
   * for a rail without returns or a second return).
   */
  readonly network = {
    /**
     * One card network message (docs/network.md#card-messages): the card found by its number, no
     * X-Program-ID. Every decision answers 200 with its ISO 8583 `response_code`; a repeated
     * `network_message_id` answers the first answer again and applies nothing twice.
     */
    sendCardMessage: (params: SendCardMessageParams, options?: RequestOptions) =>
      this.post<NetworkCardMessage>("/v1/network/card-messages", params, options),
    /** The rail settled a PENDING ach_same_day or wire transfer: SETTLED. */
    settleTransfer: (id: string, options?: RequestOptions) =>
      this.post<Transfer>(`/v1/network/transfers/${segment(id)}/settle`, undefined, options),
    /** The rail returned a PENDING or SETTLED ach_same_day or wire transfer: RETURNED with `return_code` (docs/ledger.md#returns). */
    returnTransfer: (id: string, params: ReturnTransferParams, options?: RequestOptions) =>
      this.post<Transfer>(`/v1/network/transfers/${segment(id)}/return`, params, options),
    /** The network's decision on a SUBMITTED dispute (docs/disputes.md): WON or LOST; ConflictError once resolved. */
    resolveDispute: (id: string, params: ResolveDisputeParams, options?: RequestOptions) =>
      this.post<Dispute>(`/v1/network/disputes/${segment(id)}/resolve`, params, options)
  }
}
