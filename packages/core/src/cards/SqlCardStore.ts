import { bounded, listTotal, maintained } from "../sql/ListCounts.js"
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import { metadataOf, metadataText } from "../platform/Metadata.js"
import { liveCreator } from "../access/SessionCreator.js"
import { boolParam, fromJson, toInt, toIso } from "../platform/Rows.js"
import { mergedPageRows } from "../sql/MergedRanges.js"
import { pageRows } from "../sql/OrderBy.js"
import { CARD_AUDIT_ORDER_FIELDS, CARD_ORDER_FIELDS } from "./OrderFields.js"
import { type CardAuditFilter, type CardFilter, CardStore, type CardStoreService } from "./CardStore.js"
import {
  CardAuditAction,
  type CardAuditRecord,
  type CardRecord,
  type CardState,
  type CardType,
  type SpendingLimit,
  spendingPeriodOf,
  type StoredEmbedSession
} from "./Records.js"
import type { WindowedInterval } from "./SpendRules.js"

const toCardRecord = (row: any): CardRecord => {
  const limits = fromJson<Array<SpendingLimit>>(row.spending_limits)
  return {
    card: {
      id: row.id,
      object: "card",
      program_id: row.program_id,
      wallet_id: row.wallet_id,
      financial_account_id: row.financial_account_id,
      cardholder_id: row.cardholder_id ?? null,
      type: row.type as CardType,
      state: row.state as CardState,
      last_four: row.last_four,
      exp_month: toInt(row.exp_month),
      exp_year: toInt(row.exp_year),
      allowed_mcc_codes: fromJson<Array<string>>(row.allowed_mcc_codes),
      blocked_mcc_codes: fromJson<Array<string>>(row.blocked_mcc_codes),
      allowed_merchant_countries: fromJson<Array<string>>(row.allowed_merchant_countries),
      blocked_merchant_countries: fromJson<Array<string>>(row.blocked_merchant_countries),
      // Stored as decoded at issuance or PATCH: known intervals, positive amounts and counts.
      spending_limits: limits,
      spending_period: spendingPeriodOf(limits),
      metadata: metadataOf(row.metadata),
      created_at: toIso(row.created_at),
      updated_at: toIso(row.updated_at)
    },
    sealed: {
      pan_sealed: row.pan_sealed,
      cvv_sealed: row.cvv_sealed,
      pan_fingerprint: row.pan_fingerprint,
      vault_key_id: row.vault_key_id
    }
  }
}

const toSession = (row: any): StoredEmbedSession => ({
  id: row.id,
  program_id: row.program_id,
  card_id: row.card_id,
  token_hash: row.token_hash,
  api_key_id: row.api_key_id,
  created_at: toIso(row.created_at),
  expires_at: toIso(row.expires_at)
})

const toAudit = (row: any): CardAuditRecord => ({
  id: row.id,
  object: "card_audit_record",
  program_id: row.program_id,
  api_key_id: row.api_key_id,
  card_id: row.card_id,
  action: row.action as CardAuditAction,
  request_id: row.request_id,
  client_ip: row.client_ip ?? null,
  created_at: toIso(row.created_at)
})

type Sql = SqlClient.SqlClient

const first = (rows: ReadonlyArray<any>) => Option.map(Option.fromNullable(rows[0]), toCardRecord)

const cardWhere = (sql: Sql, programId: string, filter: CardFilter) => {
  const parts = [sql`program_id = ${programId}`]
  if (filter.walletId !== undefined) parts.push(sql`wallet_id = ${filter.walletId}`)
  if (filter.state !== undefined) parts.push(sql`state = ${filter.state}`)
  if (filter.lastFour !== undefined) parts.push(sql`last_four = ${filter.lastFour}`)
  return sql.and(parts)
}

const auditWhere = (sql: Sql, programId: string, filter: CardAuditFilter) => {
  const parts = [sql`program_id = ${programId}`]
  if (filter.cardId !== undefined) parts.push(sql`card_id = ${filter.cardId}`)
  if (filter.action !== undefined) parts.push(sql`action = ${filter.action}`)
  return sql.and(parts)
}

/** Cards: rows, lookups by id and by fingerprint, lists. */
const cardQueries = (
  sql: Sql
): Pick<
  CardStoreService,
  "insertCard" | "findCard" | "lockCard" | "listCards" | "findByFingerprints" | "findByFingerprintsInAnyProgram" | "fingerprintTaken"
> => ({
  insertCard: ({ card, sealed }) =>
    sql`INSERT INTO issuing_cards
          (id, program_id, wallet_id, financial_account_id, cardholder_id, type, state, last_four, exp_month, exp_year,
           pan_sealed, cvv_sealed, pan_fingerprint, vault_key_id, allowed_mcc_codes, blocked_mcc_codes,
           allowed_merchant_countries, blocked_merchant_countries, spending_limits, metadata, created_at, updated_at)
        VALUES (${card.id}, ${card.program_id}, ${card.wallet_id}, ${card.financial_account_id}, ${card.cardholder_id}, ${card.type},
                ${card.state}, ${card.last_four}, ${card.exp_month}, ${card.exp_year},
                ${sealed.pan_sealed}, ${sealed.cvv_sealed}, ${sealed.pan_fingerprint}, ${sealed.vault_key_id},
                ${JSON.stringify(card.allowed_mcc_codes)}, ${JSON.stringify(card.blocked_mcc_codes)},
                ${JSON.stringify(card.allowed_merchant_countries)}, ${JSON.stringify(card.blocked_merchant_countries)},
                ${JSON.stringify(card.spending_limits)},
                ${metadataText(card.metadata)}, ${card.created_at}, ${card.updated_at})`.pipe(Effect.asVoid),
  findCard: (programId, cardId) =>
    sql`SELECT * FROM issuing_cards WHERE id = ${cardId} AND program_id = ${programId}`.pipe(Effect.map(first)),
  lockCard: (programId, cardId) =>
    sql
      .onDialectOrElse({
        pg: () => sql`SELECT * FROM issuing_cards WHERE id = ${cardId} AND program_id = ${programId} FOR UPDATE`,
        orElse: () => sql`SELECT * FROM issuing_cards WHERE id = ${cardId} AND program_id = ${programId}`
      })
      .pipe(Effect.map(first)),
  listCards: (programId, filter, window) =>
    Effect.all({
      rows: pageRows(sql, window, CARD_ORDER_FIELDS, {
        select: sql.literal("*"),
        from: sql.literal("issuing_cards"),
        where: cardWhere(sql, programId, filter)
      }).pipe(Effect.map((rows) => rows.map(toCardRecord))),
      // The cards with given last four are a few of the program's (one in ten thousand): counted along their index's range.
      total: listTotal(
        sql,
        filter.lastFour !== undefined
          ? bounded("issuing_cards", cardWhere(sql, programId, filter))
          : maintained("cards", programId, { wallet_id: filter.walletId, state: filter.state })
      )
    }),
  findByFingerprints: (programId, fingerprints) =>
    fingerprints.length === 0
      ? Effect.succeed(Option.none())
      : sql`SELECT * FROM issuing_cards
            WHERE program_id = ${programId} AND ${sql.in("pan_fingerprint", fingerprints)}`.pipe(Effect.map(first)),
  findByFingerprintsInAnyProgram: (fingerprints) =>
    fingerprints.length === 0
      ? Effect.succeed(Option.none())
      : sql`SELECT * FROM issuing_cards WHERE ${sql.in("pan_fingerprint", fingerprints)} LIMIT 1`.pipe(Effect.map(first)),
  fingerprintTaken: (fingerprints) =>
    fingerprints.length === 0
      ? Effect.succeed(false)
      : sql`SELECT 1 AS hit FROM issuing_cards WHERE ${sql.in("pan_fingerprint", fingerprints)} LIMIT 1`.pipe(
          Effect.map((rows) => rows.length > 0)
        )
})

/** Compare-and-set changes of a card: state, secrets, and re-sealing under another vault key. */
const changeQueries = (
  sql: Sql
): Pick<CardStoreService, "transition" | "updateCard" | "replaceSecrets" | "cardsToReseal" | "reseal" | "sealedSamples"> => ({
  transition: (programId, cardId, from, to, at) =>
    sql`UPDATE issuing_cards SET state = ${to}, updated_at = ${at}
        WHERE id = ${cardId} AND program_id = ${programId} AND ${sql.in("state", from)}
        RETURNING *`.pipe(Effect.map(first)),
  updateCard: (programId, cardId, change, at) =>
    sql`UPDATE issuing_cards
        SET allowed_mcc_codes = ${JSON.stringify(change.allowed_mcc_codes)},
            blocked_mcc_codes = ${JSON.stringify(change.blocked_mcc_codes)},
            allowed_merchant_countries = ${JSON.stringify(change.allowed_merchant_countries)},
            blocked_merchant_countries = ${JSON.stringify(change.blocked_merchant_countries)},
            spending_limits = ${JSON.stringify(change.spending_limits)},
            metadata = ${metadataText(change.metadata)},
            updated_at = ${at}
        WHERE id = ${cardId} AND program_id = ${programId} AND state <> 'CLOSED'
        RETURNING *`.pipe(Effect.map(first)),
  replaceSecrets: (programId, cardId, from, secrets, at) =>
    sql`UPDATE issuing_cards
        SET pan_sealed = ${secrets.sealed.pan_sealed}, cvv_sealed = ${secrets.sealed.cvv_sealed},
            pan_fingerprint = ${secrets.sealed.pan_fingerprint}, vault_key_id = ${secrets.sealed.vault_key_id},
            last_four = ${secrets.last_four}, exp_month = ${secrets.exp_month}, exp_year = ${secrets.exp_year},
            updated_at = ${at}
        WHERE id = ${cardId} AND program_id = ${programId} AND ${sql.in("state", from)}
        RETURNING *`.pipe(Effect.map(first)),
  // Walks the primary key, so each batch reads from where the last one stopped.
  cardsToReseal: (currentKeyId, afterId, limit) =>
    sql`SELECT * FROM issuing_cards
        WHERE id > ${afterId}
          AND (vault_key_id <> ${currentKeyId} OR pan_sealed NOT LIKE 'v2.%' OR cvv_sealed NOT LIKE 'v2.%')
        ORDER BY id LIMIT ${limit}`.pipe(Effect.map((rows) => rows.map(toCardRecord))),
  // Ciphertexts carry fresh nonces, so equal text means nothing rewrote them since they were read.
  reseal: (cardId, previous, sealed) =>
    sql`UPDATE issuing_cards
        SET pan_sealed = ${sealed.pan_sealed}, cvv_sealed = ${sealed.cvv_sealed},
            pan_fingerprint = ${sealed.pan_fingerprint}, vault_key_id = ${sealed.vault_key_id}
        WHERE id = ${cardId} AND pan_sealed = ${previous.pan_sealed} AND cvv_sealed = ${previous.cvv_sealed}
        RETURNING id`.pipe(Effect.map((rows) => rows.length === 1)),
  // A loose index scan: each step asks the index for the next key id above the last one.
  sealedSamples: sql`WITH RECURSIVE vault_keys(key_id) AS (
        SELECT MIN(vault_key_id) FROM issuing_cards
        UNION ALL
        SELECT (SELECT MIN(vault_key_id) FROM issuing_cards WHERE vault_key_id > vault_keys.key_id)
        FROM vault_keys WHERE vault_keys.key_id IS NOT NULL
      )
      SELECT issuing_cards.* FROM vault_keys
      JOIN issuing_cards ON issuing_cards.id = (SELECT id FROM issuing_cards WHERE vault_key_id = vault_keys.key_id LIMIT 1)
      ORDER BY issuing_cards.vault_key_id`.pipe(Effect.map((rows) => rows.map(toCardRecord)))
})

/**
 * A card's spend per window (docs/card-transactions.md#running-totals): its transactions' open
 * holds plus what cleared, minus reversals and returns (both already taken off the pending and
 * settled amounts), and its approved authorizations not released whole; declined ones count
 * nothing. Read from `issuing_card_spend_totals`, which triggers keep per card, interval and
 * window of creation (migration 0751 of each store): one primary-key row per window asked,
 * whatever the card's history.
 */
const spendQueries = (sql: Sql): Pick<CardStoreService, "windowSpend"> => ({
  windowSpend: (cardId, windows) =>
    windows.length === 0
      ? Effect.succeed([])
      : sql`SELECT spend_interval, window_start, spent_minor, spent_count FROM issuing_card_spend_totals
            WHERE card_id = ${cardId}
              AND ${sql.or(windows.map((one) => sql`(spend_interval = ${one.interval} AND window_start = ${one.window})`))}`.pipe(
          Effect.map((rows) =>
            rows.map((row: any) => ({
              interval: row.spend_interval as WindowedInterval,
              window: row.window_start as string,
              spent_minor: toInt(row.spent_minor),
              spent_count: toInt(row.spent_count)
            }))
          )
        )
})

/** Embed sessions (token hashes only) and the card-data audit trail. */
const accessQueries = (
  sql: Sql
): Pick<
  CardStoreService,
  | "insertEmbedSession"
  | "findEmbedSession"
  | "deleteEmbedSessions"
  | "purgeEmbedSessions"
  | "insertAudit"
  | "lockPanSearches"
  | "recentSearches"
  | "listAudit"
> => ({
  insertEmbedSession: (session) =>
    sql`INSERT INTO issuing_card_embed_sessions (id, program_id, card_id, token_hash, api_key_id, created_at, expires_at)
        VALUES (${session.id}, ${session.program_id}, ${session.card_id}, ${session.token_hash},
                ${session.api_key_id}, ${session.created_at}, ${session.expires_at})`.pipe(Effect.asVoid),
  // Read through its creator on every use, in every process: a key's sessions die with the key (or
  // its card_display), an access token's (api_key_id holds its grant's id) with the grant, its
  // client or the key that consented to it.
  findEmbedSession: (tokenHash) => {
    const creator = liveCreator(sql, sql`k.card_display = ${boolParam(true)}`)
    return sql`SELECT s.* FROM issuing_card_embed_sessions s ${creator.joins}
               WHERE s.token_hash = ${tokenHash} AND ${creator.condition}`.pipe(
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toSession))
    )
  },
  deleteEmbedSessions: (cardId) => sql`DELETE FROM issuing_card_embed_sessions WHERE card_id = ${cardId}`.pipe(Effect.asVoid),
  purgeEmbedSessions: (before) =>
    sql`DELETE FROM issuing_card_embed_sessions WHERE expires_at < ${before} RETURNING id`.pipe(Effect.map((rows) => rows.length)),
  insertAudit: (record) =>
    sql`INSERT INTO issuing_card_audit_records
          (id, program_id, api_key_id, card_id, action, request_id, client_ip, created_at)
        VALUES (${record.id}, ${record.program_id}, ${record.api_key_id}, ${record.card_id}, ${record.action},
                ${record.request_id}, ${record.client_ip}, ${record.created_at})`.pipe(Effect.asVoid),
  lockPanSearches: (apiKeyId) =>
    sql.onDialectOrElse({
      pg: () => sql`SELECT pg_advisory_xact_lock(hashtext(${`issuing_pan_search:${apiKeyId}`}))`.pipe(Effect.asVoid),
      orElse: () => Effect.void
    }),
  recentSearches: (apiKeyId, since, limit, missesOnly) => {
    const parts = [sql`api_key_id = ${apiKeyId}`, sql`action = 'search_by_pan'`, sql`created_at >= ${since}`]
    if (missesOnly) parts.push(sql`card_id IS NULL`)
    return sql`SELECT created_at FROM issuing_card_audit_records WHERE ${sql.and(parts)}
               ORDER BY created_at DESC LIMIT ${limit}`.pipe(Effect.map((rows) => rows.map((row) => toIso(row.created_at))))
  },
  listAudit: (programId, filter, window) =>
    Effect.all({
      // Both indexes of audit records hold the action before created_at (migration 0410): with
      // `action` the list is one range, without it the merge of the four actions' ranges
      // (docs/operations.md#volume).
      rows: (filter.action === undefined
        ? mergedPageRows(sql, window, CARD_AUDIT_ORDER_FIELDS, {
            table: "issuing_card_audit_records",
            where: auditWhere(sql, programId, filter),
            column: "action",
            values: CardAuditAction.literals
          })
        : pageRows(sql, window, CARD_AUDIT_ORDER_FIELDS, {
            select: sql.literal("*"),
            from: sql.literal("issuing_card_audit_records"),
            where: auditWhere(sql, programId, filter)
          })
      ).pipe(Effect.map((rows) => rows.map(toAudit))),
      total: listTotal(sql, maintained("card_audit_records", programId, { card_id: filter.cardId, action: filter.action }))
    })
})

/** The card port over SqlClient, one SQL text for both dialects (row locks only where PostgreSQL needs them). */
export const SqlCardStoreLive = Layer.effect(
  CardStore,
  Effect.gen(function* () {
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    return { ...cardQueries(sql), ...changeQueries(sql), ...spendQueries(sql), ...accessQueries(sql) }
  })
)
