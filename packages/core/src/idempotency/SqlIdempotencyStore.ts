import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { toInt, toIso } from "../platform/Rows.js"
import { type Claim, IdempotencyStore } from "./IdempotencyStore.js"

/** The idempotency port over SqlClient, one SQL text for both dialects. */
export const SqlIdempotencyStoreLive = Layer.effect(
  IdempotencyStore,
  Effect.gen(function* () {
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()

    const insert = (organizationId: string, key: string, fingerprint: string, now: string) =>
      sql`INSERT INTO issuing_idempotency_keys (organization_id, idempotency_key, fingerprint, locked_at, created_at)
          VALUES (${organizationId}, ${key}, ${fingerprint}, ${now}, ${now})
          ON CONFLICT (organization_id, idempotency_key) DO NOTHING
          RETURNING idempotency_key`.pipe(Effect.map((rows) => rows.length === 1))

    return {
      claim: (request) =>
        Effect.gen(function* () {
          const { organizationId, key, fingerprint, now } = request
          if (yield* insert(organizationId, key, fingerprint, now)) return { _tag: "Claimed" } as Claim
          const rows = yield* sql`SELECT * FROM issuing_idempotency_keys
                                  WHERE organization_id = ${organizationId} AND idempotency_key = ${key}`
          const row = rows[0]
          if (row === undefined) {
            // Deleted between our insert and read: try once more, then report it as running.
            return (yield* insert(organizationId, key, fingerprint, now))
              ? ({ _tag: "Claimed" } as Claim)
              : ({ _tag: "InProgress" } as Claim)
          }
          const createdAt = toIso(row.created_at)
          if (createdAt < request.expiredBefore) {
            yield* sql`DELETE FROM issuing_idempotency_keys
                       WHERE organization_id = ${organizationId} AND idempotency_key = ${key}
                         AND created_at = ${row.created_at}`
            return (yield* insert(organizationId, key, fingerprint, now))
              ? ({ _tag: "Claimed" } as Claim)
              : ({ _tag: "InProgress" } as Claim)
          }
          if (row.fingerprint !== fingerprint && !request.olderFingerprints.includes(row.fingerprint as string)) {
            return { _tag: "Mismatch" } as Claim
          }
          if (row.status_code === null) {
            if (toIso(row.locked_at) >= request.staleBefore) return { _tag: "InProgress" } as Claim
            const taken = yield* sql`UPDATE issuing_idempotency_keys SET locked_at = ${now}
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
      complete: (organizationId, key, response) =>
        sql`UPDATE issuing_idempotency_keys
            SET status_code = ${response.status}, response_body = ${response.sealedBody}
            WHERE organization_id = ${organizationId} AND idempotency_key = ${key}`.pipe(Effect.asVoid),
      release: (organizationId, key, claimedAt) =>
        sql`DELETE FROM issuing_idempotency_keys
            WHERE organization_id = ${organizationId} AND idempotency_key = ${key} AND status_code IS NULL
              AND locked_at = ${claimedAt}`.pipe(Effect.asVoid),
      purge: (createdBefore) =>
        sql`DELETE FROM issuing_idempotency_keys WHERE created_at < ${createdBefore} RETURNING idempotency_key`.pipe(
          Effect.map((rows) => rows.length)
        )
    }
  })
)
