import { SqlClient, type SqlError } from "@effect/sql"
import { LedgerPosting, type PostingOutcome, type PostingRefusal, toInt, type TransferPosting, WEBHOOK_NOTIFY_CHANNEL } from "@issuing/core"
import { Effect, Layer } from "effect"

/**
 * PostgreSQL's posting: ONE statement per transfer, the `issuing_post_transfer` function
 * (migration 0040), so a transfer costs one round trip. Column arrays carry the entries, deltas
 * and events. NOTIFY for the webhook workers is sent from SQL (delivered at commit), so the
 * outcome never asks the process to wake its own workers.
 */
export const PgLedgerPostingLive: Layer.Layer<LedgerPosting, never, SqlClient.SqlClient> = Layer.effect(
  LedgerPosting,
  Effect.map(SqlClient.SqlClient, (client) => {
    const sql = client.withoutTransforms()
    const postTransfer = (
      { bookTransfer, checkFunds, deltas, events, transaction: t, transactionWrite, transfer }: TransferPosting
    ): Effect.Effect<PostingOutcome, SqlError.SqlError> =>
        sql`SELECT posted, available, refusal FROM issuing_post_transfer(
              ${t.program_id}, ${transfer.from_financial_account_id}, ${transfer.to_financial_account_id}, ${checkFunds},
              ${transfer.amount}, ${transfer.currency}, ${transfer.created_at},
              ${transactionWrite}, ${t.id}, ${t.status}, ${t.created_at}, ${t.card_id}, ${t.mcc}, ${t.merchant_name},
              ${transfer.id}, ${transfer.payment_rail}, ${transfer.status}, ${transfer.description},
              ${bookTransfer.id},
              ${bookTransfer.entries.map((e) => e.financial_account_id)}::text[], ${bookTransfer.entries.map((e) => e.book)}::text[],
              ${bookTransfer.entries.map((e) => e.entry_type)}::text[], ${bookTransfer.entries.map((e) => e.amount.amount)}::bigint[],
              ${deltas.map((d) => d.financial_account_id)}::text[], ${deltas.map((d) => d.book)}::text[],
              ${deltas.map((d) => d.debitsMinor)}::bigint[], ${deltas.map((d) => d.creditsMinor)}::bigint[],
              ${events.map((e) => e.id)}::text[], ${events.map((e) => e.type)}::text[],
              ${events.map((e) => JSON.stringify(e.data.object))}::text[], ${WEBHOOK_NOTIFY_CHANNEL})`.pipe(
          Effect.map((rows) => ({
            posted: rows[0]!.posted === true,
            refusal: (rows[0]!.refusal ?? null) as PostingRefusal | null,
            availableMinor: rows[0]!.available === null ? 0 : toInt(rows[0]!.available),
            wake: false
          }))
        )
    return {
      postTransfer,
      // In order, one statement each, in the caller's transaction: the function keeps each refusal
      // from writing, and any database error aborts the transaction (the batch) as a whole.
      postTransfers: (postings) => Effect.forEach(postings, postTransfer)
    }
  })
)
