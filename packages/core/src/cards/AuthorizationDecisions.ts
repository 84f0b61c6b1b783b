import { SqlClient, type SqlError } from "@effect/sql"
import { Context, Effect, Layer, Option } from "effect"
import { ChangeFeed, type ChangeFeedService } from "../changes/ChangeFeed.js"
import { makeVersionedCache } from "../changes/VersionedCache.js"
import { newId } from "../platform/Ids.js"
import { IssuingConfig } from "../platform/IssuingConfig.js"
import { nowMs } from "../platform/Time.js"
import { Vault, type VaultService } from "../vault/Vault.js"
import { secretKey } from "../webhooks/Signing.js"
import {
  AUTHORIZATION_DECISION_LIMITS,
  isDecisionTimeoutMs,
  type StoredAuthorizationEndpoint,
  type TimeoutDecision
} from "./AuthorizationEndpointRecords.js"
import { AuthorizationEndpointStore, type AuthorizationEndpointStoreService } from "./AuthorizationEndpointStore.js"
import { makeDecisionClient } from "./DecisionClient.js"
import { type AskResult, type AuthorizationAnswer, type Decision, decide, readAnswer } from "./DecisionRules.js"
import type { Card } from "./Records.js"

export type { AuthorizationAnswer, Decision, DecisionRecord } from "./DecisionRules.js"

/** What a real-time decision is asked about (the body's `data`, docs/card-transactions.md#real-time-decisions). */
export interface AuthorizationRequest {
  /** The transaction as it would be if approved; sent as `data.object`. */
  readonly transaction: unknown
  /** The card record (never its number: a Card has none). */
  readonly card: Card
  /** The amount asked for, in minor units. */
  readonly amount: number
  readonly kind: "AUTHORIZATION" | "FINANCIAL_AUTHORIZATION" | "INCREMENTAL_AUTHORIZATION"
  readonly partial_approval_capable: boolean
}

/** A host's in-process decider: the same request and answer as the endpoint's. */
export type AuthorizationDecider = (request: AuthorizationRequest) => Promise<AuthorizationAnswer>

/** An embedded decider and the bounds it runs under (`createIssuing({ authorizationDecider, … })`). */
export interface EmbeddedDeciderOptions {
  readonly decider: AuthorizationDecider
  /** How long an answer is waited for: an integer from 100 to 5000 (default 2000). */
  readonly timeoutMs?: number | undefined
  /** What applies on no answer in time, a throw or an ill-typed answer (default DECLINE). */
  readonly timeoutDecision?: TimeoutDecision | undefined
}

/** The host's decider, when it gave one: then it is asked instead of any stored endpoint. */
export class EmbeddedAuthorizationDecider extends Context.Tag("@issuing/core/EmbeddedAuthorizationDecider")<
  EmbeddedAuthorizationDecider,
  { readonly decider: AuthorizationDecider; readonly timeoutMs: number; readonly timeoutDecision: TimeoutDecision }
>() {
  /** The layer of a host's decider; throws on bounds outside the documented ranges. */
  static readonly layer = (options: EmbeddedDeciderOptions): Layer.Layer<EmbeddedAuthorizationDecider> => {
    const timeoutMs = options.timeoutMs ?? AUTHORIZATION_DECISION_LIMITS.defaultTimeoutMs
    const timeoutDecision = options.timeoutDecision ?? "DECLINE"
    if (typeof options.decider !== "function") throw new TypeError("authorizationDecider must be a function")
    if (!isDecisionTimeoutMs(timeoutMs)) throw new RangeError("authorizationDeciderTimeoutMs must be an integer from 100 to 5000")
    if (timeoutDecision !== "DECLINE" && timeoutDecision !== "APPROVE") {
      throw new RangeError("authorizationDeciderTimeoutDecision must be DECLINE or APPROVE")
    }
    return Layer.succeed(EmbeddedAuthorizationDecider, { decider: options.decider, timeoutMs, timeoutDecision })
  }
}

/** A program's endpoint as a decision needs it: secrets opened once, when read. */
interface ReadyEndpoint {
  readonly url: string
  readonly timeoutMs: number
  readonly timeoutDecision: TimeoutDecision
  readonly key: Buffer
  readonly previous: { readonly key: Buffer; readonly expiresAtMs: number } | null
}

/** The body POSTed to the endpoint. */
const requestBody = (request: AuthorizationRequest): string =>
  JSON.stringify({
    type: "authorization.request",
    data: {
      object: request.transaction,
      card: request.card,
      amount: request.amount,
      kind: request.kind,
      partial_approval_capable: request.partial_approval_capable
    }
  })

/** Asks an embedded decider within its timeout; a throw or an ill-typed answer is an error. */
const askEmbedded = (decider: AuthorizationDecider, request: AuthorizationRequest, timeoutMs: number): Promise<AskResult> =>
  new Promise((resolve) => {
    const timer = setTimeout(() => resolve({ _tag: "TimedOut" }), timeoutMs)
    const settle = (result: AskResult) => {
      clearTimeout(timer)
      resolve(result)
    }
    try {
      Promise.resolve(decider(request)).then(
        (value) => {
          const answer = readAnswer(value)
          settle(typeof answer === "string" ? { _tag: "Failed", reason: answer } : { _tag: "Answered", answer })
        },
        () => settle({ _tag: "Failed", reason: "the decider threw" })
      )
    } catch {
      settle({ _tag: "Failed", reason: "the decider threw" })
    }
  })

/** A program's endpoint with its secrets opened (the previous one while it is still accepted). */
const openEndpoint = (vault: VaultService, endpoint: StoredAuthorizationEndpoint): ReadyEndpoint => ({
  url: endpoint.url,
  timeoutMs: endpoint.timeout_ms,
  timeoutDecision: endpoint.timeout_decision,
  key: secretKey(vault.decrypt(endpoint.secret_sealed)),
  previous:
    endpoint.previous_secret_sealed === null || endpoint.previous_secret_expires_at === null
      ? null
      : {
          key: secretKey(vault.decrypt(endpoint.previous_secret_sealed)),
          expiresAtMs: Date.parse(endpoint.previous_secret_expires_at)
        }
})

/** The program's enabled endpoint, or null, through a cache of both (no endpoint is the common case) per change-feed version. */
const makeEndpointLookup = (store: AuthorizationEndpointStoreService, feed: ChangeFeedService, vault: VaultService) => {
  const cache = makeVersionedCache<ReadyEndpoint | null>({
    maxEntries: AUTHORIZATION_DECISION_LIMITS.cacheMaxEntries,
    maxAgeMs: AUTHORIZATION_DECISION_LIMITS.cacheMaxAgeMs
  })
  return (programId: string): Effect.Effect<ReadyEndpoint | null, SqlError.SqlError> =>
    Effect.gen(function* () {
      // Seen before the read: a change committed meanwhile retires what is read.
      const version = yield* feed.version
      const now = yield* nowMs
      const cached = cache.get(programId, version, now)
      if (cached !== undefined) return cached
      const found = yield* store.findForProgram(programId)
      const ready = Option.isSome(found) && !found.value.disabled ? openEndpoint(vault, found.value) : null
      cache.set(programId, ready, version, now)
      return ready
    })
}

type DecisionClient = ReturnType<typeof makeDecisionClient>

/** POSTs the request to the endpoint, signed with its key (and the previous one while accepted). */
const askEndpoint = (client: DecisionClient, endpoint: ReadyEndpoint, request: AuthorizationRequest) =>
  Effect.gen(function* () {
    const now = yield* nowMs
    const keys = endpoint.previous !== null && endpoint.previous.expiresAtMs > now ? [endpoint.key, endpoint.previous.key] : [endpoint.key]
    const body = requestBody(request)
    return yield* Effect.promise((signal) =>
      client.post({ url: endpoint.url, messageId: newId(), body, keys, timeoutMs: endpoint.timeoutMs }, signal)
    )
  })

/** What asking ended in means (DecisionRules.decide, pure), dated now. */
const decided = (request: AuthorizationRequest, result: AskResult, timeoutDecision: TimeoutDecision) =>
  Effect.map(nowMs, (now) => Option.some(decide(request, result, timeoutDecision, new Date(now).toISOString())))

/** Where the decision is asked: the host's decider when it gave one, else the program's endpoint when it has one. */
interface DecisionSources {
  readonly embedded: Option.Option<Context.Tag.Service<typeof EmbeddedAuthorizationDecider>>
  readonly endpointOf: (programId: string) => Effect.Effect<ReadyEndpoint | null, SqlError.SqlError>
  readonly client: DecisionClient
}

const ask = (
  sources: DecisionSources,
  programId: string,
  request: AuthorizationRequest
): Effect.Effect<Option.Option<Decision>, SqlError.SqlError> =>
  Option.match(sources.embedded, {
    onSome: ({ decider, timeoutMs, timeoutDecision }) =>
      Effect.flatMap(
        Effect.promise(() => askEmbedded(decider, request, timeoutMs)),
        (result) => decided(request, result, timeoutDecision)
      ),
    onNone: () =>
      Effect.flatMap(sources.endpointOf(programId), (endpoint) =>
        endpoint === null
          ? Effect.succeed(Option.none())
          : Effect.flatMap(askEndpoint(sources.client, endpoint, request), (result) => decided(request, result, endpoint.timeoutDecision))
      )
  })

/** Asks outside any transaction: waiting on a receiver for seconds with one open would hold its locks and connection. */
const askOutsideTransaction = (sources: DecisionSources, programId: string, request: AuthorizationRequest) =>
  Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (transaction) =>
    Option.isSome(transaction)
      ? Effect.dieMessage("AuthorizationDecisions.decide runs outside any database transaction: it waits for the receiver")
      : ask(sources, programId, request)
  )

/**
 * Real-time authorization decisions (docs/card-transactions.md#real-time-decisions): asks the
 * program's authorization endpoint — or the host's embedded decider — whether to approve an
 * authorization the platform's own checks approved, and says what the answer means.
 */
export class AuthorizationDecisions extends Effect.Service<AuthorizationDecisions>()("@issuing/core/AuthorizationDecisions", {
  scoped: Effect.gen(function* () {
    const endpointOf = makeEndpointLookup(yield* AuthorizationEndpointStore, yield* ChangeFeed, yield* Vault)
    const config = yield* IssuingConfig
    const embedded = yield* Effect.serviceOption(EmbeddedAuthorizationDecider)
    const client = yield* Effect.acquireRelease(
      Effect.sync(() => makeDecisionClient({ allowPrivate: config.webhookAllowPrivateUrls })),
      (client) => Effect.sync(client.close)
    )
    const sources: DecisionSources = { embedded, endpointOf, client }
    return {
      /**
       * Asks whether to approve `request` for the program, and what the answer means. Call it after
       * the platform's own checks approved (a built-in decline never asks), outside any database
       * transaction: it holds none and takes no lock (it only reads the program's endpoint, through a
       * per-node cache the change feed retires, so usually no database round trip at all), and it
       * waits up to the endpoint's `timeout_ms` (at most 5 s). Called inside a transaction it dies
       * before asking — so an HTTP route that decides must be annotated `CallsOut`, which runs an
       * Idempotency-Key request outside any transaction until it posts at its commit point
       * (IdempotentCommit). Funds and the card's state must be checked again in the posting.
       *
       * - `Option.none()`: the program has no enabled endpoint and the host gave no decider — nothing
       *   was asked; approve as the platform's checks said, and record nothing in `request_history`.
       * - `Option.some(decision)`: approve `decision.amount` (less than asked only for a partial
       *   approval of a `partial_approval_capable` request) or decline (`WEBHOOK_DECLINED` on the
       *   transaction); append `decision.record` to the transaction's `request_history`.
       *
       * Never fails for the receiver's sake (timeouts, connection errors, non-2xx, bad JSON all end in
       * the endpoint's `timeout_decision`); only the endpoint's read can fail (`SqlError`).
       */
      decide: (programId: string, request: AuthorizationRequest): Effect.Effect<Option.Option<Decision>, SqlError.SqlError> =>
        askOutsideTransaction(sources, programId, request)
    }
  })
}) {}
