import type { SqlClient } from "@effect/sql"
import { liveCreator } from "../access/SessionCreator.js"
import { Effect, Option } from "effect"
import type { EventType } from "../events/Records.js"
import { fromJson, toIso } from "../platform/Rows.js"
import type { StoredPortalSession } from "./Records.js"
import type { WebhookStoreService } from "./WebhookStore.js"

type Sql = SqlClient.SqlClient

const toPortalSession = (row: any): StoredPortalSession => ({
  id: row.id,
  program_id: row.program_id,
  token_hash: row.token_hash,
  api_key_id: row.api_key_id,
  scope_tag: row.scope_tag,
  allowed_event_types: fromJson<Array<EventType>>(row.allowed_event_types),
  created_at: toIso(row.created_at),
  expires_at: toIso(row.expires_at)
})

/** Endpoint portal sessions (token hashes only), one SQL text for both dialects. */
export const portalSessionStatements = (
  sql: Sql
): Pick<WebhookStoreService, "insertPortalSession" | "findPortalSession" | "purgePortalSessions"> => ({
  insertPortalSession: (session) =>
    sql`INSERT INTO issuing_webhook_portal_sessions
          (id, program_id, token_hash, api_key_id, scope_tag, allowed_event_types, created_at, expires_at)
        VALUES (${session.id}, ${session.program_id}, ${session.token_hash}, ${session.api_key_id}, ${session.scope_tag},
                ${JSON.stringify(session.allowed_event_types)}, ${session.created_at}, ${session.expires_at})`.pipe(Effect.asVoid),
  // Read through its creator on every use, as embed sessions are: a key's sessions die with the key,
  // an access token's (api_key_id holds its grant's id) with the grant, its client or the key that
  // consented to it. A viewer key could not have created one (a POST), so no right is checked here.
  findPortalSession: (tokenHash) => {
    const creator = liveCreator(sql, sql`k.role <> ${"viewer"}`)
    return sql`SELECT s.* FROM issuing_webhook_portal_sessions s ${creator.joins}
               WHERE s.token_hash = ${tokenHash} AND ${creator.condition}`.pipe(
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toPortalSession))
    )
  },
  purgePortalSessions: (before) =>
    sql`DELETE FROM issuing_webhook_portal_sessions WHERE expires_at < ${before} RETURNING id`.pipe(Effect.map((rows) => rows.length))
})
