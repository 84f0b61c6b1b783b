import type { SqlError } from "@effect/sql"
import type { InvalidRequest } from "../platform/Errors.js"
import { Context, type Effect, type Option } from "effect"
import type { PageWindow } from "../platform/Paging.js"
import type { OAuthClientOrderField, OAuthGrantOrderField } from "./OrderFields.js"
import type {
  ActiveAccessToken,
  InteractionStatus,
  StoredCode,
  StoredGrant,
  StoredInteraction,
  StoredOAuthClient,
  StoredToken
} from "./Records.js"

type Sql<A> = Effect.Effect<A, SqlError.SqlError>

/** The grants a revocation names: one, every grant of a client, or every grant an API key consented to. */
export type GrantTarget = { readonly grantId: string } | { readonly oauthClientId: string } | { readonly apiKeyId: string }

/**
 * Storage port of the OAuth gateway (docs/oauth.md). Shaped by what the flow needs: the
 * single-use steps (deciding an interaction, consuming a code, rotating a refresh token) are
 * compare-and-set statements that report whether this caller won, so two racing requests can
 * never both succeed. Secrets, codes and tokens are found by their SHA-256 only.
 */
export interface OAuthStoreService {
  readonly insertClient: (client: StoredOAuthClient, secretHash: string | null) => Sql<void>
  /** A client of the organization that is not deleted. */
  readonly findClient: (organizationId: string, id: string) => Sql<Option.Option<StoredOAuthClient>>
  /** A client that is not deleted, by its public client_id, with its secret hash (null for public clients). */
  readonly findClientByClientId: (
    clientId: string
  ) => Sql<Option.Option<{ readonly client: StoredOAuthClient; readonly secretHash: string | null }>>
  readonly listClients: (
    organizationId: string,
    window: PageWindow<OAuthClientOrderField>
  ) => Effect.Effect<{ readonly rows: ReadonlyArray<StoredOAuthClient>; readonly total: number }, SqlError.SqlError | InvalidRequest>
  /** Marks a client deleted; none when there was no such live client. */
  readonly deleteClient: (organizationId: string, id: string, at: string) => Sql<Option.Option<StoredOAuthClient>>
  /** Replaces a live confidential client's secret hash; none when there is no such client. */
  readonly setClientSecret: (organizationId: string, id: string, secretHash: string) => Sql<Option.Option<StoredOAuthClient>>

  readonly insertInteraction: (interaction: StoredInteraction) => Sql<void>
  readonly findInteraction: (organizationId: string, id: string) => Sql<Option.Option<StoredInteraction>>
  /** The client's pending interactions unexpired at `now`, counted up to `atMost`. */
  readonly countOpenInteractions: (oauthClientId: string, now: string, atMost: number) => Sql<number>
  /** Moves a pending, unexpired interaction to `status`; false when it was decided or expired meanwhile. */
  readonly decideInteraction: (id: string, status: Exclude<InteractionStatus, "pending">, now: string) => Sql<boolean>

  readonly insertGrant: (grant: StoredGrant) => Sql<void>
  /** A grant; revoked (`revoked_at` set) also when the key that consented to it is revoked. */
  readonly findGrant: (id: string) => Sql<Option.Option<StoredGrant>>
  /** The organization's unrevoked grants, newest first. */
  readonly listGrants: (
    organizationId: string,
    window: PageWindow<OAuthGrantOrderField>
  ) => Effect.Effect<{ readonly rows: ReadonlyArray<StoredGrant>; readonly total: number }, SqlError.SqlError | InvalidRequest>
  /**
   * Revokes the unrevoked grants named (one grant, every grant of a client, or every grant the API
   * key consented to) and every token of them; returns the grants this call revoked (none when
   * they already were).
   */
  readonly revokeGrants: (target: GrantTarget, at: string) => Sql<ReadonlyArray<StoredGrant>>

  readonly insertCode: (code: StoredCode) => Sql<void>
  readonly findCode: (codeHash: string) => Sql<Option.Option<StoredCode>>
  /** Marks an unused code used; false when another request used it first. */
  readonly consumeCode: (codeHash: string, at: string) => Sql<boolean>

  readonly insertTokens: (tokens: ReadonlyArray<StoredToken>) => Sql<void>
  readonly findToken: (tokenHash: string) => Sql<Option.Option<StoredToken>>
  /** Retires a live refresh token (unrotated, unrevoked, unexpired at `now`); false when another request did first. */
  readonly rotateRefreshToken: (tokenHash: string, now: string) => Sql<boolean>
  /** Revokes one token; false when it was already revoked or unknown. */
  readonly revokeToken: (tokenHash: string, at: string) => Sql<boolean>
  /**
   * An unrevoked access token whose grant is unrevoked, whose client is not deleted and whose
   * consenting key is not revoked (expiry is the caller's to check).
   */
  readonly findActiveAccessToken: (tokenHash: string) => Sql<Option.Option<ActiveAccessToken>>
}

/** The OAuth storage port. */
export class OAuthStore extends Context.Tag("@issuing/core/OAuthStore")<OAuthStore, OAuthStoreService>() {}
