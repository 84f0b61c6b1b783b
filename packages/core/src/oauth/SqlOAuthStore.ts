import { bounded, listTotal } from "../sql/ListCounts.js"
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import { fromJson, toInt, toIso, toIsoOrNull } from "../platform/Rows.js"
import { pageRows } from "../sql/OrderBy.js"
import { OAUTH_CLIENT_ORDER_FIELDS, OAUTH_GRANT_ORDER_FIELDS } from "./OrderFields.js"
import { OAuthStore, type OAuthStoreService } from "./OAuthStore.js"
import type {
  InteractionStatus,
  OAuthClientType,
  OAuthScope,
  StoredCode,
  StoredGrant,
  StoredInteraction,
  StoredOAuthClient,
  StoredToken,
  TokenKind
} from "./Records.js"

type Sql = SqlClient.SqlClient

const toClient = (row: any): StoredOAuthClient => ({
  id: row.id,
  object: "oauth_client",
  organization_id: row.organization_id,
  name: row.name,
  client_id: row.client_id,
  redirect_uris: fromJson<Array<string>>(row.redirect_uris),
  type: row.type as OAuthClientType,
  scopes: fromJson<Array<OAuthScope>>(row.scopes),
  created_at: toIso(row.created_at)
})

const toInteraction = (row: any): StoredInteraction => ({
  id: row.id,
  organization_id: row.organization_id,
  oauth_client_id: row.oauth_client_id,
  redirect_uri: row.redirect_uri,
  scopes: fromJson<Array<OAuthScope>>(row.scopes),
  state: row.state ?? null,
  code_challenge: row.code_challenge,
  status: row.status as InteractionStatus,
  created_at: toIso(row.created_at),
  expires_at: toIso(row.expires_at)
})

const toGrant = (row: any): StoredGrant => ({
  id: row.id,
  object: "oauth_grant",
  organization_id: row.organization_id,
  oauth_client_id: row.oauth_client_id,
  client_id: row.client_id,
  program_ids: fromJson<Array<string>>(row.program_ids),
  scopes: fromJson<Array<OAuthScope>>(row.scopes),
  api_key_id: row.api_key_id ?? null,
  created_at: toIso(row.created_at),
  revoked_at: toIsoOrNull(row.revoked_at)
})

const toCode = (row: any): StoredCode => ({
  code_hash: row.code_hash,
  grant_id: row.grant_id,
  oauth_client_id: row.oauth_client_id,
  redirect_uri: row.redirect_uri,
  code_challenge: row.code_challenge,
  expires_at: toIso(row.expires_at),
  used_at: toIsoOrNull(row.used_at)
})

const toToken = (row: any): StoredToken => ({
  token_hash: row.token_hash,
  grant_id: row.grant_id,
  kind: row.kind as TokenKind,
  scopes: fromJson<Array<OAuthScope>>(row.scopes),
  created_at: toIso(row.created_at),
  expires_at: toIso(row.expires_at),
  rotated_at: toIsoOrNull(row.rotated_at),
  revoked_at: toIsoOrNull(row.revoked_at)
})

const first =
  <A>(decode: (row: any) => A) =>
  (rows: ReadonlyArray<any>) =>
    Option.map(Option.fromNullable(rows[0]), decode)

/** Clients: found by row id within an organization, or by public client_id; deleted ones never. */
const clientQueries = (
  sql: Sql
): Pick<
  OAuthStoreService,
  "insertClient" | "findClient" | "findClientByClientId" | "listClients" | "deleteClient" | "setClientSecret"
> => ({
  insertClient: (client, secretHash) =>
    sql`INSERT INTO issuing_oauth_clients
          (id, organization_id, client_id, name, type, redirect_uris, scopes, secret_hash, created_at, deleted_at)
        VALUES (${client.id}, ${client.organization_id}, ${client.client_id}, ${client.name}, ${client.type},
                ${JSON.stringify(client.redirect_uris)}, ${JSON.stringify(client.scopes)}, ${secretHash}, ${client.created_at}, NULL)`.pipe(
      Effect.asVoid
    ),
  findClient: (organizationId, id) =>
    sql`SELECT * FROM issuing_oauth_clients
        WHERE id = ${id} AND organization_id = ${organizationId} AND deleted_at IS NULL`.pipe(Effect.map(first(toClient))),
  findClientByClientId: (clientId) =>
    sql`SELECT * FROM issuing_oauth_clients WHERE client_id = ${clientId} AND deleted_at IS NULL`.pipe(
      Effect.map(first((row) => ({ client: toClient(row), secretHash: (row.secret_hash as string | null) ?? null })))
    ),
  listClients: (organizationId, window) =>
    Effect.all({
      rows: pageRows(sql, window, OAUTH_CLIENT_ORDER_FIELDS, {
        select: sql.literal("*"),
        from: sql.literal("issuing_oauth_clients"),
        where: sql`organization_id = ${organizationId} AND deleted_at IS NULL`
      }).pipe(Effect.map((rows) => rows.map(toClient))),
      total: listTotal(sql, bounded("issuing_oauth_clients", sql`organization_id = ${organizationId} AND deleted_at IS NULL`))
    }),
  deleteClient: (organizationId, id, at) =>
    sql`UPDATE issuing_oauth_clients SET deleted_at = ${at}
        WHERE id = ${id} AND organization_id = ${organizationId} AND deleted_at IS NULL
        RETURNING *`.pipe(Effect.map(first(toClient))),
  setClientSecret: (organizationId, id, secretHash) =>
    sql`UPDATE issuing_oauth_clients SET secret_hash = ${secretHash}
        WHERE id = ${id} AND organization_id = ${organizationId} AND deleted_at IS NULL AND type = 'confidential'
        RETURNING *`.pipe(Effect.map(first(toClient)))
})

/** Interactions and grants; deciding an interaction is one compare-and-set. */
const grantQueries = (
  sql: Sql
): Pick<
  OAuthStoreService,
  | "insertInteraction"
  | "findInteraction"
  | "countOpenInteractions"
  | "decideInteraction"
  | "insertGrant"
  | "findGrant"
  | "listGrants"
  | "revokeGrants"
> => ({
  insertInteraction: (interaction) =>
    sql`INSERT INTO issuing_oauth_interactions
          (id, organization_id, oauth_client_id, redirect_uri, scopes, state, code_challenge, status, created_at, expires_at)
        VALUES (${interaction.id}, ${interaction.organization_id}, ${interaction.oauth_client_id}, ${interaction.redirect_uri},
                ${JSON.stringify(interaction.scopes)}, ${interaction.state}, ${interaction.code_challenge}, ${interaction.status},
                ${interaction.created_at}, ${interaction.expires_at})`.pipe(Effect.asVoid),
  findInteraction: (organizationId, id) =>
    sql`SELECT * FROM issuing_oauth_interactions WHERE id = ${id} AND organization_id = ${organizationId}`.pipe(
      Effect.map(first(toInteraction))
    ),
  countOpenInteractions: (oauthClientId, now, atMost) =>
    sql`SELECT COUNT(*) AS n FROM (
          SELECT 1 FROM issuing_oauth_interactions
          WHERE oauth_client_id = ${oauthClientId} AND status = 'pending' AND expires_at > ${now}
          LIMIT ${atMost}
        ) open_interactions`.pipe(Effect.map((rows) => toInt(rows[0]!.n))),
  decideInteraction: (id, status, now) =>
    sql`UPDATE issuing_oauth_interactions SET status = ${status}
        WHERE id = ${id} AND status = 'pending' AND expires_at > ${now}
        RETURNING id`.pipe(Effect.map((rows) => rows.length === 1)),
  insertGrant: (grant) =>
    sql`INSERT INTO issuing_oauth_grants
          (id, organization_id, oauth_client_id, client_id, program_ids, scopes, api_key_id, created_at, revoked_at)
        VALUES (${grant.id}, ${grant.organization_id}, ${grant.oauth_client_id}, ${grant.client_id},
                ${JSON.stringify(grant.program_ids)}, ${JSON.stringify(grant.scopes)}, ${grant.api_key_id}, ${grant.created_at}, NULL)`.pipe(
      Effect.asVoid
    ),
  // A grant whose consenting key was revoked reads as revoked, even if it raced the key's revocation.
  findGrant: (id) =>
    sql`SELECT g.id, g.organization_id, g.oauth_client_id, g.client_id, g.program_ids, g.scopes, g.api_key_id, g.created_at,
               COALESCE(g.revoked_at, k.revoked_at) AS revoked_at
        FROM issuing_oauth_grants g LEFT JOIN issuing_api_keys k ON k.id = g.api_key_id
        WHERE g.id = ${id}`.pipe(Effect.map(first(toGrant))),
  listGrants: (organizationId, window) =>
    Effect.all({
      rows: pageRows(sql, window, OAUTH_GRANT_ORDER_FIELDS, {
        select: sql.literal("*"),
        from: sql.literal("issuing_oauth_grants"),
        where: sql`organization_id = ${organizationId} AND revoked_at IS NULL`
      }).pipe(Effect.map((rows) => rows.map(toGrant))),
      // An organization's live grants: one per consent it kept (revoked ones leave the set).
      total: listTotal(sql, bounded("issuing_oauth_grants", sql`organization_id = ${organizationId} AND revoked_at IS NULL`))
    }),
  revokeGrants: (target, at) =>
    Effect.gen(function* () {
      const which =
        "grantId" in target
          ? sql`id = ${target.grantId}`
          : "oauthClientId" in target
            ? sql`oauth_client_id = ${target.oauthClientId}`
            : sql`api_key_id = ${target.apiKeyId}`
      const revoked = (yield* sql`UPDATE issuing_oauth_grants SET revoked_at = ${at}
                                  WHERE ${which} AND revoked_at IS NULL RETURNING *`).map(toGrant)
      if (revoked.length === 0) return revoked
      yield* sql`UPDATE issuing_oauth_tokens SET revoked_at = ${at}
                 WHERE ${sql.in(
                   "grant_id",
                   revoked.map((grant) => grant.id)
                 )} AND revoked_at IS NULL`
      return revoked
    })
})

/** Codes and tokens: consuming a code and rotating a refresh token are compare-and-set statements. */
const tokenQueries = (
  sql: Sql
): Pick<
  OAuthStoreService,
  "insertCode" | "findCode" | "consumeCode" | "insertTokens" | "findToken" | "rotateRefreshToken" | "revokeToken" | "findActiveAccessToken"
> => ({
  insertCode: (code) =>
    sql`INSERT INTO issuing_oauth_codes (code_hash, grant_id, oauth_client_id, redirect_uri, code_challenge, expires_at, used_at)
        VALUES (${code.code_hash}, ${code.grant_id}, ${code.oauth_client_id}, ${code.redirect_uri}, ${code.code_challenge},
                ${code.expires_at}, NULL)`.pipe(Effect.asVoid),
  findCode: (codeHash) => sql`SELECT * FROM issuing_oauth_codes WHERE code_hash = ${codeHash}`.pipe(Effect.map(first(toCode))),
  consumeCode: (codeHash, at) =>
    sql`UPDATE issuing_oauth_codes SET used_at = ${at} WHERE code_hash = ${codeHash} AND used_at IS NULL RETURNING code_hash`.pipe(
      Effect.map((rows) => rows.length === 1)
    ),
  insertTokens: (tokens) =>
    Effect.forEach(
      tokens,
      (token) =>
        sql`INSERT INTO issuing_oauth_tokens (token_hash, grant_id, kind, scopes, created_at, expires_at, rotated_at, revoked_at)
            VALUES (${token.token_hash}, ${token.grant_id}, ${token.kind}, ${JSON.stringify(token.scopes)},
                    ${token.created_at}, ${token.expires_at}, NULL, NULL)`,
      { discard: true }
    ),
  findToken: (tokenHash) => sql`SELECT * FROM issuing_oauth_tokens WHERE token_hash = ${tokenHash}`.pipe(Effect.map(first(toToken))),
  rotateRefreshToken: (tokenHash, now) =>
    // The compare-and-set of refresh rotation: of two racing requests only one sees rotated_at NULL
    // (PostgreSQL re-checks the WHERE after the first commits; SQLite runs one writer at a time).
    sql`UPDATE issuing_oauth_tokens SET rotated_at = ${now}
        WHERE token_hash = ${tokenHash} AND kind = 'refresh' AND rotated_at IS NULL AND revoked_at IS NULL AND expires_at > ${now}
        RETURNING token_hash`.pipe(Effect.map((rows) => rows.length === 1)),
  revokeToken: (tokenHash, at) =>
    sql`UPDATE issuing_oauth_tokens SET revoked_at = ${at} WHERE token_hash = ${tokenHash} AND revoked_at IS NULL
        RETURNING token_hash`.pipe(Effect.map((rows) => rows.length === 1)),
  findActiveAccessToken: (tokenHash) =>
    sql`SELECT t.grant_id, t.scopes, t.expires_at, g.organization_id, g.oauth_client_id, g.program_ids
        FROM issuing_oauth_tokens t
        JOIN issuing_oauth_grants g ON g.id = t.grant_id
        JOIN issuing_oauth_clients c ON c.id = g.oauth_client_id
        LEFT JOIN issuing_api_keys k ON k.id = g.api_key_id
        WHERE t.token_hash = ${tokenHash} AND t.kind = 'access' AND t.revoked_at IS NULL
          AND g.revoked_at IS NULL AND c.deleted_at IS NULL AND k.revoked_at IS NULL`.pipe(
      Effect.map(
        first((row) => ({
          grant_id: row.grant_id,
          organization_id: row.organization_id,
          oauth_client_id: row.oauth_client_id,
          program_ids: fromJson<Array<string>>(row.program_ids),
          scopes: fromJson<Array<OAuthScope>>(row.scopes),
          expires_at: toIso(row.expires_at)
        }))
      )
    )
})

/** The OAuth port over SqlClient, one SQL text for both dialects. */
export const SqlOAuthStoreLive = Layer.effect(
  OAuthStore,
  Effect.map(SqlClient.SqlClient, (client) => {
    const sql = client.withoutTransforms()
    return { ...clientQueries(sql), ...grantQueries(sql), ...tokenQueries(sql) }
  })
)
