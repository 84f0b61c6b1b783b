import { Effect, Option } from "effect"
import { metadataOf, metadataText } from "../platform/Metadata.js"
import { toIso } from "../platform/Rows.js"
import { listTotal, maintained } from "../sql/ListCounts.js"
import { pageRows } from "../sql/OrderBy.js"
import type { LedgerStoreService } from "./LedgerStore.js"
import { WALLET_ORDER_FIELDS } from "./OrderFields.js"
import type { Wallet } from "./Records.js"
import type { LedgerQueries } from "./SqlLedgerQueries.js"

const toWallet = (row: any): Wallet => ({
  id: row.id,
  object: "wallet",
  program_id: row.program_id,
  holder: { name: row.holder_name, email: row.holder_email ?? null },
  financial_account_id: row.financial_account_id,
  tag: row.tag ?? null,
  metadata: metadataOf(row.metadata),
  created_at: toIso(row.created_at),
  updated_at: toIso(row.updated_at)
})

/** Wallets. */
export const walletStatements = (q: LedgerQueries) => {
  const { forUpdate, sql } = q
  const findWallet = (programId: string, walletId: string, lock: boolean) =>
    sql`SELECT * FROM issuing_wallets WHERE id = ${walletId} AND program_id = ${programId} ${forUpdate(lock)}`.pipe(
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toWallet))
    )
  return {
    insertWallet: (wallet) =>
      sql`INSERT INTO issuing_wallets
            (id, program_id, holder_name, holder_email, financial_account_id, tag, metadata, created_at, updated_at)
          VALUES (${wallet.id}, ${wallet.program_id}, ${wallet.holder.name}, ${wallet.holder.email},
                  ${wallet.financial_account_id}, ${wallet.tag}, ${metadataText(wallet.metadata)}, ${wallet.created_at},
                  ${wallet.updated_at})`.pipe(Effect.asVoid),

    findWallet: (programId, walletId) => findWallet(programId, walletId, false),
    lockWallet: (programId, walletId) => findWallet(programId, walletId, true),

    updateWallet: (wallet) =>
      sql`UPDATE issuing_wallets SET tag = ${wallet.tag}, metadata = ${metadataText(wallet.metadata)}, updated_at = ${wallet.updated_at}
          WHERE id = ${wallet.id} AND program_id = ${wallet.program_id}`.pipe(Effect.asVoid),

    // One tag's wallets: `tag = ?` implies the partial indexes' `tag IS NOT NULL` on both stores, so
    // the page is a range of issuing_wallets_by_tag (or _by_tag_update) in its order (migration 0480).
    listWallets: (programId, filter, window) =>
      Effect.all({
        rows: pageRows(sql, window, WALLET_ORDER_FIELDS, {
          select: sql.literal("*"),
          from: sql.literal("issuing_wallets"),
          where: filter.tag === undefined ? sql`program_id = ${programId}` : sql`program_id = ${programId} AND tag = ${filter.tag}`
        }).pipe(Effect.map((rows) => rows.map(toWallet))),
        total: listTotal(sql, maintained("wallets", programId, filter))
      })
  } satisfies Partial<LedgerStoreService>
}
