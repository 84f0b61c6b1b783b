import type { SqlError } from "@effect/sql"
import { type Context, Data, Effect, Option, Ref, Schedule, type Scope } from "effect"
import { Conflict, InvalidRequest } from "../platform/Errors.js"
import { isUuid, newId } from "../platform/Ids.js"
import { CLAIM_LEASE_MS, CLAIM_RENEW_MS } from "../platform/Leases.js"
import { nowMs } from "../platform/Time.js"
import { Transactor, type TransactorService } from "../sql/Transactor.js"
import { Vault, type VaultService } from "../vault/Vault.js"
import { type Claim, type HeldClaim, IdempotencyStore } from "./IdempotencyStore.js"
import { IdempotentCommit, type IdempotentCommitService } from "./IdempotentCommit.js"

/** How long a key is remembered: 24 h (docs/api.md#idempotency). */
export const RETENTION_MS = 24 * 60 * 60 * 1000

/**
 * A kind of idempotency key, kept in the same table and run by the same machinery: a prefix keeps
 * its keys apart from the other kinds', its retention is its own, and its refusals (409) name the
 * field that carries it.
 */
export interface IdempotencyNamespace {
  readonly prefix: string
  readonly retentionMs: number
  readonly param: string
}

/** Idempotency-Key headers (UUIDs, so no prefix can meet one): kept 24 h. */
export const REQUEST_KEYS: IdempotencyNamespace = { prefix: "", retentionMs: RETENTION_MS, param: "Idempotency-Key" }

/** A card network message's `network_message_id`: kept 35 days, as networks retransmit (docs/network.md#exactly-once). */
export const NETWORK_MESSAGE_KEYS: IdempotencyNamespace = {
  prefix: "network_message:",
  retentionMs: 35 * RETENTION_MS,
  param: "network_message_id"
}

/** A response as the idempotency layer sees it: status and JSON body text. */
export interface PlainResponse {
  readonly status: number
  readonly body: string
}

/** The outcome of an idempotent execution. */
export type IdempotentResult<A> =
  /** The request ran and this is its own response (stored with the key unless a 5xx). */
  | { readonly _tag: "Ran"; readonly response: A }
  /**
   * The request ran and wrote at its commit point (IdempotentCommit): the answer stored there, with
   * its write, is its answer — the same a retry gets.
   */
  | { readonly _tag: "Committed"; readonly response: PlainResponse }
  /** The stored response of an earlier request with the key. */
  | { readonly _tag: "Replayed"; readonly response: PlainResponse }

class NotStorable<A> extends Data.TaggedError("NotStorable")<{ readonly response: A }> {}

/** The request's claim ran out (it stalled past its lease) and another request took the key over. */
class ClaimLost extends Data.TaggedError("ClaimLost") {}

const claimLostConflict = (param: string) =>
  new Conflict({
    message: `Another request with this ${param} took over while this one was stalled; nothing of this one was kept. Retry to get that request's response.`,
    param
  })

/**
 * The canonical text of a request (method, path with query, program, body), length-prefixed so
 * parts cannot run into each other. It is only ever stored as a keyed fingerprint (HMAC under the
 * vault): a plain hash of a body holding a card number could be reversed by guessing numbers.
 */
export const canonicalRequest = (parts: ReadonlyArray<string>): string => parts.map((part) => `${part.length}:${part}`).join("")

/** How a claimed request runs. */
export type RunOptions =
  /** The default: the request runs inside one database transaction that also stores its response. */
  | { readonly callsOut: false }
  /**
   * For operations that call out to other systems (a real-time decision, a webhook delivered now):
   * the request runs outside any transaction — one held across a network call would block other
   * writers, on SQLite all of them — under its committed claim, and writes once at its commit
   * point (IdempotentCommit), in one transaction with its answer: `answerOf` of the write's value
   * (the operation's result as its endpoint sends it). A crash before that commit leaves nothing
   * written; a retry after the claim's lease runs the request afresh. A request that ends without
   * writing there (a refusal) has its response stored as usual.
   */
  | { readonly callsOut: true; readonly answerOf: (value: unknown) => Effect.Effect<PlainResponse> }

type IdempotencyDeps = {
  readonly store: Context.Tag.Service<typeof IdempotencyStore>
  readonly transactor: TransactorService
  readonly vault: VaultService
  /** The service's lifetime: background releases run in it and end with it. */
  readonly scope: Scope.Scope
  /** The claims of the requests running in this process, by token: the heartbeat renews them. */
  readonly held: Map<string, HeldClaim>
}

/**
 * Renews every CLAIM_RENEW_MS the lease of each claim a request of this process still runs under,
 * in one statement (docs/operations.md#claims-and-leases); a request shorter than that is never
 * renewed. A failed renewal is tried again at the next beat.
 */
const heartbeat = (deps: IdempotencyDeps) =>
  Effect.gen(function* () {
    if (deps.held.size === 0) return
    const now = new Date(yield* nowMs).toISOString()
    yield* deps.store.renew([...deps.held.values()], now)
  }).pipe(
    Effect.catchAllCause((cause) => Effect.logWarning("Renewing Idempotency-Key claims failed; retrying", cause)),
    Effect.repeat(Schedule.spaced(CLAIM_RENEW_MS)),
    Effect.asVoid
  )

/**
 * Lets go of a claim whose request ended without a storable response (a 5xx, a failure), so the
 * caller's retry with the same key runs — as a 500 tells it to. The usual reason for such an end
 * is the database going away, and then the release fails too: it is kept trying in the background
 * (the answer does not wait for it) until shortly before the claim's lease ends. Without that the
 * retries met 409 "still being processed" for a minute after the database came back (found by the
 * fault suite, test/faults/database.test.ts). The release names its claim (its token), so it can
 * never free a retry's takeover; past one lease it stops, as a retry may take the key anyway.
 */
const releaseClaim = (deps: IdempotencyDeps, organizationId: string, key: string, token: string) => {
  const release = deps.store.release(organizationId, key, token)
  return release.pipe(
    Effect.catchAllCause(() =>
      Effect.forkIn(
        release.pipe(
          Effect.retry(Schedule.exponential("50 millis").pipe(Schedule.union(Schedule.spaced("250 millis")))),
          Effect.timeout(CLAIM_LEASE_MS),
          Effect.ignore
        ),
        deps.scope
      )
    ),
    Effect.asVoid
  )
}

const unsealed = (vault: VaultService, sealed: string): string | undefined => {
  try {
    return vault.decrypt(sealed)
  } catch {
    return undefined
  }
}

/** The answer to a claim that is not ours to run: a 409, or the stored response to replay. */
const answerClaim = <A>(deps: IdempotencyDeps, claim: Exclude<Claim, { readonly _tag: "Claimed" }>, param: string) => {
  switch (claim._tag) {
    case "Mismatch":
      return Effect.fail(new Conflict({ message: `This ${param} was already used with a different request.`, param }))
    case "InProgress":
      return Effect.fail(new Conflict({ message: `A request with this ${param} is still being processed; retry later.`, param }))
    case "Replay": {
      // Sealed under a vault key no longer configured (removed within 24 h of a rotation, against
      // docs/operations.md): the response cannot be replayed, and running the request again could
      // repeat a write, so the key is spent.
      const body = unsealed(deps.vault, claim.response.sealedBody)
      return body === undefined
        ? Effect.fail(
            new Conflict({
              message: `The stored response for this ${param} can no longer be read (its vault key was removed); send the request with a new key if it must run again.`,
              param
            })
          )
        : Effect.succeed<IdempotentResult<A>>({ _tag: "Replayed", response: { status: claim.response.status, body } })
    }
  }
}

/**
 * Stores the response of a claim in the caller's transaction; a 5xx is not storable. Fails with
 * ClaimLost when the claim is no longer this request's (compare-and-set on its token): the
 * caller's writes must roll back.
 */
const storeResponse = (deps: IdempotencyDeps, claim: HeldClaim, plain: PlainResponse) =>
  Effect.flatMap(
    deps.store.complete(claim.organizationId, claim.key, claim.token, { status: plain.status, sealedBody: deps.vault.encrypt(plain.body) }),
    (stored) => (stored ? Effect.void : Effect.fail(new ClaimLost()))
  )

/**
 * The commit point of a request that calls out (RunOptions): its one write and its answer in one
 * transaction under its claim. `committed` keeps the answer once that transaction has committed.
 */
const claimedCommitPoint = (
  deps: IdempotencyDeps,
  claim: HeldClaim,
  answerOf: (value: unknown) => Effect.Effect<PlainResponse>,
  committed: Ref.Ref<Option.Option<PlainResponse>>,
  param: string
): IdempotentCommitService => ({
  commit: (write) =>
    Effect.flatMap(Ref.get(committed), (before) =>
      Option.isSome(before)
        ? Effect.dieMessage("A request writes at its commit point once (IdempotentCommit)")
        : deps.transactor
            .withTransaction(
              Effect.flatMap(write, (value) =>
                Effect.flatMap(answerOf(value), (plain) =>
                  plain.status >= 500
                    ? Effect.dieMessage("A commit point's answer is the operation's result, never a 5xx")
                    : Effect.as(storeResponse(deps, claim, plain), [value, plain] as const)
                )
              )
            )
            .pipe(
              Effect.catchIf(
                (error): error is ClaimLost => error instanceof ClaimLost,
                () => Effect.fail(claimLostConflict(param))
              ),
              Effect.flatMap(([value, plain]) => Effect.as(Ref.set(committed, Option.some(plain)), value))
            )
    )
})

/**
 * Runs a claimed request and stores its response (with its writes, or at its commit point when it
 * calls out); a 5xx or a failure releases the key. The response is stored only while the claim is
 * still this request's (compare-and-set on its token): a request that stalled past its lease and
 * lost the key to a retry rolls its writes back and answers 409 — never two executions of one key
 * committed.
 */
const runClaimed = <A, E, R>(
  deps: IdempotencyDeps,
  claim: HeldClaim,
  execute: Effect.Effect<A, E, R>,
  toPlain: (result: A) => Effect.Effect<PlainResponse>,
  options: RunOptions,
  param: string
) => {
  const { key, organizationId, token } = claim
  /** The request's response, kept unless a 5xx; in the request's own transaction when it has one. */
  const keep = (result: A) =>
    Effect.gen(function* () {
      const plain = yield* toPlain(result)
      if (plain.status >= 500) return yield* new NotStorable({ response: result })
      const store = storeResponse(deps, claim, plain)
      if (!options.callsOut) return yield* store
      // A refusal of an operation that calls out: nothing of it was written, so the claim lost
      // meanwhile only means its answer is not kept.
      yield* deps.transactor.withTransaction(store).pipe(
        Effect.catchIf(
          (error): error is ClaimLost => error instanceof ClaimLost,
          () => Effect.logWarning(`The claim of a request's ${param} was taken over while it ran; its response was not stored`)
        )
      )
    })
  const executeAndStore: Effect.Effect<IdempotentResult<A>, E | SqlError.SqlError | NotStorable<A> | ClaimLost, R> = options.callsOut
    ? Effect.gen(function* () {
        const committed = yield* Ref.make(Option.none<PlainResponse>())
        const point = claimedCommitPoint(deps, claim, options.answerOf, committed, param)
        const result = yield* Effect.provideService(execute, IdempotentCommit, point)
        const answer = yield* Ref.get(committed)
        if (Option.isSome(answer)) return { _tag: "Committed", response: answer.value }
        yield* keep(result)
        return { _tag: "Ran", response: result }
      })
    : deps.transactor.withTransaction(
        Effect.flatMap(execute, (result) => Effect.as(keep(result), { _tag: "Ran", response: result } as const))
      )
  return Effect.acquireUseRelease(
    Effect.sync(() => deps.held.set(token, claim)),
    () => executeAndStore,
    () => Effect.sync(() => deps.held.delete(token))
  ).pipe(
    Effect.catchIf(
      (error): error is NotStorable<A> => error instanceof NotStorable,
      (notStorable) => Effect.as(releaseClaim(deps, organizationId, key, token), { _tag: "Ran", response: notStorable.response } as const)
    ),
    Effect.onError(() => releaseClaim(deps, organizationId, key, token)),
    Effect.catchIf(
      (error): error is ClaimLost => error instanceof ClaimLost,
      () => Effect.fail(claimLostConflict(param))
    )
  )
}

/**
 * Stripe-style idempotency keys (docs/api.md#idempotency). The first request with a key claims it,
 * runs, and stores its response **in the same transaction as its writes** (an operation that calls
 * out: its one write after the call, at its commit point); a retry with the same request gets the
 * stored response, one with a different request or while the first still runs gets 409. A 5xx is
 * not stored (the claim is released so the caller can retry).
 */
export class Idempotency extends Effect.Service<Idempotency>()("@issuing/core/Idempotency", {
  scoped: Effect.gen(function* () {
    const deps: IdempotencyDeps = {
      store: yield* IdempotencyStore,
      transactor: yield* Transactor,
      vault: yield* Vault,
      scope: yield* Effect.scope,
      held: new Map()
    }
    yield* Effect.forkScoped(heartbeat(deps))
    return {
      /** Validates an Idempotency-Key header value. */
      validateKey: (key: string): Effect.Effect<string, InvalidRequest> =>
        isUuid(key.trim())
          ? Effect.succeed(key.trim().toLowerCase())
          : Effect.fail(new InvalidRequest({ message: "Idempotency-Key must be a UUID.", param: "Idempotency-Key" })),

      /**
       * Runs `execute` at most once per (organization, key) of `namespace` (Idempotency-Key headers
       * by default). `toPlain` turns its result into the status and body to keep; results with a
       * status ≥ 500 roll the transaction back and are not kept. `options.callsOut`: see RunOptions.
       */
      run: <A, E, R>(
        organizationId: string,
        key: string,
        requestParts: ReadonlyArray<string>,
        execute: Effect.Effect<A, E, R>,
        toPlain: (result: A) => Effect.Effect<PlainResponse>,
        options: RunOptions = { callsOut: false },
        namespace: IdempotencyNamespace = REQUEST_KEYS
      ): Effect.Effect<IdempotentResult<A>, E | Conflict | SqlError.SqlError, R> =>
        Effect.gen(function* () {
          // Under every configured vault key, current first: a retry across a key rotation is still
          // the same request.
          const [fingerprint, ...olderFingerprints] = deps.vault.fingerprints(canonicalRequest(requestParts))
          const now = yield* nowMs
          const token = newId()
          const storedKey = namespace.prefix + key
          const claim = yield* deps.store.claim({
            organizationId,
            key: storedKey,
            fingerprint: fingerprint!,
            olderFingerprints,
            now: new Date(now).toISOString(),
            token,
            staleBefore: new Date(now - CLAIM_LEASE_MS).toISOString(),
            expiresAt: new Date(now + namespace.retentionMs).toISOString(),
            expiredBefore: new Date(now - RETENTION_MS).toISOString()
          })
          if (claim._tag !== "Claimed") return yield* answerClaim<A>(deps, claim, namespace.param)
          return yield* runClaimed(deps, { organizationId, key: storedKey, token }, execute, toPlain, options, namespace.param)
        }),

      /** Deletes keys past retention; run periodically by the server. */
      purgeExpired: Effect.flatMap(nowMs, (now) =>
        deps.store.purge(new Date(now).toISOString(), new Date(now - RETENTION_MS).toISOString())
      )
    }
  })
}) {}
