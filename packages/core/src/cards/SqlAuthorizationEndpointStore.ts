import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import { boolParam, toBool, toInt, toIso, toIsoOrNull } from "../platform/Rows.js"
import { bounded, listTotal } from "../sql/ListCounts.js"
import { pageRows } from "../sql/OrderBy.js"
import type { StoredAuthorizationEndpoint, TimeoutDecision } from "./AuthorizationEndpointRecords.js"
import { AuthorizationEndpointStore, type AuthorizationEndpointStoreService } from "./AuthorizationEndpointStore.js"
import { AUTHORIZATION_ENDPOINT_ORDER_FIELDS } from "./OrderFields.js"

/** An endpoint row, decoded alike from both dialects. */
const toEndpoint = (row: any): StoredAuthorizationEndpoint => ({
  id: row.id,
  object: "authorization_endpoint",
  program_id: row.program_id,
  url: row.url,
  timeout_ms: toInt(row.timeout_ms),
  timeout_decision: row.timeout_decision as TimeoutDecision,
  disabled: toBool(row.disabled),
  secret_sealed: row.secret_sealed,
  previous_secret_sealed: row.previous_secret_sealed ?? null,
  previous_secret_expires_at: toIsoOrNull(row.previous_secret_expires_at),
  created_at: toIso(row.created_at),
  updated_at: toIso(row.updated_at)
})

const first = (rows: ReadonlyArray<any>) => Option.map(Option.fromNullable(rows[0]), toEndpoint)

/** Authorization endpoints over SqlClient: one SQL text for both dialects except the row lock. */
export const SqlAuthorizationEndpointStoreLive = Layer.effect(
  AuthorizationEndpointStore,
  Effect.gen(function* () {
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const store: AuthorizationEndpointStoreService = {
      insert: (endpoint) =>
        sql`INSERT INTO issuing_authorization_endpoints
              (id, program_id, url, secret_sealed, previous_secret_sealed, previous_secret_expires_at, timeout_ms,
               timeout_decision, disabled, created_at, updated_at)
            VALUES (${endpoint.id}, ${endpoint.program_id}, ${endpoint.url}, ${endpoint.secret_sealed},
                    ${endpoint.previous_secret_sealed}, ${endpoint.previous_secret_expires_at}, ${endpoint.timeout_ms},
                    ${endpoint.timeout_decision}, ${boolParam(endpoint.disabled)}, ${endpoint.created_at},
                    ${endpoint.updated_at})`.pipe(Effect.asVoid),
      find: (programId, id, forUpdate = false) =>
        sql`SELECT * FROM issuing_authorization_endpoints WHERE id = ${id} AND program_id = ${programId}${
          // SQLite writes are BEGIN IMMEDIATE (one writer), so only PostgreSQL needs the row lock.
          forUpdate ? sql.onDialectOrElse({ pg: () => sql.literal(" FOR UPDATE"), orElse: () => sql.literal("") }) : sql.literal("")
        }`.pipe(Effect.map(first)),
      findForProgram: (programId) =>
        sql`SELECT * FROM issuing_authorization_endpoints WHERE program_id = ${programId}`.pipe(Effect.map(first)),
      list: (programId, window) => {
        const where = sql`program_id = ${programId}`
        return Effect.all({
          rows: pageRows(sql, window, AUTHORIZATION_ENDPOINT_ORDER_FIELDS, {
            select: sql.literal("*"),
            from: sql.literal("issuing_authorization_endpoints"),
            where
          }).pipe(Effect.map((rows) => rows.map(toEndpoint))),
          // At most one per program (UNIQUE program_id): a bounded count.
          total: listTotal(sql, bounded("issuing_authorization_endpoints", where))
        })
      },
      update: (endpoint) =>
        sql`UPDATE issuing_authorization_endpoints
            SET url = ${endpoint.url}, timeout_ms = ${endpoint.timeout_ms}, timeout_decision = ${endpoint.timeout_decision},
                disabled = ${boolParam(endpoint.disabled)}, secret_sealed = ${endpoint.secret_sealed},
                previous_secret_sealed = ${endpoint.previous_secret_sealed},
                previous_secret_expires_at = ${endpoint.previous_secret_expires_at}, updated_at = ${endpoint.updated_at}
            WHERE id = ${endpoint.id} AND program_id = ${endpoint.program_id}`.pipe(Effect.asVoid),
      sealedWithOtherKeys: (currentKeyId, limit) => {
        const prefix = `v1.${currentKeyId}.`
        return sql`SELECT * FROM issuing_authorization_endpoints
                   WHERE substr(secret_sealed, 1, ${prefix.length}) <> ${prefix}
                      OR (previous_secret_sealed IS NOT NULL AND substr(previous_secret_sealed, 1, ${prefix.length}) <> ${prefix})
                   ORDER BY id LIMIT ${limit}`.pipe(Effect.map((rows) => rows.map(toEndpoint)))
      },
      reseal: (id, expected, next) =>
        sql`UPDATE issuing_authorization_endpoints
            SET secret_sealed = ${next.secret_sealed}, previous_secret_sealed = ${next.previous_secret_sealed},
                previous_secret_expires_at = ${next.previous_secret_expires_at}
            WHERE id = ${id} AND secret_sealed = ${expected.secret_sealed}
              AND COALESCE(previous_secret_sealed, '') = ${expected.previous_secret_sealed ?? ""}
            RETURNING id`.pipe(Effect.map((rows) => rows.length === 1)),
      remove: (programId, id) =>
        sql`DELETE FROM issuing_authorization_endpoints WHERE id = ${id} AND program_id = ${programId} RETURNING id`.pipe(
          Effect.map((rows) => rows.length > 0)
        )
    }
    return store
  })
)
