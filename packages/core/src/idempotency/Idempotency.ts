import type { SqlError } from "@effect/sql"
import { Data, Effect } from "effect"
import { Conflict, InvalidRequest } from "../platform/Errors.js"
import { isUuid } from "../platform/Ids.js"
import { nowMs } from "../platform/Time.js"
import { Transactor } from "../sql/Transactor.js"
import { Vault } from "../vault/Vault.js"
import { IdempotencyStore } from "./IdempotencyStore.js"

/** How long a key is remembered: 24 h (docs/api.md#idempotency). */
export const RETENTION_MS = 24 * 60 * 60 * 1000
/** A running request holding a key longer than this is presumed dead; a retry may take the key over. */
export const CLAIM_LEASE_MS = 60 * 1000

/** A response as the idempotency layer sees it: status and JSON body text. */
export interface PlainResponse {
  readonly status: number
  readonly body: string
}

/** The outcome of an idempotent execution. */
export interface IdempotentResult<A> {
  readonly response: A | PlainResponse
  /** True when the stored response of an earlier request was returned. */
  readonly replayed: boolean
}

class NotStorable<A> extends Data.TaggedError("NotStorable")<{ readonly response: A }> {}

/**
 * The canonical text of a request (method, path with query, program, body), length-prefixed so
 * parts cannot run into each other. It is only ever stored as a keyed fingerprint (HMAC under the
 * vault): a plain hash of a body holding a card number could be reversed by guessing numbers.
 */
export const canonicalRequest = (parts: ReadonlyArray<string>): string =>
  parts.map((part) => `${part.length}:${part}`).join("")

/** How a claimed request runs. */
export interface RunOptions {
  /**
   * True (the default): the request and its stored response commit in one database transaction.
   * False, for operations that call out to other systems (resend's synchronous delivery): the
   * request runs outside any transaction — holding one across a network call would block other
   * writers — and its response is stored right after it. A crash in between leaves the claim to
   * expire after its lease, and a retry runs the request again (at least once).
   */
  readonly atomic: boolean
}

/**
 * Stripe-style idempotency keys. The first request with a key claims it, runs, and stores its
 * response **in the same transaction as its writes**; a retry with the same request gets the stored
 * response, one with a different request or while the first still runs gets 409. A 5xx is not
 * stored (the claim is released so the caller can retry).
 */
export class Idempotency extends Effect.Service<Idempotency>()("@issuing/core/Idempotency", {
  effect: Effect.gen(function*() {
    const store = yield* IdempotencyStore
    const transactor = yield* Transactor
    const vault = yield* Vault

    const unsealed = (sealed: string): string | undefined => {
      try {
        return vault.decrypt(sealed)
      } catch {
        return undefined
      }
    }

    return {
      /** Validates an Idempotency-Key header value. */
      validateKey: (key: string): Effect.Effect<string, InvalidRequest> =>
        isUuid(key.trim())
          ? Effect.succeed(key.trim().toLowerCase())
          : Effect.fail(new InvalidRequest({ message: "Idempotency-Key must be a UUID.", param: "Idempotency-Key" })),

      /**
       * Runs `execute` at most once per (organization, key). `toPlain` turns its result into the
       * status and body to keep; results with a status ≥ 500 roll the transaction back and are not kept.
       */
      run: <A, E, R>(
        organizationId: string,
        key: string,
        requestParts: ReadonlyArray<string>,
        execute: Effect.Effect<A, E, R>,
        toPlain: (result: A) => Effect.Effect<PlainResponse>,
        options: RunOptions = { atomic: true }
      ): Effect.Effect<IdempotentResult<A>, E | Conflict | SqlError.SqlError, R> =>
        Effect.gen(function*() {
          // Under every configured vault key, current first: a retry across a key rotation is still
          // the same request.
          const [fingerprint, ...olderFingerprints] = vault.fingerprints(canonicalRequest(requestParts))
          const now = yield* nowMs
          const claim = yield* store.claim({
            organizationId,
            key,
            fingerprint: fingerprint!,
            olderFingerprints,
            now: new Date(now).toISOString(),
            staleBefore: new Date(now - CLAIM_LEASE_MS).toISOString(),
            expiredBefore: new Date(now - RETENTION_MS).toISOString()
          })
          switch (claim._tag) {
            case "Mismatch":
              return yield* new Conflict({
                message: "This Idempotency-Key was already used with a different request.",
                param: "Idempotency-Key"
              })
            case "InProgress":
              return yield* new Conflict({
                message: "A request with this Idempotency-Key is still being processed; retry later.",
                param: "Idempotency-Key"
              })
            case "Replay": {
              // Sealed under a vault key no longer configured (removed within 24 h of a rotation,
              // against docs/operations.md): the response cannot be replayed, and running the
              // request again could repeat a write, so the key is spent.
              const body = unsealed(claim.response.sealedBody)
              if (body === undefined) {
                return yield* new Conflict({
                  message: "The stored response for this Idempotency-Key can no longer be read (its vault key was removed); send the request with a new key if it must run again.",
                  param: "Idempotency-Key"
                })
              }
              return { response: { status: claim.response.status, body }, replayed: true } as IdempotentResult<A>
            }
            case "Claimed":
              break
          }
          const executeAndStore = Effect.gen(function*() {
            const result = yield* execute
            const plain = yield* toPlain(result)
            if (plain.status >= 500) return yield* new NotStorable({ response: result })
            const complete = store.complete(organizationId, key, { status: plain.status, sealedBody: vault.encrypt(plain.body) })
            yield* options.atomic ? complete : transactor.withTransaction(complete)
            return result
          })
          const result = yield* (options.atomic ? transactor.withTransaction(executeAndStore) : executeAndStore).pipe(
            Effect.catchIf(
              (error): error is NotStorable<A> => error instanceof NotStorable,
              (notStorable) => Effect.as(store.release(organizationId, key), notStorable.response)
            ),
            Effect.onError(() => Effect.ignore(store.release(organizationId, key)))
          )
          return { response: result, replayed: false } as IdempotentResult<A>
        }),

      /** Deletes keys past retention; run periodically by the server. */
      purgeExpired: Effect.flatMap(nowMs, (now) => store.purge(new Date(now - RETENTION_MS).toISOString()))
    }
  })
}) {}
