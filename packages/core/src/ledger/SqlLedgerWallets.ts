import { Effect, Option } from "effect"
import { metadataOf, metadataText } from "../platform/Metadata.js"
import { toIso } from "../platform/Rows.js"
import { bounded, listTotal, maintained } from "../sql/ListCounts.js"
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
  cardholder_id: row.cardholder_id ?? null,
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
            (id, program_id, holder_name, holder_email, financial_account_id, tag, cardholder_id, metadata, created_at, updated_at)
          VALUES (${wallet.id}, ${wallet.program_id}, ${wallet.holder.name}, ${wallet.holder.email},
                  ${wallet.financial_account_id}, ${wallet.tag}, ${wallet.cardholder_id}, ${metadataText(wallet.metadata)},
                  ${wallet.created_at}, ${wallet.updated_at})`.pipe(Effect.asVoid),

    findWallet: (programId, walletId) => findWallet(programId, walletId, false),
    lockWallet: (programId, walletId) => findWallet(programId, walletId, true),

    updateWallet: (wallet) =>
      sql`UPDATE issuing_wallets SET tag = ${wallet.tag}, metadata = ${metadataText(wallet.metadata)}, updated_at = ${wallet.updated_at}
          WHERE id = ${wallet.id} AND program_id = ${wallet.program_id}`.pipe(Effect.asVoid),

    // One tag's wallets: `tag = ?` implies the partial indexes' `tag IS NOT NULL` on both stores, so
    // the page is a range of issuing_wallets_by_tag (or _by_tag_update) in its order (migration 0480).
    // A holder's: `lower(holder_…) = lower(?)` is a range of issuing_wallets_by_holder_name or
    // _email (migration 0695), and its count the count of that range, which grows with the holder's
    // wallets, never with the program's; the maintained counts know only the tag.
    listWallets: (programId, filter, window) => {
      const conditions = [
        sql`program_id = ${programId}`,
        ...(filter.tag === undefined ? [] : [sql`tag = ${filter.tag}`]),
        ...(filter.holder_name === undefined ? [] : [sql`lower(holder_name) = lower(${filter.holder_name})`]),
        ...(filter.holder_email === undefined ? [] : [sql`lower(holder_email) = lower(${filter.holder_email})`])
      ]
      const where = sql.and(conditions)
      const byHolder = filter.holder_name !== undefined || filter.holder_email !== undefined
      return Effect.all({
        rows: pageRows(sql, window, WALLET_ORDER_FIELDS, {
          select: sql.literal("*"),
          from: sql.literal("issuing_wallets"),
          where
        }).pipe(Effect.map((rows) => rows.map(toWallet))),
        total: listTotal(sql, byHolder ? bounded("issuing_wallets", where) : maintained("wallets", programId, { tag: filter.tag }))
      })
    }
  } satisfies Partial<LedgerStoreService>
}
