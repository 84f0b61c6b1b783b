import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import { toInt, toIso, toIsoOrNull } from "../platform/Rows.js"
import { countKey, listTotal, maintained } from "../sql/ListCounts.js"
import { pageRows } from "../sql/OrderBy.js"
import { DisputeStore, type DisputeStoreService } from "./DisputeStore.js"
import { DISPUTE_ORDER_FIELDS } from "./OrderFields.js"
import type { Dispute, DisputeReason, DisputeStatus } from "./Records.js"

/** A dispute row, decoded alike from both dialects. */
const toDispute = (row: any): Dispute => ({
  id: row.id,
  object: "dispute",
  program_id: row.program_id,
  transaction_id: row.transaction_id,
  amount: toInt(row.amount_minor),
  currency: row.currency,
  reason: row.reason as DisputeReason,
  explanation: row.explanation ?? null,
  status: row.status as DisputeStatus,
  provisional_credit_transfer_id: row.provisional_credit_transfer_id,
  reversal_transfer_id: row.reversal_transfer_id ?? null,
  created_at: toIso(row.created_at),
  updated_at: toIsoOrNull(row.updated_at)!
})

/** The count keys of a dispute: every combination of its two filters (any value or its own). */
const countKeys = (dispute: Dispute): ReadonlyArray<string> =>
  [undefined, dispute.transaction_id].flatMap((transaction_id) =>
    [undefined, dispute.status].map((status) => countKey("disputes", { transaction_id, status }))
  )

/**
 * Disputes over SqlClient, one SQL text for both dialects except the row lock and the count's
 * shard. The list's totals are kept here, in the transaction of the write (the other lists' are
 * kept by triggers; a dispute is written in two places only, so its two writes count it), in the
 * same `issuing_list_counts` rows and keys `listTotal` reads.
 */
export const SqlDisputeStoreLive = Layer.effect(
  DisputeStore,
  Effect.gen(function* () {
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const forUpdate = (lock: boolean) =>
      lock ? sql.onDialectOrElse({ pg: () => sql.literal("FOR UPDATE"), orElse: () => sql.literal("") }) : sql.literal("")
    // PostgreSQL: the backend's shard, as the counting triggers choose it (SQLite has one writer: shard 0).
    const shard = sql.onDialectOrElse({ pg: () => sql.literal("pg_backend_pid() % 16"), orElse: () => sql.literal("0") })
    /** Adds `delta` to each key's count, keys in order (two writers lock the count rows in the same order). */
    const count = (programId: string, changes: ReadonlyArray<readonly [string, number]>) => {
      const sorted = [...changes].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      return sql`INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
          VALUES ${sql.csv(sorted.map(([key, delta]) => sql`('disputes', ${programId}, ${key}, ${shard}, ${delta})`))}
          ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n`.pipe(Effect.asVoid)
    }

    const store: DisputeStoreService = {
      claimDisputable: (transactionId, amountMinor, at) =>
        sql`UPDATE issuing_transactions SET disputed_minor = COALESCE(disputed_minor, 0) + ${amountMinor}, updated_at = ${at}
            WHERE id = ${transactionId} AND settled_minor - COALESCE(disputed_minor, 0) >= ${amountMinor}
            RETURNING id`.pipe(Effect.map((rows) => rows.length === 1)),

      insertDispute: (dispute) =>
        Effect.zipRight(
          sql`INSERT INTO issuing_disputes
                (id, program_id, transaction_id, amount_minor, currency, reason, explanation, status,
                 provisional_credit_transfer_id, reversal_transfer_id, created_at, updated_at)
              VALUES (${dispute.id}, ${dispute.program_id}, ${dispute.transaction_id}, ${dispute.amount}, ${dispute.currency},
                      ${dispute.reason}, ${dispute.explanation}, ${dispute.status}, ${dispute.provisional_credit_transfer_id},
                      ${dispute.reversal_transfer_id}, ${dispute.created_at}, ${dispute.updated_at})`,
          count(
            dispute.program_id,
            countKeys(dispute).map((key) => [key, 1] as const)
          )
        ),

      findDispute: (programId, disputeId, lock) =>
        sql`SELECT * FROM issuing_disputes WHERE id = ${disputeId} AND program_id = ${programId} ${forUpdate(lock)}`.pipe(
          Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toDispute))
        ),

      resolveDispute: (dispute, previous) =>
        Effect.zipRight(
          sql`UPDATE issuing_disputes SET status = ${dispute.status}, reversal_transfer_id = ${dispute.reversal_transfer_id},
                updated_at = ${dispute.updated_at}
              WHERE id = ${dispute.id}`,
          count(dispute.program_id, [
            ...countKeys(previous)
              .filter((key) => key.endsWith(`=${previous.status}`))
              .map((key) => [key, -1] as const),
            ...countKeys(dispute)
              .filter((key) => key.endsWith(`=${dispute.status}`))
              .map((key) => [key, 1] as const)
          ])
        ),

      walletAccountOf: (transactionId) =>
        sql`SELECT COALESCE(t.financial_account_id,
                  (SELECT w.financial_account_id FROM issuing_cards c JOIN issuing_wallets w ON w.id = c.wallet_id WHERE c.id = t.card_id))
                AS account_id
            FROM issuing_transactions t WHERE t.id = ${transactionId}`.pipe(
          Effect.map((rows) => Option.fromNullable(rows[0]?.account_id as string | null | undefined))
        ),

      listDisputes: (programId, filter, window) => {
        const where = sql.and([
          sql`program_id = ${programId}`,
          ...(filter.transaction_id !== undefined ? [sql`transaction_id = ${filter.transaction_id}`] : []),
          ...(filter.status !== undefined ? [sql`status = ${filter.status}`] : [])
        ])
        return Effect.all({
          rows: pageRows(sql, window, DISPUTE_ORDER_FIELDS, {
            select: sql.literal("*"),
            from: sql.literal("issuing_disputes"),
            where
          }).pipe(Effect.map((rows) => rows.map(toDispute))),
          total: listTotal(sql, maintained("disputes", programId, filter))
        })
      }
    }
    return store
  })
)
