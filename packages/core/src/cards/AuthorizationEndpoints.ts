import type { SqlError } from "@effect/sql"
import { Effect, Option } from "effect"
import { ChangeFeed, type ChangeFeedService } from "../changes/ChangeFeed.js"
import { Conflict, type InvalidRequest, type NotFound } from "../platform/Errors.js"
import { findOwned, type OwnedLookup } from "../platform/FindOwned.js"
import { newId } from "../platform/Ids.js"
import { IssuingConfig, type IssuingSettings } from "../platform/IssuingConfig.js"
import { type Page, type PageRequest, pageOf, toWindow } from "../platform/Paging.js"
import { nowMs } from "../platform/Time.js"
import { isUniqueViolation, Transactor, type TransactorService } from "../sql/Transactor.js"
import { Vault, type VaultService } from "../vault/Vault.js"
import { newWebhookSecret } from "../webhooks/Signing.js"
import { guardWebhookUrl } from "../webhooks/Subscriptions.js"
import type { SealedSecrets } from "../webhooks/WebhookStore.js"
import {
  AUTHORIZATION_DECISION_LIMITS,
  type AuthorizationEndpoint,
  type AuthorizationEndpointWithSecret,
  type CreateAuthorizationEndpoint,
  type StoredAuthorizationEndpoint,
  type UpdateAuthorizationEndpoint
} from "./AuthorizationEndpointRecords.js"
import { AuthorizationEndpointStore, type AuthorizationEndpointStoreService } from "./AuthorizationEndpointStore.js"
import { AUTHORIZATION_ENDPOINT_ORDER_FIELDS, type AuthorizationEndpointOrderField } from "./OrderFields.js"

/** What the endpoint use cases work with. */
interface EndpointDeps {
  readonly store: AuthorizationEndpointStoreService
  readonly transactor: TransactorService
  readonly vault: VaultService
  readonly config: IssuingSettings
  /** Every change is published on it: decisions on every node read the endpoint through a cache it retires. */
  readonly feed: ChangeFeedService
}

const ENDPOINT_PATH: OwnedLookup = { resource: "authorization endpoint", param: "authorization_endpoint_id" }

/** The public view of a stored endpoint. */
export const publicAuthorizationEndpoint = (endpoint: StoredAuthorizationEndpoint): AuthorizationEndpoint => ({
  id: endpoint.id,
  object: "authorization_endpoint",
  program_id: endpoint.program_id,
  url: endpoint.url,
  timeout_ms: endpoint.timeout_ms,
  timeout_decision: endpoint.timeout_decision,
  disabled: endpoint.disabled,
  created_at: endpoint.created_at,
  updated_at: endpoint.updated_at
})

const alreadyHasOne = () =>
  new Conflict({ message: "The program already has an authorization endpoint; update or delete it.", param: null })

const load = (deps: EndpointDeps, programId: string, id: string, forUpdate = false) =>
  findOwned(id, ENDPOINT_PATH, (lowered) => deps.store.find(programId, lowered, forUpdate))

/** Creates the program's endpoint (409 when it has one); the response is the only place its secret is shown (with rotate-secret). */
const create = (deps: EndpointDeps, programId: string, input: CreateAuthorizationEndpoint) =>
  Effect.gen(function* () {
    const url = yield* guardWebhookUrl(deps.config, input.url)
    return yield* deps.transactor
      .withTransaction(
        Effect.gen(function* () {
          if (Option.isSome(yield* deps.store.findForProgram(programId))) return yield* alreadyHasOne()
          const now = new Date(yield* nowMs).toISOString()
          const secret = newWebhookSecret()
          const endpoint: StoredAuthorizationEndpoint = {
            id: newId(),
            object: "authorization_endpoint",
            program_id: programId,
            url,
            timeout_ms: input.timeout_ms ?? AUTHORIZATION_DECISION_LIMITS.defaultTimeoutMs,
            timeout_decision: input.timeout_decision ?? "DECLINE",
            disabled: false,
            secret_sealed: deps.vault.encrypt(secret),
            previous_secret_sealed: null,
            previous_secret_expires_at: null,
            created_at: now,
            updated_at: now
          }
          yield* deps.store.insert(endpoint)
          yield* deps.feed.publish("authorization_endpoint", endpoint.id)
          return { ...publicAuthorizationEndpoint(endpoint), secret } satisfies AuthorizationEndpointWithSecret
        })
      )
      .pipe(
        // Two creations at once: the unique program_id lets one in; the other is the same 409.
        Effect.catchIf(isUniqueViolation, () => Effect.fail(alreadyHasOne()))
      )
  })

/** Changes url, timeout_ms, timeout_decision or disabled. */
const update = (deps: EndpointDeps, programId: string, id: string, input: UpdateAuthorizationEndpoint) =>
  Effect.gen(function* () {
    const url = input.url === undefined ? undefined : yield* guardWebhookUrl(deps.config, input.url)
    return yield* deps.transactor.withTransaction(
      Effect.gen(function* () {
        const current = yield* load(deps, programId, id, true)
        const updated: StoredAuthorizationEndpoint = {
          ...current,
          url: url ?? current.url,
          timeout_ms: input.timeout_ms ?? current.timeout_ms,
          timeout_decision: input.timeout_decision ?? current.timeout_decision,
          disabled: input.disabled ?? current.disabled,
          updated_at: new Date(yield* nowMs).toISOString()
        }
        yield* deps.store.update(updated)
        yield* deps.feed.publish("authorization_endpoint", updated.id)
        return publicAuthorizationEndpoint(updated)
      })
    )
  })

/** Deletes the endpoint: decisions stop being asked at once, on every node. */
const remove = (deps: EndpointDeps, programId: string, id: string) =>
  deps.transactor.withTransaction(
    Effect.gen(function* () {
      const current = yield* load(deps, programId, id, true)
      yield* deps.store.remove(programId, current.id)
      yield* deps.feed.publish("authorization_endpoint", current.id)
      return publicAuthorizationEndpoint(current)
    })
  )

/** A new signing secret; the old one keeps signing beside it for 24 hours. */
const rotateSecret = (deps: EndpointDeps, programId: string, id: string) =>
  deps.transactor.withTransaction(
    Effect.gen(function* () {
      const current = yield* load(deps, programId, id, true)
      const now = yield* nowMs
      const secret = newWebhookSecret()
      const updated: StoredAuthorizationEndpoint = {
        ...current,
        secret_sealed: deps.vault.encrypt(secret),
        previous_secret_sealed: current.secret_sealed,
        previous_secret_expires_at: new Date(now + AUTHORIZATION_DECISION_LIMITS.previousSecretTtlMs).toISOString(),
        updated_at: new Date(now).toISOString()
      }
      yield* deps.store.update(updated)
      yield* deps.feed.publish("authorization_endpoint", updated.id)
      return { ...publicAuthorizationEndpoint(updated), secret } satisfies AuthorizationEndpointWithSecret
    })
  )

/** Batches in a row that re-seal nothing before the re-seal gives up (only concurrent rotations cause them). */
const MAX_IDLE_RESEAL_BATCHES = 5
const RESEAL_BATCH_SIZE = 200

/** A sealed value under the current key: kept when it already is, else decrypted and sealed again. */
const resealed = (vault: VaultService, endpoint: StoredAuthorizationEndpoint, sealed: string): string => {
  if (sealed.startsWith(`v1.${vault.currentKeyId}.`)) return sealed
  try {
    return vault.encrypt(vault.decrypt(sealed))
  } catch (error) {
    throw new Error(`authorization endpoint ${endpoint.id}: ${error instanceof Error ? error.message : String(error)}`)
  }
}

/** The secrets an endpoint keeps after a re-seal: a previous secret past its day no longer signs and is dropped. */
const nextSecrets = (vault: VaultService, endpoint: StoredAuthorizationEndpoint, now: number): SealedSecrets => {
  const previousLive =
    endpoint.previous_secret_sealed !== null &&
    endpoint.previous_secret_expires_at !== null &&
    Date.parse(endpoint.previous_secret_expires_at) > now
  return {
    secret_sealed: resealed(vault, endpoint, endpoint.secret_sealed),
    previous_secret_sealed: previousLive ? resealed(vault, endpoint, endpoint.previous_secret_sealed!) : null,
    previous_secret_expires_at: previousLive ? endpoint.previous_secret_expires_at : null
  }
}

/**
 * Re-seals under the current vault key every endpoint secret sealed under another one (after
 * rotating ISSUING_VAULT_KEY to `new,old`, `issuing vault reseal`), as webhook subscription
 * secrets are: batches of 200, one transaction each, compare-and-set per endpoint. The secrets
 * themselves do not change, so nothing is published. Returns how many endpoints were re-sealed.
 */
const resealWithCurrentKey = (deps: EndpointDeps) =>
  Effect.gen(function* () {
    let total = 0
    let idleBatches = 0
    for (;;) {
      const batch = yield* deps.store.sealedWithOtherKeys(deps.vault.currentKeyId, RESEAL_BATCH_SIZE)
      if (batch.length === 0) return total
      const done = yield* deps.transactor.withTransaction(
        Effect.flatMap(nowMs, (now) =>
          Effect.forEach(batch, (endpoint) =>
            Effect.suspend(() => deps.store.reseal(endpoint.id, endpoint, nextSecrets(deps.vault, endpoint, now)))
          )
        )
      )
      const count = done.filter(Boolean).length
      total += count
      idleBatches = count === 0 ? idleBatches + 1 : 0
      if (idleBatches >= MAX_IDLE_RESEAL_BATCHES) {
        return yield* Effect.dieMessage("authorization endpoints keep changing during the re-seal; run it again")
      }
    }
  })

/**
 * Authorization endpoints (docs/card-transactions.md#real-time-decisions): one per program, where
 * real-time decisions are asked. Inputs arrive decoded (AuthorizationEndpointRecords.ts); the URL
 * passes the webhook SSRF guard here and again when a decision connects.
 */
export class AuthorizationEndpoints extends Effect.Service<AuthorizationEndpoints>()("@issuing/core/AuthorizationEndpoints", {
  effect: Effect.gen(function* () {
    const deps: EndpointDeps = {
      store: yield* AuthorizationEndpointStore,
      transactor: yield* Transactor,
      vault: yield* Vault,
      config: yield* IssuingConfig,
      feed: yield* ChangeFeed
    }
    return {
      /** Creates the program's endpoint (409 when it has one); its secret is shown in this answer only (and on rotation). */
      create: (programId: string, input: CreateAuthorizationEndpoint) => create(deps, programId, input),
      /** The program's endpoints (at most one), newest first by default. */
      list: (programId: string, page: PageRequest<AuthorizationEndpointOrderField>) =>
        Effect.suspend(() => {
          const window = toWindow(page, AUTHORIZATION_ENDPOINT_ORDER_FIELDS)
          return deps.store
            .list(programId, window)
            .pipe(
              Effect.map(({ rows, total }): Page<AuthorizationEndpoint> => pageOf(window, rows.map(publicAuthorizationEndpoint), total))
            )
        }),
      /** One endpoint of the program (404 naming authorization_endpoint_id). */
      get: (programId: string, id: string) => Effect.map(load(deps, programId, id), publicAuthorizationEndpoint),
      /** Changes url, timeout_ms, timeout_decision or disabled. */
      update: (programId: string, id: string, input: UpdateAuthorizationEndpoint) => update(deps, programId, id, input),
      /** Deletes the endpoint. */
      remove: (programId: string, id: string) => remove(deps, programId, id),
      /** A new signing secret; the old one keeps signing beside it for 24 hours. */
      rotateSecret: (programId: string, id: string) => rotateSecret(deps, programId, id),
      /** Re-seals endpoint secrets under the current vault key; returns how many. */
      resealWithCurrentKey: resealWithCurrentKey(deps)
    }
  })
}) {}

/** Failures the AuthorizationEndpoints service reports. */
export type AuthorizationEndpointsError = InvalidRequest | NotFound | Conflict | SqlError.SqlError
