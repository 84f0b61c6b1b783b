import type { SqlError } from "@effect/sql"
import { Context, type Effect, type Option } from "effect"
import type { InvalidRequest } from "../platform/Errors.js"
import type { PageWindow } from "../platform/Paging.js"
import type { SealedSecrets } from "../webhooks/WebhookStore.js"
import type { StoredAuthorizationEndpoint } from "./AuthorizationEndpointRecords.js"
import type { AuthorizationEndpointOrderField } from "./OrderFields.js"

/** Storage port of authorization endpoints (docs/card-transactions.md#real-time-decisions): at most one per program. */
export interface AuthorizationEndpointStoreService {
  /** Inserts an endpoint; a second one for the program fails with the store's unique violation. */
  readonly insert: (endpoint: StoredAuthorizationEndpoint) => Effect.Effect<void, SqlError.SqlError>
  /** The endpoint of the program with this id; `forUpdate` (inside a transaction) locks its row until commit. */
  readonly find: (
    programId: string,
    id: string,
    forUpdate?: boolean
  ) => Effect.Effect<Option.Option<StoredAuthorizationEndpoint>, SqlError.SqlError>
  /** The program's endpoint, if it has one (enabled or not): what a decision reads. */
  readonly findForProgram: (programId: string) => Effect.Effect<Option.Option<StoredAuthorizationEndpoint>, SqlError.SqlError>
  /** One page of the program's endpoints and their exact total. */
  readonly list: (
    programId: string,
    window: PageWindow<AuthorizationEndpointOrderField>
  ) => Effect.Effect<
    { readonly rows: ReadonlyArray<StoredAuthorizationEndpoint>; readonly total: number },
    SqlError.SqlError | InvalidRequest
  >
  /** Saves every mutable field (url, timeout_ms, timeout_decision, disabled, secrets, updated_at). */
  readonly update: (endpoint: StoredAuthorizationEndpoint) => Effect.Effect<void, SqlError.SqlError>
  /**
   * Up to `limit` endpoints (of every program, by id) whose secret or previous secret is sealed
   * under a vault key other than `currentKeyId` (sealed values read `v1.<keyId>.<payload>`).
   */
  readonly sealedWithOtherKeys: (
    currentKeyId: string,
    limit: number
  ) => Effect.Effect<ReadonlyArray<StoredAuthorizationEndpoint>, SqlError.SqlError>
  /** Replaces an endpoint's sealed secrets if they are still `expected` (compare-and-set); true when replaced. */
  readonly reseal: (id: string, expected: SealedSecrets, next: SealedSecrets) => Effect.Effect<boolean, SqlError.SqlError>
  /** Deletes the endpoint; false when there was none. */
  readonly remove: (programId: string, id: string) => Effect.Effect<boolean, SqlError.SqlError>
}

/** The authorization endpoint store port. */
export class AuthorizationEndpointStore extends Context.Tag("@issuing/core/AuthorizationEndpointStore")<
  AuthorizationEndpointStore,
  AuthorizationEndpointStoreService
>() {}
