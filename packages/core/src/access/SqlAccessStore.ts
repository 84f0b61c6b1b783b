import { bounded, listTotal } from "../sql/ListCounts.js"
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import { boolParam, fromJson, toBool, toInt, toIso, toIsoOrNull } from "../platform/Rows.js"
import { pageRows } from "../sql/OrderBy.js"
import { StoreWriterThread } from "../sql/StoreWriterThread.js"
import { API_KEY_ORDER_FIELDS, PROGRAM_ORDER_FIELDS } from "./OrderFields.js"
import { AccessStore, type AccessStoreService } from "./AccessStore.js"
import type { KeyScope, Role, StoredApiKey, StoredProgram } from "./Records.js"

const toProgram = (row: any): StoredProgram => ({
  id: row.id,
  object: "program",
  organization_id: row.organization_id,
  name: row.name,
  bin: row.bin,
  require_verified_cardholder: toBool(row.require_verified_cardholder),
  created_at: toIso(row.created_at),
  updated_at: toIso(row.updated_at)
})

const toApiKey = (row: any): StoredApiKey => ({
  id: row.id,
  object: "api_key",
  organization_id: row.organization_id,
  name: row.name,
  role: row.role as Role,
  program_ids: row.program_ids === null ? null : fromJson<Array<string>>(row.program_ids),
  pan_reveal: toBool(row.pan_reveal),
  card_display: toBool(row.card_display),
  inbound_funding: toBool(row.inbound_funding),
  network: toBool(row.network),
  created_at: toIso(row.created_at),
  revoked_at: toIsoOrNull(row.revoked_at)
})

type Sql = SqlClient.SqlClient

const firstKey = (rows: ReadonlyArray<any>) => Option.map(Option.fromNullable(rows[0]), toApiKey)

/** Organizations and programs; lists limited to a key's programs when it has a list. */
const programQueries = (
  sql: Sql
): Pick<
  AccessStoreService,
  "insertOrganization" | "insertProgram" | "findProgram" | "updateProgram" | "listPrograms" | "countPrograms"
> => {
  const programFilter = (organizationId: string, programIds: ReadonlyArray<string> | null) =>
    programIds === null
      ? sql`organization_id = ${organizationId}`
      : programIds.length === 0
        ? sql`1 = 0`
        : sql`organization_id = ${organizationId} AND ${sql.in("id", programIds)}`
  return {
    insertOrganization: (organization) =>
      sql`INSERT INTO issuing_organizations (id, name, created_at)
          VALUES (${organization.id}, ${organization.name}, ${organization.created_at})`.pipe(Effect.asVoid),
    insertProgram: (program) =>
      sql`INSERT INTO issuing_programs (id, organization_id, name, bin, created_at, updated_at)
          VALUES (${program.id}, ${program.organization_id}, ${program.name}, ${program.bin},
                  ${program.created_at}, ${program.updated_at})`.pipe(Effect.asVoid),
    findProgram: (organizationId, programId) =>
      sql`SELECT * FROM issuing_programs WHERE id = ${programId} AND organization_id = ${organizationId}`.pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toProgram))
      ),
    updateProgram: (organizationId, programId, change, at) =>
      sql`UPDATE issuing_programs SET require_verified_cardholder = ${boolParam(change.require_verified_cardholder)}, updated_at = ${at}
          WHERE id = ${programId} AND organization_id = ${organizationId} RETURNING *`.pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toProgram))
      ),
    listPrograms: (organizationId, programIds, window) =>
      Effect.all({
        rows: pageRows(sql, window, PROGRAM_ORDER_FIELDS, {
          select: sql.literal("*"),
          from: sql.literal("issuing_programs"),
          where: programFilter(organizationId, programIds)
        }).pipe(Effect.map((rows) => rows.map(toProgram))),
        total: listTotal(sql, bounded("issuing_programs", programFilter(organizationId, programIds)))
      }),
    countPrograms: (organizationId, programIds) =>
      programIds.length === 0
        ? Effect.succeed(0)
        : sql`SELECT COUNT(*) AS n FROM issuing_programs
              WHERE organization_id = ${organizationId} AND ${sql.in("id", programIds)}`.pipe(Effect.map((rows) => toInt(rows[0]!.n)))
  }
}

/**
 * The keys inside a scope: none of the rights it lacks, and (when it is limited) a program list
 * within its programs — an unlimited key (program_ids NULL) is outside every limited scope.
 */
const keyScopeFilter = (sql: Sql, scope: KeyScope) => {
  const rights = scope.withoutRights.map((right) => sql`${sql(right)} = ${boolParam(false)}`)
  const programIds = scope.programIds
  if (programIds === null) return sql.and(rights)
  if (programIds.length === 0) return sql`1 = 0`
  const outside = sql.onDialectOrElse({
    pg: () => sql`SELECT 1 FROM jsonb_array_elements_text(program_ids::jsonb) AS p(value) WHERE p.value NOT IN ${sql.in(programIds)}`,
    orElse: () => sql`SELECT 1 FROM json_each(program_ids) AS p WHERE p.value NOT IN ${sql.in(programIds)}`
  })
  return sql.and([...rights, sql`program_ids IS NOT NULL`, sql`NOT EXISTS (${outside})`])
}

/** API keys, found by secret hash; revoked keys are kept but never found or listed. */
const keyQueries = (
  sql: Sql
): Pick<AccessStoreService, "insertApiKey" | "findActiveKeyByHash" | "findApiKey" | "listApiKeys" | "revokeApiKey" | "countApiKeys"> => ({
  insertApiKey: (key, secretHash) =>
    sql`INSERT INTO issuing_api_keys
          (id, organization_id, name, role, program_ids, pan_reveal, card_display, inbound_funding, network, secret_hash,
           created_at, revoked_at)
        VALUES (${key.id}, ${key.organization_id}, ${key.name}, ${key.role},
                ${key.program_ids === null ? null : JSON.stringify(key.program_ids)},
                ${boolParam(key.pan_reveal)}, ${boolParam(key.card_display)},
                ${boolParam(key.inbound_funding)}, ${boolParam(key.network)}, ${secretHash}, ${key.created_at}, NULL)`.pipe(Effect.asVoid),
  findActiveKeyByHash: (secretHash) =>
    sql`SELECT * FROM issuing_api_keys WHERE secret_hash = ${secretHash} AND revoked_at IS NULL`.pipe(Effect.map(firstKey)),
  findApiKey: (organizationId, keyId) =>
    sql`SELECT * FROM issuing_api_keys
        WHERE id = ${keyId} AND organization_id = ${organizationId} AND revoked_at IS NULL`.pipe(Effect.map(firstKey)),
  listApiKeys: (organizationId, window, scope) =>
    Effect.all({
      rows: pageRows(sql, window, API_KEY_ORDER_FIELDS, {
        select: sql.literal("*"),
        from: sql.literal("issuing_api_keys"),
        where: sql`organization_id = ${organizationId} AND revoked_at IS NULL AND ${keyScopeFilter(sql, scope)}`
      }).pipe(Effect.map((rows) => rows.map(toApiKey))),
      total: listTotal(
        sql,
        bounded("issuing_api_keys", sql`organization_id = ${organizationId} AND revoked_at IS NULL AND ${keyScopeFilter(sql, scope)}`)
      )
    }),
  revokeApiKey: (organizationId, keyId, at) =>
    sql`UPDATE issuing_api_keys SET revoked_at = ${at}
        WHERE id = ${keyId} AND organization_id = ${organizationId} AND revoked_at IS NULL
        RETURNING *`.pipe(Effect.map(firstKey)),
  countApiKeys: Effect.zipRight(
    Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (inTransaction) =>
      Option.isSome(inTransaction)
        ? sql.onDialectOrElse({
            // SHARE ROW EXCLUSIVE conflicts with itself: concurrent bootstraps run one after the other.
            pg: () => sql`LOCK TABLE issuing_api_keys IN SHARE ROW EXCLUSIVE MODE`.pipe(Effect.asVoid),
            orElse: () => Effect.void
          })
        : Effect.void
    ),
    sql`SELECT COUNT(*) AS n FROM issuing_api_keys`.pipe(Effect.map((rows) => toInt(rows[0]!.n)))
  )
})

/** `swapRateBucket`'s statement as one text with its parameters in order, for the store's writer thread. */
const SWAP_RATE_BUCKET_SQLITE = `UPDATE issuing_rate_buckets SET tokens = ?, refilled_at_ms = ?, full_at_ms = ?
  WHERE api_key_id = ? AND tokens = ? AND refilled_at_ms = ? AND full_at_ms = ?
  RETURNING api_key_id`

/** The per-key token buckets the rate limiter leases from (docs/operations.md#rate-limits-across-nodes). */
const rateBucketQueries = (
  sql: Sql,
  thread: Option.Option<StoreWriterThread["Type"]>
): Pick<AccessStoreService, "lockRateBucket" | "saveRateBucket" | "swapRateBucket" | "purgeRateBuckets"> => ({
  // One statement creates the row or takes its lock and reads it: the no-op update of a conflict
  // locks the row on PostgreSQL and returns it as it was.
  lockRateBucket: (apiKeyId, initial) =>
    sql`INSERT INTO issuing_rate_buckets (api_key_id, tokens, refilled_at_ms, full_at_ms)
        VALUES (${apiKeyId}, ${initial.tokens}, ${initial.refilledAtMs}, ${initial.fullAtMs})
        ON CONFLICT (api_key_id) DO UPDATE SET api_key_id = excluded.api_key_id
        RETURNING tokens, refilled_at_ms, full_at_ms`.pipe(
      Effect.map((rows) => ({
        tokens: Number(rows[0]!.tokens),
        refilledAtMs: toInt(rows[0]!.refilled_at_ms),
        fullAtMs: toInt(rows[0]!.full_at_ms)
      }))
    ),
  saveRateBucket: (apiKeyId, bucket) =>
    sql`UPDATE issuing_rate_buckets
        SET tokens = ${bucket.tokens}, refilled_at_ms = ${bucket.refilledAtMs}, full_at_ms = ${bucket.fullAtMs}
        WHERE api_key_id = ${apiKeyId}`.pipe(Effect.asVoid),
  // Compared field by field: the numbers were written from (or read into) these same doubles, so
  // an unchanged row is equal to them exactly. Where the store has a writer thread (SQLite's), the
  // lease commits there while the process's writes do: on the main connection its fsync stopped the
  // event loop, and its commit emptied the thread's page cache (docs/decisions.md#sqlite-the-writer-threads-page-reads).
  swapRateBucket: (apiKeyId, expected, next) =>
    Option.match(thread, {
      onNone: () =>
        sql`UPDATE issuing_rate_buckets
            SET tokens = ${next.tokens}, refilled_at_ms = ${next.refilledAtMs}, full_at_ms = ${next.fullAtMs}
            WHERE api_key_id = ${apiKeyId} AND tokens = ${expected.tokens} AND refilled_at_ms = ${expected.refilledAtMs}
              AND full_at_ms = ${expected.fullAtMs}
            RETURNING api_key_id`,
      onSome: (writer) =>
        Effect.map(
          writer.transaction(
            [
              [
                SWAP_RATE_BUCKET_SQLITE,
                [next.tokens, next.refilledAtMs, next.fullAtMs, apiKeyId, expected.tokens, expected.refilledAtMs, expected.fullAtMs]
              ]
            ],
            { followWrites: true }
          ),
          (rows) => rows[0]!
        )
    }).pipe(Effect.map((rows) => rows.length === 1)),
  // Hourly, over a table of one row per key, grant and portal session of the last day: a scan, no index.
  purgeRateBuckets: (beforeMs) =>
    sql`DELETE FROM issuing_rate_buckets WHERE refilled_at_ms < ${beforeMs} RETURNING api_key_id`.pipe(Effect.map((rows) => rows.length))
})

/** The access port over SqlClient, one SQL text for both dialects. */
export const SqlAccessStoreLive = Layer.effect(
  AccessStore,
  Effect.gen(function* () {
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const thread = yield* Effect.serviceOption(StoreWriterThread)
    return { ...programQueries(sql), ...keyQueries(sql), ...rateBucketQueries(sql, thread) }
  })
)
