import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { toInt } from "../platform/Rows.js"
import { LedgerPosting, LedgerStore } from "./LedgerStore.js"
import { accountStatements } from "./SqlLedgerAccounts.js"
import { bookTransferStatements } from "./SqlLedgerBookTransfers.js"
import { ledgerQueries } from "./SqlLedgerQueries.js"
import { transactionStatements } from "./SqlLedgerTransactions.js"
import { transferStatements } from "./SqlLedgerTransfers.js"
import { walletStatements } from "./SqlLedgerWallets.js"

/**
 * The ledger port over SqlClient: one SQL text for both dialects (only row locking differs), its
 * statements grouped by the resource they read (accounts, wallets, transactions, transfers, book
 * transfers); the posting itself is the store package's (LedgerPosting), each store's fastest way.
 */
export const SqlLedgerStoreLive: Layer.Layer<LedgerStore, never, SqlClient.SqlClient | LedgerPosting> = Layer.effect(
  LedgerStore,
  Effect.gen(function* () {
    const q = ledgerQueries(yield* SqlClient.SqlClient)
    const posting = yield* LedgerPosting
    return {
      ...accountStatements(q),
      ...walletStatements(q),
      ...transactionStatements(q),
      ...transferStatements(q),
      postTransfer: posting.postTransfer,
      postTransfers: posting.postTransfers,
      postNewTransfers: posting.postNewTransfers,
      commitsNewTransfersItself: posting.commitsNewTransfersItself,
      lockAccounts: posting.lockAccounts,
      postCardMessage: posting.postCardMessage,
      releasePending: posting.releasePending,
      ...bookTransferStatements(q),
      // At most three kinds × 16 shards (PostgreSQL; one row per kind on SQLite), by the primary key.
      settlementTotals: (programId, day, currency) =>
        q.sql<{ kind: "clearing" | "force_post" | "return"; count: unknown; amount: unknown }>`SELECT kind, sum(count) AS count,
            sum(amount_minor) AS amount FROM issuing_settlement_totals
          WHERE program_id = ${programId} AND day = ${day} AND currency = ${currency} GROUP BY kind`.pipe(
          Effect.map((rows) => rows.map((r) => ({ kind: r.kind, count: toInt(r.count), amount: toInt(r.amount) })))
        )
    }
  })
)
