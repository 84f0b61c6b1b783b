import type { SqlError } from "@effect/sql"
import { Context, type Effect } from "effect"

/** A response kept for replay; `sealedBody` is the body encrypted under the vault key. */
export interface SealedResponse {
  readonly status: number
  readonly sealedBody: string
}

/** The outcome of claiming an idempotency key. */
export type Claim =
  | { readonly _tag: "Claimed" }
  | { readonly _tag: "Replay"; readonly response: SealedResponse }
  | { readonly _tag: "Mismatch" }
  | { readonly _tag: "InProgress" }

export interface ClaimRequest {
  readonly organizationId: string
  readonly key: string
  /** The request's fingerprint under the current vault key (stored with a new claim). */
  readonly fingerprint: string
  /**
   * Its fingerprints under the older configured vault keys: a record stored before a key rotation
   * holds one of these, and is the same request.
   */
  readonly olderFingerprints: ReadonlyArray<string>
  readonly now: string
  /** Names the claim this request makes (or takes over): its renewals, response and release carry it. */
  readonly token: string
  /**
   * A running claim last renewed before this instant belongs to a dead (or stalled) request and can
   * be taken over.
   */
  readonly staleBefore: string
  /** When a record this claim creates is past retention (its namespace's: docs/api.md#idempotency). */
  readonly expiresAt: string
  /**
   * A record past its `expires_at` counts as absent; one without (an older release wrote it) when it
   * was created before this instant.
   */
  readonly expiredBefore: string
}

/** A claim a running request holds: what its renewal names. */
export interface HeldClaim {
  readonly organizationId: string
  readonly key: string
  readonly token: string
}

/** Storage port for idempotency keys (docs/api.md#idempotency). */
export interface IdempotencyStoreService {
  readonly claim: (request: ClaimRequest) => Effect.Effect<Claim, SqlError.SqlError>
  /**
   * Stores the response of the claim named `token`; called inside the write's own transaction.
   * False when the key is no longer held under that token (its lease ran out and another request
   * took it over): nothing is stored, and the caller must not commit its writes.
   */
  readonly complete: (
    organizationId: string,
    key: string,
    token: string,
    response: SealedResponse
  ) => Effect.Effect<boolean, SqlError.SqlError>
  /** Renews to `now` the lease of each claim still held under its token (the heartbeat of running requests). */
  readonly renew: (claims: ReadonlyArray<HeldClaim>, now: string) => Effect.Effect<void, SqlError.SqlError>
  /**
   * Forgets a claim whose request ended without a storable response (a 5xx or a failure): the
   * claim named `token` and no other — a late release never frees a later request's takeover.
   */
  readonly release: (organizationId: string, key: string, token: string) => Effect.Effect<void, SqlError.SqlError>
  /**
   * Deletes records past retention at `now`; those without an end of their own (an older release
   * wrote them) when created before `unexpiringCreatedBefore`. Returns how many.
   */
  readonly purge: (now: string, unexpiringCreatedBefore: string) => Effect.Effect<number, SqlError.SqlError>
}

/** The idempotency storage port. */
export class IdempotencyStore extends Context.Tag("@issuing/core/IdempotencyStore")<IdempotencyStore, IdempotencyStoreService>() {}
