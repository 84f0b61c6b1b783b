import { Effect, Option } from "effect"
import type { ChangeFeedService } from "../changes/ChangeFeed.js"
import type { EventStoreService } from "../events/EventStore.js"
import { BusinessRuleViolation, InvalidRequest } from "../platform/Errors.js"
import { findOwned, type OwnedLookup } from "../platform/FindOwned.js"
import { newId } from "../platform/Ids.js"
import type { IssuingSettings } from "../platform/IssuingConfig.js"
import { applyMetadataChange, initialMetadata } from "../platform/Metadata.js"
import { type Page, type PageRequest, pageOf, toWindow } from "../platform/Paging.js"
import { WEBHOOK_SUBSCRIPTION_ORDER_FIELDS, type WebhookSubscriptionOrderField } from "./OrderFields.js"
import { nowMs } from "../platform/Time.js"
import type { TransactorService } from "../sql/Transactor.js"
import type { VaultService } from "../vault/Vault.js"
import {
  type CreateWebhookSubscription,
  type StoredSubscription,
  type SubscriptionFilter,
  type UpdateWebhookSubscription,
  WEBHOOK_LIMITS,
  type WebhookSubscription,
  type WebhookSubscriptionWithSecret
} from "./Records.js"
import { newWebhookSecret } from "./Signing.js"
import { checkWebhookUrl, urlPolicy } from "./UrlGuard.js"
import type { WebhookSenderService } from "./WebhookSender.js"
import type { WebhookStoreService } from "./WebhookStore.js"

/** What the webhook use cases work with. */
export interface WebhookDeps {
  readonly store: WebhookStoreService
  readonly events: EventStoreService
  readonly transactor: TransactorService
  readonly vault: VaultService
  readonly config: IssuingSettings
  readonly sender: WebhookSenderService
  /** Subscription changes are published on it (docs/operations.md#running-several-nodes). */
  readonly feed: ChangeFeedService
}

/** A subscription named by the path. */
export const SUBSCRIPTION_PATH: OwnedLookup = { resource: "webhook subscription", param: "webhook_subscription_id" }

/** The public view of a stored subscription. */
export const publicSubscription = (subscription: StoredSubscription): WebhookSubscription => ({
  id: subscription.id,
  object: "webhook_subscription",
  url: subscription.url,
  description: subscription.description,
  event_types: subscription.event_types,
  disabled: subscription.disabled,
  tag: subscription.tag,
  metadata: subscription.metadata,
  created_at: subscription.created_at,
  updated_at: subscription.updated_at
})

/**
 * A subscription of the program; `forUpdate` locks it for a read-modify-write inside a transaction.
 * With `tag` (an endpoint portal session's), a subscription of another tag is not found: the portal
 * reports it exactly like an unknown one.
 */
export const loadSubscription = (
  deps: WebhookDeps,
  programId: string,
  id: string,
  lookup: OwnedLookup = SUBSCRIPTION_PATH,
  forUpdate = false,
  tag?: string
) =>
  findOwned(id, lookup, (lowered) =>
    deps.store
      .findSubscription(programId, lowered, forUpdate)
      .pipe(Effect.map(Option.filter((subscription) => tag === undefined || subscription.tag === tag)))
  )

/**
 * The SSRF guard on a decoded URL: with private targets refused, every address its host resolves
 * to must be public (docs/webhooks.md, SSRF guard). A 400 naming `url` otherwise.
 */
const guardUrl = (deps: WebhookDeps, url: string): Effect.Effect<string, InvalidRequest> => guardWebhookUrl(deps.config, url)

/** The SSRF guard of the settings in force on a decoded URL (also authorization endpoints'): the URL, or a 400 naming `url`. */
export const guardWebhookUrl = (config: IssuingSettings, url: string): Effect.Effect<string, InvalidRequest> =>
  Effect.flatMap(
    Effect.promise(() => checkWebhookUrl(new URL(url), urlPolicy(config))),
    (refusal) =>
      refusal === undefined
        ? Effect.succeed(url)
        : Effect.fail(new InvalidRequest({ message: `${refusal[0]!.toUpperCase()}${refusal.slice(1)}.`, param: "url" }))
  )

/**
 * Creates a subscription; the response is the only place its secret is shown (with rotate-secret).
 * `tagLimit` (the endpoint portal's) bounds the subscriptions of the input's tag, so one customer
 * cannot take all of the program's places.
 */
export const createSubscription = (deps: WebhookDeps, programId: string, input: CreateWebhookSubscription, tagLimit?: number) =>
  Effect.gen(function* () {
    const url = yield* guardUrl(deps, input.url)
    return yield* deps.transactor.withTransaction(
      Effect.gen(function* () {
        const count = yield* deps.store.countSubscriptions(programId)
        if (count >= WEBHOOK_LIMITS.maxSubscriptionsPerProgram) {
          return yield* new BusinessRuleViolation({
            code: "subscription_limit_reached",
            message: `A program may have at most ${WEBHOOK_LIMITS.maxSubscriptionsPerProgram} webhook subscriptions.`,
            param: null
          })
        }
        if (tagLimit !== undefined && input.tag != null && (yield* deps.store.countSubscriptions(programId, input.tag)) >= tagLimit) {
          return yield* new BusinessRuleViolation({
            code: "subscription_limit_reached",
            message: `A portal customer may have at most ${tagLimit} webhook subscriptions.`,
            param: null
          })
        }
        const now = new Date(yield* nowMs).toISOString()
        const secret = newWebhookSecret()
        const subscription: StoredSubscription = {
          id: newId(),
          object: "webhook_subscription",
          program_id: programId,
          url,
          description: input.description ?? "",
          event_types: [...new Set(input.event_types)],
          disabled: input.disabled ?? false,
          tag: input.tag ?? null,
          secret_sealed: deps.vault.encrypt(secret),
          previous_secret_sealed: null,
          previous_secret_expires_at: null,
          metadata: initialMetadata(input.metadata),
          created_at: now,
          updated_at: now
        }
        yield* deps.store.insertSubscription(subscription)
        yield* deps.feed.publish("webhook_subscription", subscription.id)
        return { ...publicSubscription(subscription), secret } satisfies WebhookSubscriptionWithSecret
      })
    )
  })

/** The program's subscriptions, newest first by default, optionally only (dis)abled ones or one tag's. */
export const listSubscriptions = (
  deps: WebhookDeps,
  programId: string,
  filter: SubscriptionFilter,
  page: PageRequest<WebhookSubscriptionOrderField>
) =>
  Effect.suspend(() => {
    const window = toWindow(page, WEBHOOK_SUBSCRIPTION_ORDER_FIELDS)
    return deps.store
      .listSubscriptions(programId, filter, window)
      .pipe(Effect.map(({ rows, total }): Page<WebhookSubscription> => pageOf(window, rows.map(publicSubscription), total)))
  })

/**
 * Changes url, description, event_types, disabled, tag or metadata (more than 50 keys after the
 * change: 400 `metadata`, nothing written); disabling drops queued deliveries. Subscriptions have no
 * events. `tag`: as loadSubscription's (the endpoint portal's scope).
 */
export const updateSubscription = (deps: WebhookDeps, programId: string, id: string, input: UpdateWebhookSubscription, tag?: string) =>
  Effect.gen(function* () {
    const url = input.url === undefined ? undefined : yield* guardUrl(deps, input.url)
    return yield* deps.transactor.withTransaction(
      Effect.gen(function* () {
        const current = yield* loadSubscription(deps, programId, id, SUBSCRIPTION_PATH, true, tag)
        const metadata = input.metadata === undefined ? current.metadata : yield* applyMetadataChange(current.metadata, input.metadata)
        const updated: StoredSubscription = {
          ...current,
          tag: input.tag === undefined ? current.tag : input.tag,
          url: url ?? current.url,
          description: input.description ?? current.description,
          event_types: input.event_types === undefined ? current.event_types : [...new Set(input.event_types)],
          disabled: input.disabled ?? current.disabled,
          metadata,
          updated_at: new Date(yield* nowMs).toISOString()
        }
        yield* deps.store.updateSubscription(updated)
        if (updated.disabled && !current.disabled) yield* deps.store.dropQueued([updated.id])
        yield* deps.feed.publish("webhook_subscription", updated.id)
        return publicSubscription(updated)
      })
    )
  })

/** Deletes a subscription and its queued deliveries; its attempts stay listed. */
export const removeSubscription = (deps: WebhookDeps, programId: string, id: string, tag?: string) =>
  deps.transactor.withTransaction(
    Effect.gen(function* () {
      const current = yield* loadSubscription(deps, programId, id, SUBSCRIPTION_PATH, true, tag)
      yield* deps.store.deleteSubscription(programId, current.id)
      yield* deps.feed.publish("webhook_subscription", current.id)
      return publicSubscription(current)
    })
  )

/** A new signing secret; the old one keeps signing beside it for 24 hours. */
export const rotateSecret = (deps: WebhookDeps, programId: string, id: string, tag?: string) =>
  deps.transactor.withTransaction(
    Effect.gen(function* () {
      const current = yield* loadSubscription(deps, programId, id, SUBSCRIPTION_PATH, true, tag)
      const now = yield* nowMs
      const secret = newWebhookSecret()
      const updated: StoredSubscription = {
        ...current,
        secret_sealed: deps.vault.encrypt(secret),
        previous_secret_sealed: current.secret_sealed,
        previous_secret_expires_at: new Date(now + WEBHOOK_LIMITS.previousSecretTtlMs).toISOString(),
        updated_at: new Date(now).toISOString()
      }
      yield* deps.store.updateSubscription(updated)
      yield* deps.feed.publish("webhook_subscription", updated.id)
      return { ...publicSubscription(updated), secret } satisfies WebhookSubscriptionWithSecret
    })
  )
