import type { SqlError } from "@effect/sql"
import { Effect } from "effect"
import { ChangeFeed } from "../changes/ChangeFeed.js"
import { EventStore } from "../events/EventStore.js"
import type { BusinessRuleViolation, Conflict, InvalidRequest, NotFound } from "../platform/Errors.js"
import { IssuingConfig } from "../platform/IssuingConfig.js"
import { type Page, type PageRequest, pageOf, toWindow } from "../platform/Paging.js"
import { WEBHOOK_ATTEMPT_ORDER_FIELDS, type WebhookAttemptOrderField, type WebhookSubscriptionOrderField } from "./OrderFields.js"
import { Transactor } from "../sql/Transactor.js"
import { Vault } from "../vault/Vault.js"
import type { ProgramCaller } from "../access/Records.js"
import type {
  AttemptFilter,
  CreateWebhookPortalSession,
  CreateWebhookSubscription,
  ReplayRequest,
  ResendRequest,
  SubscriptionFilter,
  UpdateWebhookSubscription,
  WebhookAttempt
} from "./Records.js"
import { createPortalSession, openPortalSession, portalOperations, purgeExpiredPortalSessions, sendTestEvent } from "./Portal.js"
import { replay } from "./Replay.js"
import { resend } from "./Resend.js"
import { resealWithCurrentKey } from "./Reseal.js"
import {
  createSubscription,
  listSubscriptions,
  loadSubscription,
  publicSubscription,
  removeSubscription,
  rotateSecret,
  updateSubscription,
  type WebhookDeps
} from "./Subscriptions.js"
import { WebhookSender } from "./WebhookSender.js"
import { WebhookStore } from "./WebhookStore.js"

export { publicSubscription } from "./Subscriptions.js"

/**
 * Webhook subscriptions, replay, resend and attempts (docs/webhooks.md). Inputs arrive decoded
 * (webhooks/Records.ts); each use case lives in its own module.
 */
export class Webhooks extends Effect.Service<Webhooks>()("@issuing/core/Webhooks", {
  effect: Effect.gen(function* () {
    const deps: WebhookDeps = {
      store: yield* WebhookStore,
      events: yield* EventStore,
      transactor: yield* Transactor,
      vault: yield* Vault,
      config: yield* IssuingConfig,
      sender: yield* WebhookSender,
      feed: yield* ChangeFeed
    }
    return {
      /** Creates a subscription; the response is the only place its secret is shown (with rotate-secret). */
      create: (programId: string, input: CreateWebhookSubscription) => createSubscription(deps, programId, input),
      /** The program's subscriptions, newest first by default, optionally only (dis)abled ones. */
      list: (programId: string, filter: SubscriptionFilter, page: PageRequest<WebhookSubscriptionOrderField>) =>
        listSubscriptions(deps, programId, filter, page),
      /** One subscription of the program (404 naming webhook_subscription_id). */
      get: (programId: string, id: string) => Effect.map(loadSubscription(deps, programId, id), publicSubscription),
      /** Changes url, description, event_types, disabled or tag; disabling drops queued deliveries. */
      update: (programId: string, id: string, input: UpdateWebhookSubscription) => updateSubscription(deps, programId, id, input),
      /** Deletes a subscription and its queued deliveries; its attempts stay listed. */
      remove: (programId: string, id: string) => removeSubscription(deps, programId, id),
      /** A new signing secret; the old one keeps signing beside it for 24 hours. */
      rotateSecret: (programId: string, id: string) => rotateSecret(deps, programId, id),
      /** Queues the window's events of the subscription's types; returns how many. */
      replay: (programId: string, id: string, input: ReplayRequest) => replay(deps, programId, id, input),
      /** Sends an event now to one or every matching subscription; returns the attempts. */
      resend: (programId: string, eventId: string, input: ResendRequest) => resend(deps, programId, eventId, input),
      /** Sends a signed webhook.test event to that subscription only; returns its attempt. */
      sendTest: (programId: string, id: string) => sendTestEvent(deps, programId, id),
      /** A short-lived URL of the endpoint portal for one customer's tag (docs/webhooks.md#the-endpoint-portal). */
      createPortalSession: (caller: ProgramCaller, input: CreateWebhookPortalSession) => createPortalSession(deps, caller, input),
      /** What the holder of a portal token may do (401 for an unknown, expired or revoked one). */
      openPortal: (token: string | undefined) => Effect.map(openPortalSession(deps, token), (session) => portalOperations(deps, session)),
      /** Deletes portal sessions expired for more than a day; returns how many. */
      purgeExpiredPortalSessions: purgeExpiredPortalSessions(deps),
      /** Re-seals subscription secrets under the current vault key; returns how many. */
      resealWithCurrentKey: resealWithCurrentKey(deps),
      /** Attempts of the program, newest first, filtered by event, subscription or status. */
      listAttempts: (programId: string, filter: AttemptFilter, page: PageRequest<WebhookAttemptOrderField>) =>
        Effect.suspend(() => {
          const window = toWindow(page, WEBHOOK_ATTEMPT_ORDER_FIELDS)
          return deps.store
            .listAttempts(programId, filter, window)
            .pipe(Effect.map(({ rows, total }): Page<WebhookAttempt> => pageOf(window, rows, total)))
        })
    }
  })
}) {}

/** Failures the Webhooks service reports, for callers that want to name them. */
export type WebhooksError = InvalidRequest | NotFound | Conflict | BusinessRuleViolation | SqlError.SqlError
