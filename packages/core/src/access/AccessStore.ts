import type { InvalidRequest } from "../platform/Errors.js"
import type { SqlError } from "@effect/sql"
import { Context, type Effect, type Option } from "effect"
import type { PageWindow } from "../platform/Paging.js"
import type { ApiKeyOrderField, ProgramOrderField } from "./OrderFields.js"
import type { KeyScope, Organization, StoredApiKey, StoredProgram } from "./Records.js"

/** Storage port for organizations, programs and API keys. */
export interface AccessStoreService {
  readonly insertOrganization: (organization: Organization) => Effect.Effect<void, SqlError.SqlError>
  readonly insertProgram: (program: StoredProgram) => Effect.Effect<void, SqlError.SqlError>
  readonly findProgram: (organizationId: string, programId: string) => Effect.Effect<Option.Option<StoredProgram>, SqlError.SqlError>
  /** Sets a program's settings (`require_verified_cardholder`) and updated_at; none when the organization has no such program. */
  readonly updateProgram: (
    organizationId: string,
    programId: string,
    change: { readonly require_verified_cardholder: boolean },
    at: string
  ) => Effect.Effect<Option.Option<StoredProgram>, SqlError.SqlError>
  /** Programs of an organization, limited to `programIds` when given. */
  readonly listPrograms: (
    organizationId: string,
    programIds: ReadonlyArray<string> | null,
    window: PageWindow<ProgramOrderField>
  ) => Effect.Effect<{ readonly rows: ReadonlyArray<StoredProgram>; readonly total: number }, SqlError.SqlError | InvalidRequest>
  readonly countPrograms: (organizationId: string, programIds: ReadonlyArray<string>) => Effect.Effect<number, SqlError.SqlError>
  readonly insertApiKey: (key: StoredApiKey, secretHash: string) => Effect.Effect<void, SqlError.SqlError>
  /** The unrevoked key with this secret hash. */
  readonly findActiveKeyByHash: (secretHash: string) => Effect.Effect<Option.Option<StoredApiKey>, SqlError.SqlError>
  /** An unrevoked key of the organization. */
  readonly findApiKey: (organizationId: string, keyId: string) => Effect.Effect<Option.Option<StoredApiKey>, SqlError.SqlError>
  /** Unrevoked keys of the organization within `scope` (the keys the listing admin key may manage). */
  readonly listApiKeys: (
    organizationId: string,
    window: PageWindow<ApiKeyOrderField>,
    scope: KeyScope
  ) => Effect.Effect<{ readonly rows: ReadonlyArray<StoredApiKey>; readonly total: number }, SqlError.SqlError | InvalidRequest>
  /** Marks an unrevoked key revoked; none when there was no such key. */
  readonly revokeApiKey: (
    organizationId: string,
    keyId: string,
    at: string
  ) => Effect.Effect<Option.Option<StoredApiKey>, SqlError.SqlError>
  /**
   * Counts API keys. Inside a transaction it first takes a lock that makes concurrent callers
   * wait for each other (PostgreSQL: a table lock; SQLite: the write transaction already is one),
   * so two processes bootstrapping an empty database cannot both see zero keys.
   */
  readonly countApiKeys: Effect.Effect<number, SqlError.SqlError>
  /**
   * The key's shared token bucket, created as `initial` when it has none, locked until the
   * transaction ends (PostgreSQL: the row; SQLite: the write transaction already is the lock).
   */
  readonly lockRateBucket: (apiKeyId: string, initial: RateBucket) => Effect.Effect<RateBucket, SqlError.SqlError>
  /** Writes the key's bucket as a lease left it. */
  readonly saveRateBucket: (apiKeyId: string, bucket: RateBucket) => Effect.Effect<void, SqlError.SqlError>
  /**
   * Writes the key's bucket as `next` only if its row holds exactly `expected`, in one statement
   * of its own (no lock held after it); true when written. False, nothing written, when the row
   * changed since or is not there.
   */
  readonly swapRateBucket: (apiKeyId: string, expected: RateBucket, next: RateBucket) => Effect.Effect<boolean, SqlError.SqlError>
  /** Deletes the buckets last refilled before `beforeMs`; returns how many. */
  readonly purgeRateBuckets: (beforeMs: number) => Effect.Effect<number, SqlError.SqlError>
}

/** A key's shared token bucket as stored (times in ms since the epoch). */
export interface RateBucket {
  /** The tokens in it when it was last refilled. */
  readonly tokens: number
  readonly refilledAtMs: number
  /** The last time it was seen full: tokens leased before then and given back are not put back. */
  readonly fullAtMs: number
}

/** The access storage port. */
export class AccessStore extends Context.Tag("@issuing/core/AccessStore")<AccessStore, AccessStoreService>() {}
