import type { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { metadataOf } from "../platform/Metadata.js"
import { toInt, toIso } from "../platform/Rows.js"
import { bounded, inWindow, listTotal, maintained } from "../sql/ListCounts.js"
import { createdConditions } from "../sql/OrderBy.js"
import type { LedgerStoreService, TransferFilter } from "./LedgerStore.js"
import { TRANSFER_ORDER_FIELDS } from "./OrderFields.js"
import { statusesOfRail, TRANSFER_RAILS, TRANSFER_STATUSES, type Transfer, type TransferRail, type TransferStatus } from "./Records.js"
import { type LedgerQueries, ledgerPage, type MergedList, withinCreated } from "./SqlLedgerQueries.js"

const toTransfer = (row: any): Transfer => ({
  id: row.id,
  object: "transfer",
  program_id: row.program_id,
  transaction_id: row.transaction_id,
  payment_rail: row.payment_rail as TransferRail,
  amount: toInt(row.amount_minor),
  currency: row.currency,
  from_financial_account_id: row.from_financial_account_id,
  to_financial_account_id: row.to_financial_account_id,
  status: row.status as TransferStatus,
  description: row.description ?? null,
  metadata: metadataOf(row.metadata),
  return_code: row.return_code ?? null,
  return_reason: row.return_reason ?? null,
  created_at: toIso(row.created_at),
  updated_at: toIso(row.updated_at)
})

/** Transfers: inserted by the posting, read and settled here. */
export const transferStatements = (q: LedgerQueries) => {
  const { count, forUpdate, sql, where } = q
  return {
    countPendingTransfers: (transactionId) =>
      sql`SELECT COUNT(*) AS n FROM issuing_transfers WHERE transaction_id = ${transactionId} AND status = 'PENDING'`.pipe(
        Effect.map(count)
      ),

    findTransfer: (programId, transferId, lock) =>
      sql`SELECT * FROM issuing_transfers WHERE id = ${transferId} AND program_id = ${programId} ${forUpdate(lock)}`.pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toTransfer))
      ),

    setTransferStatus: (transferId, status, at) =>
      sql`UPDATE issuing_transfers SET status = ${status}, updated_at = ${at} WHERE id = ${transferId}`.pipe(Effect.asVoid),

    setTransferReturned: (transfer) =>
      sql`UPDATE issuing_transfers SET status = ${transfer.status}, return_code = ${transfer.return_code},
          return_reason = ${transfer.return_reason}, updated_at = ${transfer.updated_at}
        WHERE id = ${transfer.id}`.pipe(Effect.asVoid),

    listTransfers: (programId, filter, window) => {
      const all = where([
        sql`program_id = ${programId}`,
        filter.status !== undefined && sql`status = ${filter.status}`,
        filter.payment_rail !== undefined && sql`payment_rail = ${filter.payment_rail}`,
        filter.transaction_id !== undefined && sql`transaction_id = ${filter.transaction_id}`,
        filter.financial_account_id !== undefined &&
          sql`(from_financial_account_id = ${filter.financial_account_id} OR to_financial_account_id = ${filter.financial_account_id})`
      ])
      // A transaction's transfers are a few (their own index); the program's newest or oldest first
      // a range of its index; every other list ranges merged (mergedPage): an account's two sides,
      // or one per (status, rail) its filters allow.
      const allMerged =
        filter.transaction_id !== undefined
          ? null
          : filter.financial_account_id !== undefined
            ? accountTransfers(sql, programId, { ...filter, financial_account_id: filter.financial_account_id })
            : filter.status !== undefined ||
                filter.payment_rail !== undefined ||
                TRANSFER_ORDER_FIELDS.columns[window.orderBy] !== "created_at"
              ? programTransfers(sql, programId, filter)
              : null
      const { condition, merged } = withinCreated(sql, createdConditions(sql, filter.created), all, allMerged)
      const counted = maintained("transfers", programId, filter, {
        status: filter.status !== undefined ? [filter.status] : TRANSFER_STATUSES,
        payment_rail: filter.payment_rail !== undefined ? [filter.payment_rail] : TRANSFER_RAILS
      })
      return Effect.all({
        rows: ledgerPage(sql, window, TRANSFER_ORDER_FIELDS, "issuing_transfers", condition, merged).pipe(
          Effect.map((rows) => rows.map(toTransfer))
        ),
        total: listTotal(
          sql,
          filter.transaction_id !== undefined
            ? bounded("issuing_transfers", condition)
            : filter.created !== undefined
              ? inWindow("issuing_transfers", counted, allMerged?.ranges ?? [all], filter.created)
              : counted
        )
      })
    }
  } satisfies Partial<LedgerStoreService>
}

/**
 * An account's transfers in any order, with any of `status` and `payment_rail`: the ones it sends
 * and the ones it receives, per status and rail, are ranges of
 * `issuing_transfers_by_from_status_rail[_update]` / `_by_to_status_rail[…]` (account, status,
 * rail, order column, id; migrations 0450 and 0691), merged (`mergedPage`): one per side and per
 * (status, rail) pair the filters leave open that a transfer can have (`statusRailPairs`) — 2 with
 * both, 18 without. Without a rail most of those are empty for an account, and every range
 * merged costs each row a deep page skips one more merge step (20 made SQLite's deep page of the
 * volume bench's busy wallet 3× its 4 before), so for a deep page they are probed first and only
 * the ranges holding transfers merged (page 1 merges all 18: an empty range is one seek either way). The
 * ranges need no program condition: a transfer's two accounts are of its program, so an account's
 * transfers are all of the account's program, and the page's rows are read with the program (an
 * account of another program lists nothing). They need no test that the other side is another
 * account either: a transfer's two accounts differ (PostingRules.transferEntries), so the ranges
 * never share a transfer.
 */
const accountTransfers = (
  sql: SqlClient.SqlClient,
  programId: string,
  filter: TransferFilter & { readonly financial_account_id: string }
): MergedList => {
  const account = filter.financial_account_id
  return {
    table: "issuing_transfers",
    programId,
    ranges: (["from_financial_account_id", "to_financial_account_id"] as const).flatMap((side) =>
      statusRailPairs(filter).map(
        ([status, rail]) => sql`${sql.literal(side)} = ${account} AND status = ${status} AND payment_rail = ${rail}`
      )
    ),
    // An account uses a rail or two: without a rail filter, a deep page probes the ranges and
    // leaves the empty ones out, so it merges what the account holds (2 for a wallet that only
    // makes book transfers) rather than 18 ranges.
    probe: filter.payment_rail === undefined,
    member: sql.and([
      sql`(from_financial_account_id = ${account} OR to_financial_account_id = ${account})`,
      ...(filter.status !== undefined ? [sql`(status || '') = ${filter.status}`] : []),
      ...(filter.payment_rail !== undefined ? [sql`(payment_rail || '') = ${filter.payment_rail}`] : [])
    ])
  }
}

/**
 * The program's transfers with `status`, `payment_rail` or both, or by updated_at: ranges of
 * `issuing_transfers_by_status_rail[_update]` (program, status, rail, order column, id),
 * one per (status, rail) pair the filters allow that a transfer can have (`statusRailPairs`) — 1
 * with both, 9 with neither (migration 0400; the statuses and rails are the closed unions of
 * Records.ts, which the API decodes the filters with).
 */
const programTransfers = (sql: SqlClient.SqlClient, programId: string, filter: TransferFilter): MergedList => ({
  table: "issuing_transfers",
  programId,
  ranges: statusRailPairs(filter).map(([status, rail]) => sql`program_id = ${programId} AND status = ${status} AND payment_rail = ${rail}`),
  member: sql.and([
    ...(filter.status !== undefined ? [sql`(status || '') = ${filter.status}`] : []),
    ...(filter.payment_rail !== undefined ? [sql`(payment_rail || '') = ${filter.payment_rail}`] : [])
  ])
})

/**
 * The (status, rail) pairs a list of transfers reads one index range each of: the pair the filters
 * name when they name both (a pair no transfer can have reads one empty range), else every pair the
 * filters leave open that a transfer can have (`statusesOfRail`: a rail that settles at once has
 * SETTLED transfers only) — 9 without a filter, 2 with status PENDING or RETURNED, 5 with SETTLED,
 * 1 with a rail that settles at once, 3 with ach_same_day or wire.
 */
const statusRailPairs = (filter: TransferFilter): ReadonlyArray<readonly [TransferStatus, TransferRail]> => {
  const rails = filter.payment_rail !== undefined ? [filter.payment_rail as TransferRail] : TRANSFER_RAILS
  if (filter.status !== undefined && filter.payment_rail !== undefined) return [[filter.status, rails[0]!]]
  return rails.flatMap((rail) =>
    statusesOfRail(rail)
      .filter((status) => filter.status === undefined || status === filter.status)
      .map((status) => [status, rail] as const)
  )
}
