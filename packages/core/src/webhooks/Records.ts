import { Either, ParseResult, Schema } from "effect"
import { EVENT_TYPES, type EventType, isSubscribableEventType, SUBSCRIBABLE_EVENT_TYPES } from "../events/Records.js"
import { Uuid } from "../platform/Ids.js"
import { parseWindowBound } from "../platform/Time.js"
import { Metadata, MetadataInput } from "../platform/Metadata.js"

/**
 * Webhook records and request inputs (docs/webhooks.md): one schema each, used by the HTTP API to
 * encode and decode and, through `typeof X.Type`, by the services and stores. Inputs are decoded
 * once, at the edge; the services take the decoded values and check only what needs the database,
 * the network or the configuration (the SSRF guard, the replay span, the subscription limit).
 */

const subscriptionFields = {
  id: Schema.String,
  object: Schema.Literal("webhook_subscription"),
  url: Schema.String,
  description: Schema.String,
  /** The event types delivered (the union of event types: a typed client checks them). */
  event_types: Schema.Array(Schema.Literal(...EVENT_TYPES)),
  disabled: Schema.Boolean,
  tag: Schema.NullOr(Schema.String).annotations({
    description:
      "The customer the subscription belongs to (the endpoint portal's scope): it is sent only the events of that tag's wallets; or null."
  }),
  metadata: Metadata,
  created_at: Schema.String,
  updated_at: Schema.String
}

/** A webhook subscription as the API shows it; never carries its secret. */
export const WebhookSubscription = Schema.Struct(subscriptionFields).annotations({ identifier: "WebhookSubscription" })
export type WebhookSubscription = typeof WebhookSubscription.Type

/** The subscription as created or rotated: the only responses that show its signing secret. */
export const WebhookSubscriptionWithSecret = Schema.Struct({ ...subscriptionFields, secret: Schema.String }).annotations({
  identifier: "WebhookSubscriptionWithSecret"
})
export type WebhookSubscriptionWithSecret = typeof WebhookSubscriptionWithSecret.Type

/** The stored subscription: sealed secrets and failure tracking beside the public fields. */
export interface StoredSubscription extends WebhookSubscription {
  readonly program_id: string
  /** The current signing secret, sealed by the vault. */
  readonly secret_sealed: string
  /** The secret replaced by the last rotation, still signing until `previous_secret_expires_at`. */
  readonly previous_secret_sealed: string | null
  readonly previous_secret_expires_at: string | null
}

/** Outcome of one delivery try: attempts are only ever SUCCESS or FAILED. */
export const ATTEMPT_STATUSES = ["SUCCESS", "FAILED"] as const
export const AttemptStatus = Schema.Literal(...ATTEMPT_STATUSES)
export type AttemptStatus = typeof AttemptStatus.Type

/** One delivery try, recorded when it ends. */
export const WebhookAttempt = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("webhook_attempt"),
  event_id: Schema.String,
  webhook_subscription_id: Schema.String,
  status: AttemptStatus,
  response_code: Schema.Number,
  response_body: Schema.String.annotations({ description: "The start of the endpoint's answer (or the error met), as text." }),
  attempted_at: Schema.String,
  created_at: Schema.String,
  updated_at: Schema.String
}).annotations({ identifier: "WebhookAttempt" })
export type WebhookAttempt = typeof WebhookAttempt.Type

/** The answer to a replay; `begin` and `end` echo the request. */
export const WebhookReplay = Schema.Struct({
  object: Schema.Literal("webhook_replay"),
  webhook_subscription_id: Schema.String,
  begin: Schema.String.annotations({ description: "The window's start, inclusive, as sent (RFC 3339)." }),
  end: Schema.String.annotations({ description: "The window's end, inclusive, as sent (RFC 3339)." }),
  events_queued: Schema.Number.annotations({ description: "How many events of the window were queued for delivery again." })
}).annotations({ identifier: "WebhookReplay" })
export type WebhookReplay = typeof WebhookReplay.Type

// ---------------------------------------------------------------------------------------------
// Request inputs. Refinements are plain filters, so the OpenAPI document shows the field types
// only; messages never echo the rejected text (it may be a secret sent in the wrong field).

/** Why a subscription URL is refused by its form alone, or undefined when it is acceptable. */
const urlProblem = (text: string): string | undefined => {
  if (text.length === 0) return "must not be empty"
  if (text.length > WEBHOOK_LIMITS.maxUrlLength) return `must be at most ${WEBHOOK_LIMITS.maxUrlLength} characters`
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return "must be an absolute http or https URL"
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return "must use http or https"
  if (url.username !== "" || url.password !== "") return "must not carry credentials"
  if (url.hostname === "") return "must name a host"
  if (url.hash !== "") return "must not have a fragment"
  return undefined
}

/**
 * A subscription URL: trimmed, then an absolute http(s) URL of bounded length without credentials
 * or fragment. Stored as given (trimmed), so the API echoes exactly the URL the caller sent. Where
 * it may point (the SSRF guard) needs DNS and the configuration: the service checks that.
 */
export const WebhookUrl = Schema.transform(Schema.String, Schema.String, {
  strict: true,
  decode: (text) => text.trim(),
  encode: (text) => text
}).pipe(Schema.filter((text) => urlProblem(text) ?? true))

/** The spelling of every subscribable event type (docs/webhooks.md#event-types): `["*"]`, alone. */
export const EVERY_EVENT_TYPE = "*"

/**
 * The event types of a subscription: at least one, each known and subscribable (not `webhook.test`,
 * which only the test endpoint sends); duplicates are collapsed by the service. `["*"]` stands for
 * every subscribable type there is, written out as the list (docs/webhooks.md#event-types).
 */
export const SubscribedEventTypes = Schema.transform(
  Schema.Array(Schema.String).annotations({
    description: `Event types to deliver; \`["${EVERY_EVENT_TYPE}"]\` subscribes to every type there is (stored as the list).`
  }),
  Schema.Array(Schema.String),
  {
    strict: true,
    decode: (types) => (types.length === 1 && types[0] === EVERY_EVENT_TYPE ? [...SUBSCRIBABLE_EVENT_TYPES] : types),
    encode: (types) => types
  }
).pipe(
  Schema.filter((types): types is ReadonlyArray<EventType> => types.length > 0 && types.every(isSubscribableEventType), {
    // Also the message of what is not an array of strings at all: `actual` may be anything.
    message: (issue) => {
      const types = issue.actual
      if (!Array.isArray(types)) return "must be an array of event types"
      if (types.length === 0) return "must hold at least one event type"
      const index = types.findIndex((type) => typeof type !== "string" || !isSubscribableEventType(type))
      return `item ${index} is not an event type a subscription may hold; those are: ${SUBSCRIBABLE_EVENT_TYPES.join(", ")}`
    }
  })
)

/** A subscription's description: at most 500 characters. */
export const WebhookDescription = Schema.String.pipe(
  Schema.filter(
    (text) => text.length <= WEBHOOK_LIMITS.maxDescriptionLength || `must be at most ${WEBHOOK_LIMITS.maxDescriptionLength} characters`
  )
)

/**
 * A subscription's tag: the customer it belongs to, 1 to 64 characters, compared exactly. The
 * endpoint portal shows a customer only the subscriptions of its session's tag.
 */
export const WebhookTag = Schema.String.pipe(
  Schema.filter(
    (text) => (text.length > 0 && text.length <= WEBHOOK_LIMITS.maxTagLength) || `must be 1 to ${WEBHOOK_LIMITS.maxTagLength} characters`
  )
)

/** The body of POST /v1/webhook-subscriptions. */
export const CreateWebhookSubscription = Schema.Struct({
  url: WebhookUrl,
  description: Schema.optional(WebhookDescription),
  event_types: SubscribedEventTypes,
  disabled: Schema.optional(Schema.Boolean),
  tag: Schema.optional(
    Schema.NullOr(WebhookTag).annotations({
      description: "The customer the subscription belongs to, 1 to 64 characters: it is sent only the events of that tag's wallets."
    })
  ),
  metadata: Schema.optional(MetadataInput)
})
export type CreateWebhookSubscription = typeof CreateWebhookSubscription.Type

/** The body of PATCH /v1/webhook-subscriptions/{id}: the fields to change. */
export const UpdateWebhookSubscription = Schema.Struct({
  url: Schema.optional(WebhookUrl),
  description: Schema.optional(WebhookDescription),
  event_types: Schema.optional(SubscribedEventTypes),
  disabled: Schema.optional(Schema.Boolean),
  tag: Schema.optional(
    Schema.NullOr(WebhookTag).annotations({ description: "The customer the subscription belongs to, 1 to 64 characters; null clears it." })
  ),
  /** A change of the metadata (docs/api.md#metadata): keys given are set, "" removes one, null or "" clears all. */
  metadata: Schema.optional(MetadataInput)
})
export type UpdateWebhookSubscription = typeof UpdateWebhookSubscription.Type

/**
 * The filters of GET /v1/webhook-subscriptions (paging aside): `disabled` is true/1, false/0, or
 * omitted for both; `tag` keeps the subscriptions of that tag.
 */
export const SubscriptionFilter = Schema.Struct({
  tag: Schema.optional(WebhookTag),
  disabled: Schema.optional(
    Schema.transformOrFail(Schema.String, Schema.Boolean, {
      strict: true,
      decode: (text, _, ast) => {
        const value = text.trim().toLowerCase()
        if (value === "true" || value === "1") return ParseResult.succeed(true)
        if (value === "false" || value === "0") return ParseResult.succeed(false)
        return ParseResult.fail(new ParseResult.Type(ast, text, "must be true or false"))
      },
      encode: (flag) => ParseResult.succeed(String(flag))
    })
  )
})
export type SubscriptionFilter = typeof SubscriptionFilter.Type

export { parseWindowBound }

/** One end of a replay window: the text as sent (the answer echoes it) and the instant it names. */
export interface WindowBound {
  readonly text: string
  readonly ms: number
}

const windowBound = (bound: "begin" | "end", example: string) =>
  Schema.transformOrFail(Schema.String, Schema.Struct({ text: Schema.String, ms: Schema.Number }), {
    strict: true,
    decode: (text, _, ast) =>
      Either.fromNullable(
        parseWindowBound(text, bound),
        () => new ParseResult.Type(ast, text, `must be an RFC 3339 timestamp, e.g. ${example}`)
      ).pipe(Either.map((ms): WindowBound => ({ text, ms }))),
    encode: (window) => ParseResult.succeed(window.text)
  })

/** The body of POST /v1/webhook-subscriptions/{id}/replay: both ends inclusive. */
export const ReplayRequest = Schema.Struct({
  begin: windowBound("begin", "2026-05-02T00:00:00Z").annotations({
    description: "The window's start, inclusive: an RFC 3339 timestamp, e.g. 2026-05-02T00:00:00Z."
  }),
  end: windowBound("end", "2026-05-02T23:59:59Z").annotations({
    description: "The window's end, inclusive: an RFC 3339 timestamp, e.g. 2026-05-02T23:59:59Z."
  })
})
export type ReplayRequest = typeof ReplayRequest.Type

/**
 * The body of POST /v1/events/{event_id}/resend: every field optional. `subscription_id` is a body
 * field typed UUID: a malformed one fails validation (400), unlike a malformed path id (404).
 */
export const ResendRequest = Schema.Struct({ subscription_id: Schema.optional(Uuid) })
export type ResendRequest = typeof ResendRequest.Type

/** The filters of GET /v1/webhook-attempts (paging aside). */
export const AttemptFilter = Schema.Struct({
  event_id: Schema.optional(Uuid),
  webhook_subscription_id: Schema.optional(Uuid),
  status: Schema.optional(
    Schema.String.pipe(
      Schema.filter((text): text is AttemptStatus => (ATTEMPT_STATUSES as ReadonlyArray<string>).includes(text), {
        message: () => "must be SUCCESS or FAILED"
      })
    )
  )
})
export type AttemptFilter = typeof AttemptFilter.Type

// ---------------------------------------------------------------------------------------------
// The endpoint portal (docs/webhooks.md#the-endpoint-portal).

/** The body of POST /v1/webhook-portal-sessions. */
export const CreateWebhookPortalSession = Schema.Struct({
  /** What the customer may subscribe to; absent: every type a subscription may hold. */
  allowed_event_types: Schema.optional(SubscribedEventTypes),
  scope_tag: Schema.optional(WebhookTag).annotations({
    description: "The customer: the tag of the subscriptions the portal shows and creates; absent: a new tag."
  })
})
export type CreateWebhookPortalSession = typeof CreateWebhookPortalSession.Type

/** A portal session as created: `url` carries its token, the only credential the portal page has. */
export const WebhookPortalSession = Schema.Struct({
  object: Schema.Literal("webhook_portal_session"),
  url: Schema.String,
  expires_at: Schema.String,
  scope_tag: Schema.String.annotations({ description: "The customer: the tag of the subscriptions the portal shows and creates." }),
  allowed_event_types: Schema.Array(Schema.Literal(...EVENT_TYPES)).annotations({
    description: "The event types the customer may subscribe to in the portal."
  })
}).annotations({ identifier: "WebhookPortalSession" })
export type WebhookPortalSession = typeof WebhookPortalSession.Type

/** A stored portal session: only its token's SHA-256. */
export interface StoredPortalSession {
  readonly id: string
  readonly program_id: string
  readonly token_hash: string
  /** The key that created it, or the OAuth grant of the access token that did. */
  readonly api_key_id: string
  readonly scope_tag: string
  readonly allowed_event_types: ReadonlyArray<EventType>
  readonly created_at: string
  readonly expires_at: string
}

/** The body of the portal's POST .../subscriptions: the API's, without a tag (the session's is set). */
export const CreatePortalSubscription = Schema.Struct({
  url: WebhookUrl,
  description: Schema.optional(WebhookDescription),
  event_types: SubscribedEventTypes,
  disabled: Schema.optional(Schema.Boolean)
})
export type CreatePortalSubscription = typeof CreatePortalSubscription.Type

/** The body of the portal's PATCH .../subscriptions/{id}: the tag stays the session's. */
export const UpdatePortalSubscription = Schema.Struct({
  url: Schema.optional(WebhookUrl),
  description: Schema.optional(WebhookDescription),
  event_types: Schema.optional(SubscribedEventTypes),
  disabled: Schema.optional(Schema.Boolean)
})
export type UpdatePortalSubscription = typeof UpdatePortalSubscription.Type

/** The portal's attempt filter: always one subscription's attempts. */
export const PortalAttemptFilter = Schema.Struct({
  webhook_subscription_id: Uuid,
  status: AttemptFilter.fields.status
})
export type PortalAttemptFilter = typeof PortalAttemptFilter.Type

/** The body of the portal's resend: always to one subscription of the session's tag. */
export const PortalResendRequest = Schema.Struct({ subscription_id: Uuid })
export type PortalResendRequest = typeof PortalResendRequest.Type

/** A queued delivery claimed by a worker, joined with what sending it needs. */
export interface ClaimedDelivery {
  readonly id: string
  readonly program_id: string
  readonly subscription_id: string
  readonly event_id: string
  /** Tries already made before this one. */
  readonly attempt_count: number
  readonly event_type: string
  readonly event_created_at: string
  /** The event's `data.object` as stored JSON text. */
  readonly event_data: string
  /** The event's tags (docs/webhooks.md#customers-and-tags). */
  readonly event_tags: ReadonlyArray<string>
  readonly url: string
  /** The subscription's tag: it is sent only events that carry it. */
  readonly subscription_tag: string | null
  readonly disabled: boolean
  readonly secret_sealed: string
  readonly previous_secret_sealed: string | null
  readonly previous_secret_expires_at: string | null
  readonly subscription_updated_at: string
}

/** Limits: a bound on everything. */
export const WEBHOOK_LIMITS = {
  /** Subscriptions per program. */
  maxSubscriptionsPerProgram: 100,
  /** Length of a subscription URL. */
  maxUrlLength: 2048,
  maxDescriptionLength: 500,
  /** Subscriptions of one tag the endpoint portal creates (the API may tag more). */
  maxSubscriptionsPerPortalTag: 20,
  /** Length of a subscription's tag. */
  maxTagLength: 64,
  /** How long a portal session's URL works (docs/webhooks.md#the-endpoint-portal). */
  portalSessionTtlMs: 60 * 60 * 1000,
  /** Widest span of history one replay re-sends: 31 days from the window's first event to its last. */
  maxReplaySpanMs: 31 * 24 * 60 * 60 * 1000,
  /** How long a rotated-out secret keeps signing. */
  previousSecretTtlMs: 24 * 60 * 60 * 1000,
  /** Longest Retry-After honoured on 429/503; longer values are capped. */
  maxRetryAfterMs: 60 * 60 * 1000,
  /** Shortest delay after a 429/503 with Retry-After. */
  minRetryAfterMs: 1000,
  /** Deliveries claimed per query. */
  claimBatchSize: 200,
  /** Results recorded per transaction. */
  recordBatchSize: 500,
  /** How long the recorder waits for more results before committing, while deliveries are in flight. */
  recordLingerMs: 5,
  /** Subscriptions re-sealed per transaction after a vault key rotation. */
  resealBatchSize: 200
} as const
