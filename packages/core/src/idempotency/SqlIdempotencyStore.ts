import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { toInt, toIso } from "../platform/Rows.js"
import { type Claim, type ClaimRequest, IdempotencyStore } from "./IdempotencyStore.js"

/** Claims renewed per statement. */
const RENEW_BATCH = 200

const chunks = <A>(items: ReadonlyArray<A>, size: number): Array<ReadonlyArray<A>> =>
  Array.from({ length: Math.ceil(items.length / size) }, (_, index) => items.slice(index * size, (index + 1) * size))

/** The idempotency port over SqlClient, one SQL text for both dialects. */
export const SqlIdempotencyStoreLive = Layer.effect(
  IdempotencyStore,
  Effect.gen(function* () {
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()

    const insertClaim = (request: ClaimRequest) =>
      sql`INSERT INTO issuing_idempotency_keys
            (organization_id, idempotency_key, fingerprint, locked_at, created_at, claim_token, expires_at)
          VALUES (${request.organizationId}, ${request.key}, ${request.fingerprint}, ${request.now}, ${request.now},
                  ${request.token}, ${request.expiresAt})
          ON CONFLICT (organization_id, idempotency_key) DO NOTHING
          RETURNING idempotency_key`.pipe(Effect.map((rows) => rows.length === 1))

    /** Past retention: after its own end, or (written by an older release, which sets none) created before the cut. */
    const expired = (row: any, request: ClaimRequest) =>
      row.expires_at === null || row.expires_at === undefined
        ? toIso(row.created_at) < request.expiredBefore
        : toIso(row.expires_at) <= request.now

    return {
      claim: (request) =>
        Effect.gen(function* () {
          const { organizationId, key, fingerprint, now, token } = request
          const insert = () => insertClaim(request)
          if (yield* insert()) return { _tag: "Claimed" } as Claim
          const rows = yield* sql`SELECT * FROM issuing_idempotency_keys
                                  WHERE organization_id = ${organizationId} AND idempotency_key = ${key}`
          const row = rows[0]
          if (row === undefined) {
            // Deleted between our insert and read: try once more, then report it as running.
            return (yield* insert()) ? ({ _tag: "Claimed" } as Claim) : ({ _tag: "InProgress" } as Claim)
          }
          if (expired(row, request)) {
            yield* sql`DELETE FROM issuing_idempotency_keys
                       WHERE organization_id = ${organizationId} AND idempotency_key = ${key}
                         AND created_at = ${row.created_at}`
            return (yield* insert()) ? ({ _tag: "Claimed" } as Claim) : ({ _tag: "InProgress" } as Claim)
          }
          if (row.fingerprint !== fingerprint && !request.olderFingerprints.includes(row.fingerprint as string)) {
            return { _tag: "Mismatch" } as Claim
          }
          if (row.status_code === null) {
            if (toIso(row.locked_at) >= request.staleBefore) return { _tag: "InProgress" } as Claim
            // Compare-and-set on the lock time read: a renewal or another takeover in between wins.
            const taken = yield* sql`UPDATE issuing_idempotency_keys SET locked_at = ${now}, claim_token = ${token}
                                     WHERE organization_id = ${organizationId} AND idempotency_key = ${key}
                                       AND status_code IS NULL AND locked_at = ${row.locked_at}
                                     RETURNING idempotency_key`
            return taken.length === 1 ? ({ _tag: "Claimed" } as Claim) : ({ _tag: "InProgress" } as Claim)
          }
          return {
            _tag: "Replay",
            response: { status: toInt(row.status_code), sealedBody: row.response_body as string }
          } as Claim
        }),
      complete: (organizationId, key, token, response) =>
        sql`UPDATE issuing_idempotency_keys
            SET status_code = ${response.status}, response_body = ${response.sealedBody}
            WHERE organization_id = ${organizationId} AND idempotency_key = ${key}
              AND claim_token = ${token} AND status_code IS NULL
            RETURNING idempotency_key`.pipe(Effect.map((rows) => rows.length === 1)),
      // Each claim by its primary key (and token): both dialects use the key's index for the ORs. On
      // PostgreSQL a row locked now is skipped rather than waited for: its request is storing its
      // response (or a retry is taking it over), and a renewal never waits on a commit.
      renew: (claims, now) =>
        Effect.forEach(
          chunks(claims, RENEW_BATCH),
          (batch) => {
            const held = sql.or(
              batch.map(
                (claim) =>
                  sql`(organization_id = ${claim.organizationId} AND idempotency_key = ${claim.key} AND claim_token = ${claim.token})`
              )
            )
            return sql.onDialectOrElse({
              pg: () =>
                sql`UPDATE issuing_idempotency_keys SET locked_at = ${now}
                    WHERE (organization_id, idempotency_key) IN (
                      SELECT organization_id, idempotency_key FROM issuing_idempotency_keys
                      WHERE status_code IS NULL AND (${held}) FOR UPDATE SKIP LOCKED)`,
              orElse: () => sql`UPDATE issuing_idempotency_keys SET locked_at = ${now} WHERE status_code IS NULL AND (${held})`
            })
          },
          { discard: true }
        ),
      release: (organizationId, key, token) =>
        sql`DELETE FROM issuing_idempotency_keys
            WHERE organization_id = ${organizationId} AND idempotency_key = ${key} AND status_code IS NULL
              AND claim_token = ${token}`.pipe(Effect.asVoid),
      // Each through its own index: the purge reads what it deletes, not the records kept longer.
      purge: (now, unexpiringCreatedBefore) =>
        Effect.zipWith(
          sql`DELETE FROM issuing_idempotency_keys WHERE expires_at <= ${now} RETURNING idempotency_key`,
          sql`DELETE FROM issuing_idempotency_keys WHERE expires_at IS NULL AND created_at < ${unexpiringCreatedBefore}
              RETURNING idempotency_key`,
          (expired, unexpiring) => expired.length + unexpiring.length
        )
    }
  })
)
