import type { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { storedEventCode } from "../cards/ResponseCodes.js"
import { toInt, toIso } from "../platform/Rows.js"
import { inWindow, listTotal, maintained } from "../sql/ListCounts.js"
import { createdConditions } from "../sql/OrderBy.js"
import type { LedgerStoreService, TransactionFilter } from "./LedgerStore.js"
import { TRANSACTION_ORDER_FIELDS } from "./OrderFields.js"
import {
  type CardEvent,
  type Merchant,
  type RequestHistoryEntry,
  type Transaction,
  type TransactionStatus,
  TRANSACTION_STATUSES
} from "./Records.js"
import { type LedgerQueries, ledgerPage, type MergedList, withinCreated } from "./SqlLedgerQueries.js"

const toTransaction = (row: any): Transaction => ({
  id: row.id,
  object: "transaction",
  program_id: row.program_id,
  status: row.status as TransactionStatus,
  amount: toInt(row.amount_minor),
  currency: row.currency,
  card_id: row.card_id ?? null,
  // Card transactions only; a transfer-driven one's transfers name its accounts.
  financial_account_id: row.card_id === null || row.card_id === undefined ? null : (row.financial_account_id ?? null),
  decline_reason: row.decline_reason ?? null,
  mcc: row.mcc ?? null,
  merchant_name: row.merchant_name ?? null,
  merchant: row.merchant === null || row.merchant === undefined ? null : (JSON.parse(row.merchant) as Merchant),
  network_transaction_id: row.network_transaction_id ?? null,
  ...cardFields(row),
  created_at: toIso(row.created_at),
  updated_at: toIso(row.updated_at)
})

/** A JSON array column (text on both stores). */
const jsonArray = (value: unknown) => (typeof value === "string" ? JSON.parse(value) : (value ?? []))

/** The card transaction's lifecycle fields; null amounts for a transfer-driven transaction. */
const cardFields = (row: any) => {
  const card = row.card_id !== null && row.card_id !== undefined
  return {
    authorized_amount: card ? toInt(row.authorized_minor ?? row.amount_minor) : null,
    pending_amount: card ? toInt(row.pending_minor ?? 0) : null,
    settled_amount: card ? toInt(row.settled_minor ?? 0) : null,
    // NULL until the transaction's first dispute (migration 0690 adds the column without a default).
    disputed_amount: card ? toInt(row.disputed_minor ?? 0) : null,
    expires_at: row.expires_at === null || row.expires_at === undefined ? null : toIso(row.expires_at),
    ...cardHistory(jsonArray(row.card_events), jsonArray(row.request_history))
  }
}

/**
 * The card events and decisions as stored; an event stored before events kept their response
 * code gets the one what was stored tells (`storedEventCode`), so every reader sees the field.
 */
const cardHistory = (events: ReadonlyArray<any>, history: ReadonlyArray<RequestHistoryEntry>) => ({
  card_events: events.map(
    (event): CardEvent => (event.response_code === undefined ? { ...event, response_code: storedEventCode(event, history.length) } : event)
  ),
  request_history: history
})

/** The columns of a transaction row (both stores), as `issuing_post_card_message` and the inserts take them. */
export const transactionRow = (t: Transaction, financialAccountId: string | null) => ({
  id: t.id,
  program_id: t.program_id,
  amount_minor: t.amount,
  currency: t.currency,
  card_id: t.card_id,
  decline_reason: t.decline_reason,
  mcc: t.mcc,
  merchant_name: t.merchant_name,
  merchant: t.merchant === null ? null : JSON.stringify(t.merchant),
  network_transaction_id: t.network_transaction_id,
  created_at: t.created_at,
  updated_at: t.updated_at,
  status: t.status,
  authorized_minor: t.authorized_amount,
  pending_minor: t.pending_amount ?? 0,
  settled_minor: t.settled_amount ?? 0,
  financial_account_id: financialAccountId,
  expires_at: t.expires_at,
  card_events: JSON.stringify(t.card_events),
  request_history: JSON.stringify(t.request_history)
})

/** Transactions: inserted by the posting, read, settled and expired here. */
export const transactionStatements = (q: LedgerQueries) => {
  const { forUpdate, sql, where } = q
  return {
    insertTransaction: (t) =>
      sql`INSERT INTO issuing_transactions ${sql.insert(transactionRow(t, t.financial_account_id))}`.pipe(Effect.asVoid),

    findTransaction: (programId, transactionId, lock) =>
      sql`SELECT * FROM issuing_transactions WHERE id = ${transactionId} AND program_id = ${programId} ${forUpdate(lock)}`.pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toTransaction))
      ),

    findTransactionsByNetworkId: (networkTransactionId) =>
      sql`SELECT * FROM issuing_transactions WHERE network_transaction_id = ${networkTransactionId} LIMIT 100`.pipe(
        Effect.map((rows) => rows.map(toTransaction))
      ),

    setTransactionStatus: (transactionId, status, at) =>
      sql`UPDATE issuing_transactions SET status = ${status}, updated_at = ${at} WHERE id = ${transactionId}`.pipe(Effect.asVoid),

    listTransactions: (programId, filter, window) => {
      const all = where([
        sql`program_id = ${programId}`,
        filter.status !== undefined && sql`status = ${filter.status}`,
        filter.card_id !== undefined && sql`card_id = ${filter.card_id}`
      ])
      // Newest or oldest first without a card: a range of the program's index or its status's.
      // Otherwise ranges merged (mergedPage): a card's one, or one per status the filter allows.
      const allMerged =
        filter.card_id !== undefined
          ? cardTransactions(sql, programId, { ...filter, card_id: filter.card_id })
          : TRANSACTION_ORDER_FIELDS.columns[window.orderBy] !== "created_at"
            ? programTransactions(sql, programId, filter)
            : null
      const { condition, merged } = withinCreated(sql, createdConditions(sql, filter.created), all, allMerged)
      const counted = maintained("transactions", programId, filter, {
        status: filter.status !== undefined ? [filter.status] : TRANSACTION_STATUSES
      })
      return Effect.all({
        rows: ledgerPage(sql, window, TRANSACTION_ORDER_FIELDS, "issuing_transactions", condition, merged).pipe(
          Effect.map((rows) => rows.map(toTransaction))
        ),
        total: listTotal(
          sql,
          filter.created !== undefined ? inWindow("issuing_transactions", counted, allMerged?.ranges ?? [all], filter.created) : counted
        )
      })
    },

    claimExpiredHolds: (now, limit) =>
      sql`SELECT * FROM issuing_transactions
          WHERE status = 'PENDING' AND expires_at IS NOT NULL AND expires_at <= ${now}
          ORDER BY expires_at, id LIMIT ${limit}
          ${sql.onDialectOrElse({ pg: () => sql.literal("FOR UPDATE SKIP LOCKED"), orElse: () => sql.literal("") })}`.pipe(
        Effect.map((rows) => rows.map(toTransaction))
      )
  } satisfies Partial<LedgerStoreService>
}

/**
 * A card's transactions in any order, with or without `status`: ranges of
 * `issuing_transactions_by_card_status[_update]` (card, status, order column, id), partial indexes
 * of the transactions that have a card (migrations 0450 and 0691): the status's one range, or one per
 * status (5) merged. A card's transactions are all of its program, so the ranges need no program
 * condition; the page's rows are read with the program (another program's card lists nothing).
 */
const cardTransactions = (
  sql: SqlClient.SqlClient,
  programId: string,
  filter: TransactionFilter & { readonly card_id: string }
): MergedList => ({
  table: "issuing_transactions",
  programId,
  ranges: (filter.status !== undefined ? [filter.status] : TRANSACTION_STATUSES).map(
    (status) => sql`card_id = ${filter.card_id} AND status = ${status}`
  ),
  member: sql.and([
    sql`(card_id || '') = ${filter.card_id}`,
    ...(filter.status !== undefined ? [sql`(status || '') = ${filter.status}`] : [])
  ])
})

/**
 * The program's transactions by updated_at: ranges of `issuing_transactions_by_status_update`
 * (program, status, updated_at, id), the filter's status or one per status (5; the closed union of
 * Records.ts).
 */
const programTransactions = (sql: SqlClient.SqlClient, programId: string, filter: TransactionFilter): MergedList => ({
  table: "issuing_transactions",
  programId,
  ranges: (filter.status !== undefined ? [filter.status] : TRANSACTION_STATUSES).map(
    (status) => sql`program_id = ${programId} AND status = ${status}`
  ),
  member: filter.status !== undefined ? sql`(status || '') = ${filter.status}` : null
})
