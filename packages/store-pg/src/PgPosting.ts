import { SqlClient, type SqlError } from "@effect/sql"
import {
  LedgerPosting,
  MAX_TOTAL_MINOR,
  type PostingOutcome,
  type PostingRefusal,
  toInt,
  type TransferPosting,
  WEBHOOK_NOTIFY_CHANNEL
} from "@issuing/core"
import { Effect, Layer } from "effect"

type Sql = SqlClient.SqlClient

const LIMIT = BigInt(MAX_TOTAL_MINOR)

interface Totals {
  debits: bigint
  credits: bigint
}

/**
 * Decides a batch's postings in order over the running totals of their balance rows (read under
 * the batch's locks): exactly the checks `issuing_post_transfer` makes — the source's principal
 * balance covers the amount when `checkFunds`, and no (account, book) total passes
 * `MAX_TOTAL_MINOR` — each posted one moving the totals the next one sees.
 */
export const decidePostings = (postings: ReadonlyArray<TransferPosting>, totals: Map<string, Totals>): ReadonlyArray<PostingOutcome> => {
  const totalsOf = (account: string, book: string) => {
    const key = `${account}\u0000${book}`
    let found = totals.get(key)
    if (found === undefined) {
      found = { debits: 0n, credits: 0n }
      totals.set(key, found)
    }
    return found
  }
  return postings.map(({ checkFunds, deltas, transfer }): PostingOutcome => {
    let available = 0
    if (checkFunds) {
      const principal = totalsOf(transfer.from_financial_account_id!, "principal")
      available = Number(principal.credits - principal.debits)
      if (available < transfer.amount) return { posted: false, refusal: "insufficient_funds", availableMinor: available, wake: false }
    }
    const over = deltas.some((d) => {
      const row = totalsOf(d.financial_account_id, d.book)
      return row.debits + BigInt(d.debitsMinor) > LIMIT || row.credits + BigInt(d.creditsMinor) > LIMIT
    })
    if (over) return { posted: false, refusal: "balance_limit_exceeded", availableMinor: available, wake: false }
    for (const d of deltas) {
      const row = totalsOf(d.financial_account_id, d.book)
      row.debits += BigInt(d.debitsMinor)
      row.credits += BigInt(d.creditsMinor)
    }
    return { posted: true, refusal: null, availableMinor: available, wake: false }
  })
}

/** The postings' balance deltas summed per (account, book), sorted: the upsert takes the rows' locks in that order. */
const summedDeltas = (postings: ReadonlyArray<TransferPosting>) => {
  const balances = new Map<
    string,
    { financial_account_id: string; book: string; currency: string; debits_minor: number; credits_minor: number; updated_at: string }
  >()
  for (const { deltas, transfer } of postings) {
    for (const d of deltas) {
      const key = `${d.financial_account_id}\u0000${d.book}`
      const row = balances.get(key)
      if (row === undefined) {
        balances.set(key, {
          financial_account_id: d.financial_account_id,
          book: d.book,
          currency: d.currency,
          debits_minor: d.debitsMinor,
          credits_minor: d.creditsMinor,
          updated_at: transfer.created_at
        })
      } else {
        row.debits_minor += d.debitsMinor
        row.credits_minor += d.creditsMinor
        row.updated_at = transfer.created_at
      }
    }
  }
  return [...balances.values()].sort((a, b) =>
    a.financial_account_id === b.financial_account_id
      ? a.book < b.book
        ? -1
        : 1
      : a.financial_account_id < b.financial_account_id
        ? -1
        : 1
  )
}

/** The rows of the postings that post, as `issuing_write_postings` (migration 0090) takes them: one array per table. */
const postingRows = (postings: ReadonlyArray<TransferPosting>) => {
  return {
    transactions: postings.map(({ transaction: t, transfer }) => ({
      id: t.id,
      program_id: t.program_id,
      status: t.status,
      amount_minor: transfer.amount,
      currency: transfer.currency,
      card_id: t.card_id,
      mcc: t.mcc,
      merchant_name: t.merchant_name,
      created_at: t.created_at,
      updated_at: transfer.created_at
    })),
    transfers: postings.map(({ transfer }) => ({
      id: transfer.id,
      program_id: transfer.program_id,
      transaction_id: transfer.transaction_id,
      payment_rail: transfer.payment_rail,
      amount_minor: transfer.amount,
      currency: transfer.currency,
      from_financial_account_id: transfer.from_financial_account_id,
      to_financial_account_id: transfer.to_financial_account_id,
      status: transfer.status,
      description: transfer.description,
      created_at: transfer.created_at
    })),
    book_transfers: postings.map(({ bookTransfer, transaction: t, transfer }) => ({
      id: bookTransfer.id,
      program_id: t.program_id,
      transfer_id: transfer.id,
      transaction_id: t.id,
      amount_minor: transfer.amount,
      currency: transfer.currency,
      posted_at: transfer.created_at
    })),
    entries: postings.flatMap(({ bookTransfer }) =>
      bookTransfer.entries.map((e, position) => ({
        book_transfer_id: bookTransfer.id,
        position,
        financial_account_id: e.financial_account_id,
        book: e.book,
        entry_type: e.entry_type,
        amount_minor: e.amount.amount,
        currency: e.amount.currency
      }))
    ),
    balances: summedDeltas(postings),
    events: postings.flatMap(({ events, transaction: t, transfer }) =>
      events.map((e) => ({
        id: e.id,
        program_id: t.program_id,
        type: e.type,
        created_at: transfer.created_at,
        data: JSON.stringify(e.data.object)
      }))
    )
  }
}

/** One posting: one statement, `issuing_post_transfer` (migrations 0040 and 0080). */
const postTransfer = (
  sql: Sql,
  { bookTransfer, activeCardId, checkFunds, deltas, events, transaction: t, transactionWrite, transfer }: TransferPosting
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
          ${events.map((e) => JSON.stringify(e.data.object))}::text[], ${WEBHOOK_NOTIFY_CHANNEL}, ${activeCardId})`.pipe(
    Effect.map((rows) => ({
      posted: rows[0]!.posted === true,
      refusal: (rows[0]!.refusal ?? null) as PostingRefusal | null,
      availableMinor: rows[0]!.available === null ? 0 : toInt(rows[0]!.available),
      wake: false
    }))
  )
/** A posting as one element of issuing_post_transfers' jsonb array (the function's arguments by name). */
const asJson = ({
  activeCardId,
  bookTransfer,
  checkFunds,
  deltas,
  events,
  transaction: t,
  transactionWrite,
  transfer
}: TransferPosting) => ({
  program_id: t.program_id,
  source: transfer.from_financial_account_id,
  target: transfer.to_financial_account_id,
  check_funds: checkFunds,
  amount: transfer.amount,
  currency: transfer.currency,
  now: transfer.created_at,
  transaction_write: transactionWrite,
  transaction_id: t.id,
  transaction_status: t.status,
  transaction_created_at: t.created_at,
  card_id: t.card_id,
  mcc: t.mcc,
  merchant_name: t.merchant_name,
  transfer_id: transfer.id,
  rail: transfer.payment_rail,
  transfer_status: transfer.status,
  description: transfer.description,
  book_transfer_id: bookTransfer.id,
  entry_accounts: bookTransfer.entries.map((e) => e.financial_account_id),
  entry_books: bookTransfer.entries.map((e) => e.book),
  entry_types: bookTransfer.entries.map((e) => e.entry_type),
  entry_amounts: bookTransfer.entries.map((e) => String(e.amount.amount)),
  delta_accounts: deltas.map((d) => d.financial_account_id),
  delta_books: deltas.map((d) => d.book),
  delta_debits: deltas.map((d) => String(d.debitsMinor)),
  delta_credits: deltas.map((d) => String(d.creditsMinor)),
  event_ids: events.map((e) => e.id),
  event_types: events.map((e) => e.type),
  event_data: events.map((e) => JSON.stringify(e.data.object)),
  active_card: activeCardId
})
/**
 * A batch of new transfers (no card, each its own new transaction), in the caller's
 * transaction: the balance rows they touch are locked and read in one statement, the postings
 * decided in order over them here, and the ones that post written in one more
 * (`issuing_write_postings`): two round trips for the whole batch.
 */
const postNewTransfers = (sql: Sql, postings: ReadonlyArray<TransferPosting>) =>
  Effect.gen(function* () {
    const accounts = [...new Set(postings.flatMap(({ deltas }) => deltas.map((d) => d.financial_account_id)))].sort()
    const rows = yield* sql<{ account: string; book: string; debits: string; credits: string }>`
      SELECT financial_account_id AS account, book, debits_minor::text AS debits, credits_minor::text AS credits
      FROM issuing_balances WHERE financial_account_id IN ${sql.in(accounts)}
      ORDER BY financial_account_id, book FOR UPDATE`
    const totals = new Map(
      rows.map((row) => [`${row.account}\u0000${row.book}`, { debits: BigInt(row.debits), credits: BigInt(row.credits) }])
    )
    const outcomes = decidePostings(postings, totals)
    const posted = postings.filter((_, i) => outcomes[i]!.posted)
    if (posted.length > 0)
      yield* sql`SELECT issuing_write_postings(${JSON.stringify(postingRows(posted))}::jsonb, ${WEBHOOK_NOTIFY_CHANNEL})`
    return outcomes
  })

/**
 * PostgreSQL's posting: ONE statement per transfer (a batch's new transfers: two per run), the `issuing_post_transfer` function
 * (migrations 0040 and 0080), so a transfer costs one round trip. Column arrays carry the entries, deltas
 * and events. NOTIFY for the webhook workers is sent from SQL (delivered at commit), so the
 * outcome never asks the process to wake its own workers.
 */
export const PgLedgerPostingLive: Layer.Layer<LedgerPosting, never, SqlClient.SqlClient> = Layer.effect(
  LedgerPosting,
  Effect.map(SqlClient.SqlClient, (client) => {
    const sql = client.withoutTransforms()
    return {
      postTransfer: (posting) => postTransfer(sql, posting),
      // In order, in the caller's transaction: each refusal writes nothing, and any database error
      // aborts the transaction (the batch) as a whole. New transfers without a card (every batch
      // item that posts at once) are decided here and written set-based; any other run goes
      // through issuing_post_transfers, one statement calling issuing_post_transfer per posting.
      postTransfers: (postings) =>
        postings.length === 0
          ? Effect.succeed([])
          : postings.every((p) => p.transactionWrite === "insert" && p.activeCardId === null)
            ? postNewTransfers(sql, postings)
            : sql`SELECT ord, posted, available, refusal FROM issuing_post_transfers(
                  ${JSON.stringify(postings.map(asJson))}::jsonb, ${WEBHOOK_NOTIFY_CHANNEL}) ORDER BY ord`.pipe(
                Effect.map((rows) =>
                  rows.map((row) => ({
                    posted: row.posted === true,
                    refusal: (row.refusal ?? null) as PostingRefusal | null,
                    availableMinor: row.available === null ? 0 : toInt(row.available),
                    wake: false
                  }))
                )
              ),
      // The order issuing_post_transfer locks in, so every transaction takes its locks in one order.
      lockAccounts: (accountIds) =>
        accountIds.length === 0
          ? Effect.void
          : Effect.asVoid(sql`SELECT 1 FROM issuing_balances WHERE financial_account_id IN ${sql.in(accountIds)}
                              ORDER BY financial_account_id, book FOR UPDATE`)
    }
  })
)
