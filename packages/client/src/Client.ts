import type {
  ApiKey as ApiKeySchema,
  ApiKeyWithSecret as ApiKeyWithSecretSchema,
  AttemptFilter,
  AuthorizationAnswer as AuthorizationAnswerType,
  AuthorizationEndpoint as AuthorizationEndpointSchema,
  AuthorizationEndpointWithSecret as AuthorizationEndpointWithSecretSchema,
  BookBalance as BookBalanceSchema,
  BookTransfer as BookTransferSchema,
  Card as CardSchema,
  CardEvent as CardEventSchema,
  CardAuditQuery,
  CardAuditRecord as CardAuditRecordSchema,
  CardEmbedSession as CardEmbedSessionSchema,
  CardListQuery,
  CardReveal as CardRevealSchema,
  CreateApiKey,
  CreateAuthorizationEndpoint,
  CreateProgram,
  CreateTransfer,
  CreateTransferBatch,
  CreateWallet,
  CreateWebhookSubscription,
  EventFilter,
  EventType as EventTypeName,
  FinancialAccount as FinancialAccountSchema,
  IssueCard,
  UpdateCard,
  IssuingEvent,
  Program as ProgramSchema,
  ReplayRequest,
  RequestHistoryEntry as RequestHistoryEntrySchema,
  ResendRequest,
  SearchByPan,
  SimulateAmount,
  SimulateAuthorization,
  SimulateClearing,
  SimulateIncrement,
  SubscriptionFilter,
  Transaction as TransactionSchema,
  TransactionStatus,
  Transfer as TransferSchema,
  TransferRail,
  TransferStatus,
  UpdateAuthorizationEndpoint,
  UpdateWebhookSubscription,
  Wallet as WalletSchema,
  WebhookAttempt as WebhookAttemptSchema,
  WebhookReplay as WebhookReplaySchema,
  WebhookSubscription as WebhookSubscriptionSchema,
  WebhookSubscriptionWithSecret as WebhookSubscriptionWithSecretSchema
} from "@issuing/core"
import type { ErrorEnvelope } from "./errors.js"
import { type Page, PageList, type PageParams } from "./pagination.js"
import { type ClientOptions, type Query, type RequestOptions, Transport } from "./transport.js"
import { verifyWebhook, type WebhookEvent, type WebhookHeaders } from "./webhooks.js"

// Every record and input is the wire form (`Encoded`) of core's one schema for it: the types the
// server decodes and encodes with, never a second hand-written copy.
export type Program = typeof ProgramSchema.Encoded
export type ApiKey = typeof ApiKeySchema.Encoded
export type ApiKeyWithSecret = typeof ApiKeyWithSecretSchema.Encoded
export type Card = typeof CardSchema.Encoded
export type CardReveal = typeof CardRevealSchema.Encoded
export type CardEmbedSession = typeof CardEmbedSessionSchema.Encoded
export type CardAuditRecord = typeof CardAuditRecordSchema.Encoded
export type Wallet = typeof WalletSchema.Encoded
export type FinancialAccount = typeof FinancialAccountSchema.Encoded
export type BookBalance = typeof BookBalanceSchema.Encoded
export type BookTransfer = typeof BookTransferSchema.Encoded
export type Transfer = typeof TransferSchema.Encoded
export type Transaction = typeof TransactionSchema.Encoded
/** One message of a card transaction (`transaction.card_events`), as it was decided. */
export type CardEvent = typeof CardEventSchema.Encoded
/** One real-time decision asked of the program (`transaction.request_history`). */
export type RequestHistoryEntry = typeof RequestHistoryEntrySchema.Encoded
export type Event = typeof IssuingEvent.Encoded
/** The event types of the catalogue (docs/webhooks.md). */
export type EventType = EventTypeName
/** An event whose `data.object` is the record it describes, by type. */
export type TypedEvent<T extends EventType, O> = Omit<Event, "type" | "data"> & { readonly type: T; readonly data: { readonly object: O } }
/** A wallet account's balance or pending balance changed: the account as it stands after. */
export type BalanceUpdatedEvent = TypedEvent<"balance.updated", FinancialAccount>
/** A transaction was created or changed by a transfer or a card message: the transaction as it stands after. */
export type TransactionUpdatedEvent = TypedEvent<"transaction.updated", Transaction>
export type WebhookSubscription = typeof WebhookSubscriptionSchema.Encoded
export type WebhookSubscriptionWithSecret = typeof WebhookSubscriptionWithSecretSchema.Encoded
export type AuthorizationEndpoint = typeof AuthorizationEndpointSchema.Encoded
export type AuthorizationEndpointWithSecret = typeof AuthorizationEndpointWithSecretSchema.Encoded
/** What an authorization endpoint answers (docs/card-transactions.md#real-time-decisions). */
export type AuthorizationAnswer = AuthorizationAnswerType
export type WebhookAttempt = typeof WebhookAttemptSchema.Encoded
export type WebhookReplay = typeof WebhookReplaySchema.Encoded

export type CreateProgramParams = typeof CreateProgram.Encoded
export type CreateApiKeyParams = typeof CreateApiKey.Encoded
export type CreateCardParams = typeof IssueCard.Encoded
export type UpdateCardParams = typeof UpdateCard.Encoded
export type CreateWalletParams = typeof CreateWallet.Encoded
export type CreateTransferParams = typeof CreateTransfer.Encoded
export type CreateTransferBatchParams = typeof CreateTransferBatch.Encoded
export type CreateWebhookSubscriptionParams = typeof CreateWebhookSubscription.Encoded
export type UpdateWebhookSubscriptionParams = typeof UpdateWebhookSubscription.Encoded
export type CreateAuthorizationEndpointParams = typeof CreateAuthorizationEndpoint.Encoded
export type UpdateAuthorizationEndpointParams = typeof UpdateAuthorizationEndpoint.Encoded
export type SimulateAuthorizationParams = typeof SimulateAuthorization.Encoded
export type SimulateIncrementParams = typeof SimulateIncrement.Encoded
export type SimulateClearingParams = typeof SimulateClearing.Encoded
/** A reversal's or a return's body: `amount` defaults to all that may be released or refunded. */
export type SimulateAmountParams = typeof SimulateAmount.Encoded
export type ReplayParams = typeof ReplayRequest.Encoded
export type ResendParams = typeof ResendRequest.Encoded

/** One result of a transfer batch: the transfer, or the error a single POST would have answered. */
export type TransferBatchItem = Transfer | { readonly error: ErrorEnvelope }
/** The answer of `transfers.batch`. */
export interface TransferBatch {
  readonly object: "transfer_batch"
  readonly data: ReadonlyArray<TransferBatchItem>
}

export type CardListParams = PageParams & Partial<typeof CardListQuery.Encoded>
export type CardAuditListParams = PageParams & Partial<typeof CardAuditQuery.Encoded>
export type EventListParams = PageParams & Partial<typeof EventFilter.Encoded>
export type WebhookSubscriptionListParams = PageParams & Partial<typeof SubscriptionFilter.Encoded>
export type WebhookAttemptListParams = PageParams & Partial<typeof AttemptFilter.Encoded>
export type FinancialAccountListParams = PageParams & {
  readonly kind?: (typeof FinancialAccountSchema.Encoded)["kind"] | undefined
  readonly wallet_id?: string | undefined
  readonly currency?: string | undefined
}
export type TransferListParams = PageParams & {
  readonly status?: typeof TransferStatus.Encoded | undefined
  readonly payment_rail?: typeof TransferRail.Encoded | undefined
  readonly transaction_id?: string | undefined
  readonly financial_account_id?: string | undefined
}
export type TransactionListParams = PageParams & {
  readonly status?: typeof TransactionStatus.Encoded | undefined
  readonly card_id?: string | undefined
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
    retrieve: (id: string, options?: RequestOptions) => this.get<Program>(`/v1/programs/${segment(id)}`, undefined, options)
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
    /** New spend controls: a control left out is kept, null clears it (docs/card-data.md#changing-spend-controls). */
    update: (id: string, params: UpdateCardParams, options?: RequestOptions) =>
      this.patch<Card>(`/v1/cards/${segment(id)}`, params, options),
    freeze: (id: string, options?: RequestOptions) => this.post<Card>(`/v1/cards/${segment(id)}/freeze`, undefined, options),
    unfreeze: (id: string, options?: RequestOptions) => this.post<Card>(`/v1/cards/${segment(id)}/unfreeze`, undefined, options),
    close: (id: string, options?: RequestOptions) => this.post<Card>(`/v1/cards/${segment(id)}/close`, undefined, options),
    reissue: (id: string, options?: RequestOptions) => this.post<Card>(`/v1/cards/${segment(id)}/reissue`, undefined, options),
    reveal: (id: string, options?: RequestOptions) => this.post<CardReveal>(`/v1/cards/${segment(id)}/reveal`, undefined, options),
    searchByPan: (params: typeof SearchByPan.Encoded, options?: RequestOptions) =>
      this.post<Card>("/v1/cards/search-by-pan", params, options),
    createEmbedSession: (id: string, options?: RequestOptions) =>
      this.post<CardEmbedSession>(`/v1/cards/${segment(id)}/embed-sessions`, undefined, options),
    listAuditRecords: (params?: CardAuditListParams, options?: RequestOptions) =>
      this.list<CardAuditRecord, CardAuditListParams>("/v1/card-audit-records", params, options)
  }

  /** Wallets (docs/ledger.md). */
  readonly wallets = {
    create: (params: CreateWalletParams, options?: RequestOptions) => this.post<Wallet>("/v1/wallets", params, options),
    list: (params?: PageParams, options?: RequestOptions) => this.list<Wallet, PageParams>("/v1/wallets", params, options),
    retrieve: (id: string, options?: RequestOptions) => this.get<Wallet>(`/v1/wallets/${segment(id)}`, undefined, options)
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

  /** Events of the program, newest first; `resend` delivers one again. */
  readonly events = {
    list: (params?: EventListParams, options?: RequestOptions) => this.list<Event, EventListParams>("/v1/events", params, options),
    retrieve: (id: string, options?: RequestOptions) => this.get<Event>(`/v1/events/${segment(id)}`, undefined, options),
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
    listAttempts: (params?: WebhookAttemptListParams, options?: RequestOptions) =>
      this.list<WebhookAttempt, WebhookAttemptListParams>("/v1/webhook-attempts", params, options),
    /** Verifies a delivery (Standard Webhooks) against the raw body and returns its event; throws WebhookVerificationError. */
    verify: (body: string | Uint8Array, headers: WebhookHeaders, secret: string): WebhookEvent => verifyWebhook(body, headers, secret)
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
      this.post<Transfer>(`/v1/simulate/transfers/${segment(id)}/settle`, undefined, options)
  }
}
