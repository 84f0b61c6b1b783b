import type { SqlError } from "@effect/sql"
import { Effect, Option } from "effect"
import * as crypto from "node:crypto"
import type { ProgramCaller } from "../access/Records.js"
import { hashSecret } from "../access/Secrets.js"
import { type EventType, newEvent, SUBSCRIBABLE_EVENT_TYPES, TEST_EVENT_TYPE } from "../events/Records.js"
import { AuthenticationFailed, Conflict, InvalidRequest } from "../platform/Errors.js"
import { newId } from "../platform/Ids.js"
import type { Page, PageRequest } from "../platform/Paging.js"
import { pageOf, toWindow } from "../platform/Paging.js"
import { nowMs } from "../platform/Time.js"
import { WEBHOOK_ATTEMPT_ORDER_FIELDS, type WebhookAttemptOrderField, type WebhookSubscriptionOrderField } from "./OrderFields.js"
import type {
  CreatePortalSubscription,
  CreateWebhookPortalSession,
  PortalAttemptFilter,
  PortalResendRequest,
  ReplayRequest,
  StoredPortalSession,
  UpdatePortalSubscription,
  WebhookAttempt,
  WebhookPortalSession
} from "./Records.js"
import { WEBHOOK_LIMITS } from "./Records.js"
import { replay } from "./Replay.js"
import { deliverNow, resend } from "./Resend.js"
import {
  createSubscription,
  listSubscriptions,
  loadSubscription,
  publicSubscription,
  removeSubscription,
  rotateSecret,
  SUBSCRIPTION_PATH,
  updateSubscription,
  type WebhookDeps
} from "./Subscriptions.js"

/** Bytes of randomness in a portal session token (256 bits), as in an embed session's. */
export const PORTAL_TOKEN_BYTES = 32

/** The path of the portal page and of its API, under the platform's base URL. */
export const PORTAL_PATH = "/v1/webhook-portal"

const invalidSession = () =>
  new AuthenticationFailed({ message: "The webhook portal session is unknown or expired. Ask for a new portal link." })

/** True when text could be a token we issued (base64url of 32 bytes), so junk is never looked up. */
const looksLikeToken = (text: string) => /^[A-Za-z0-9_-]{43}$/.test(text)

/**
 * POST /v1/webhook-portal-sessions: a short-lived URL of the endpoint portal for one customer (the
 * `scope_tag`; absent, a new tag), limited to `allowed_event_types` (absent: every type a
 * subscription may hold). Only the token's hash is stored.
 */
export const createPortalSession = (
  deps: WebhookDeps,
  caller: ProgramCaller,
  input: CreateWebhookPortalSession
): Effect.Effect<WebhookPortalSession, SqlError.SqlError> =>
  Effect.gen(function* () {
    const token = crypto.randomBytes(PORTAL_TOKEN_BYTES).toString("base64url")
    const now = yield* nowMs
    const session: StoredPortalSession = {
      id: newId(),
      program_id: caller.program.id,
      token_hash: hashSecret(token),
      api_key_id: caller.apiKeyId,
      // A generated tag is a new customer: its subscriptions are found again only with this tag.
      scope_tag: input.scope_tag ?? `portal_${crypto.randomBytes(12).toString("base64url")}`,
      allowed_event_types: input.allowed_event_types === undefined ? SUBSCRIBABLE_EVENT_TYPES : [...new Set(input.allowed_event_types)],
      created_at: new Date(now).toISOString(),
      expires_at: new Date(now + WEBHOOK_LIMITS.portalSessionTtlMs).toISOString()
    }
    yield* deps.store.insertPortalSession(session)
    return {
      object: "webhook_portal_session",
      url: `${deps.config.baseUrl}${PORTAL_PATH}?session_token=${token}`,
      expires_at: session.expires_at,
      scope_tag: session.scope_tag,
      allowed_event_types: session.allowed_event_types
    }
  })

/**
 * The session behind a portal token: missing, malformed, unknown or expired tokens, and tokens
 * whose creating key (or grant) was revoked, fail authentication (401). Checked on every request.
 */
export const openPortalSession = (
  deps: WebhookDeps,
  token: string | undefined
): Effect.Effect<StoredPortalSession, AuthenticationFailed | SqlError.SqlError> =>
  token === undefined || !looksLikeToken(token)
    ? Effect.fail(invalidSession())
    : Effect.gen(function* () {
        const session = yield* deps.store.findPortalSession(hashSecret(token))
        if (Option.isNone(session)) return yield* invalidSession()
        if (Date.parse(session.value.expires_at) <= (yield* nowMs)) return yield* invalidSession()
        return session.value
      })

/** Event types outside the session's allowed ones: a 400 naming the first such item. */
const checkAllowed = (session: StoredPortalSession, types: ReadonlyArray<EventType> | undefined) => {
  const index = types === undefined ? -1 : types.findIndex((type) => !session.allowed_event_types.includes(type))
  return index < 0
    ? Effect.void
    : Effect.fail(
        new InvalidRequest({
          message: `item ${index} is not an event type this portal may subscribe to; those are: ${session.allowed_event_types.join(", ")}.`,
          param: `event_types.${index}`
        })
      )
}

/**
 * POST /v1/webhook-subscriptions/{id}/test: a signed `webhook.test` event (its `data.object` the
 * subscription) sent now to that subscription only — stored as an event, never fanned out — and
 * the attempt it made. A disabled subscription is a 409. `tag`: a portal session's.
 */
export const sendTestEvent = (deps: WebhookDeps, programId: string, id: string, tag?: string) =>
  Effect.gen(function* () {
    const subscription = yield* loadSubscription(deps, programId, id, SUBSCRIPTION_PATH, false, tag)
    if (subscription.disabled) {
      return yield* new Conflict({
        message: "The webhook subscription is disabled; enable it before sending a test event.",
        param: "webhook_subscription_id"
      })
    }
    // It carries the subscription's tag (the store finds the same from its object): only that
    // tag's portal may send it again (docs/webhooks.md#customers-and-tags).
    const event = newEvent(
      programId,
      TEST_EVENT_TYPE,
      new Date(yield* nowMs).toISOString(),
      publicSubscription(subscription),
      subscription.tag === null ? [] : [subscription.tag]
    )
    // Appended alone, without enqueueEvents: no other subscription gets it, whatever it holds. It is
    // written after its try, with the attempt: the operation's one write, after its call-out
    // (docs/api.md#idempotency).
    return yield* deliverNow(deps, event, [subscription], (attempts) => attempts[0]!, deps.events.append(event))
  })

/**
 * What a portal session may do: the webhook use cases limited to the subscriptions of its tag (any
 * other is not found, 404), creating with its tag, and subscribing only to its allowed types.
 */
export const portalOperations = (deps: WebhookDeps, session: StoredPortalSession) => {
  const programId = session.program_id
  const tag = session.scope_tag
  return {
    session,
    list: (filter: { readonly disabled?: boolean | undefined }, page: PageRequest<WebhookSubscriptionOrderField>) =>
      listSubscriptions(deps, programId, { ...filter, tag }, page),
    create: (input: CreatePortalSubscription) =>
      Effect.zipRight(
        checkAllowed(session, input.event_types),
        createSubscription(deps, programId, { ...input, tag }, WEBHOOK_LIMITS.maxSubscriptionsPerPortalTag)
      ),
    update: (id: string, input: UpdatePortalSubscription) =>
      Effect.zipRight(checkAllowed(session, input.event_types), updateSubscription(deps, programId, id, input, tag)),
    remove: (id: string) => removeSubscription(deps, programId, id, tag),
    rotateSecret: (id: string) => rotateSecret(deps, programId, id, tag),
    replay: (id: string, input: ReplayRequest) => replay(deps, programId, id, input, tag),
    sendTest: (id: string) => sendTestEvent(deps, programId, id, tag),
    resend: (eventId: string, input: PortalResendRequest) => resend(deps, programId, eventId, input, tag),
    attempts: (filter: PortalAttemptFilter, page: PageRequest<WebhookAttemptOrderField>) =>
      Effect.gen(function* () {
        const subscription = yield* loadSubscription(
          deps,
          programId,
          filter.webhook_subscription_id,
          { resource: "webhook subscription", param: "webhook_subscription_id" },
          false,
          tag
        )
        const window = toWindow(page, WEBHOOK_ATTEMPT_ORDER_FIELDS)
        const { rows, total } = yield* deps.store.listAttempts(programId, { ...filter, webhook_subscription_id: subscription.id }, window)
        return pageOf(window, rows, total) satisfies Page<WebhookAttempt>
      })
  }
}

/** How long expired portal sessions are kept before the purge deletes them (as embed sessions). */
export const EXPIRED_PORTAL_SESSION_RETENTION_MS = 24 * 60 * 60 * 1000

/** Deletes portal sessions expired for longer than the retention; returns how many. */
export const purgeExpiredPortalSessions = (deps: WebhookDeps) =>
  Effect.flatMap(nowMs, (now) => deps.store.purgePortalSessions(new Date(now - EXPIRED_PORTAL_SESSION_RETENTION_MS).toISOString()))
