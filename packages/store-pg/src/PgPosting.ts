import { SqlClient, type SqlError } from "@effect/sql"
import {
  type BalanceTotals,
  balanceRowKey,
  type CardMessagePosting,
  decidePostings,
  isNewTransfer,
  LedgerPosting,
  notNewTransfers,
  type PostingOutcome,
  type PostingRefusal,
  postingRows,
  postingsToWrite,
  sqlErrorCode,
  storedEventData,
  toInt,
  transactionRow,
  type TransferPosting,
  withWake
} from "@issuing/core"
import { Effect, Layer } from "effect"
import { makePostingCoalescer } from "./PostingCoalescer.js"
import { postingRecord } from "./PostingRecord.js"

type Sql = SqlClient.SqlClient
/** How a batch's `balance.updated` events are written (`postingRows`). */
type BalanceEvents = "per batch" | "per posting"

/**
 * True once the transaction queued a webhook delivery: the fan-out, called with a NULL channel,
 * sets this transaction-local setting instead of running NOTIFY (migration 0110). The outcome's
 * `wake` then has the ledger wake the workers after the commit (docs/webhooks.md#wake-ups-on-postgresql).
 */
const QUEUED = "current_setting('issuing.deliveries_queued', true) = 'yes'"

/** A row a posting statement answers. */
interface PostingRow {
  readonly posted: boolean
  readonly available: string | null
  readonly refusal: string | null
  readonly queued: boolean
}

/** A posting statement's answer, as the ledger reads it. */
const outcomeOf = (row: PostingRow): PostingOutcome => ({
  posted: row.posted === true,
  refusal: (row.refusal ?? null) as PostingRefusal | null,
  availableMinor: row.available === null ? 0 : toInt(row.available),
  wake: row.queued === true
})

/**
 * One posting: one statement, `issuing_post_transfer` (src/functions/issuing_post_transfer.sql),
 * taking the posting record (PostingRecord.ts) as one jsonb argument.
 */
const postTransfer = (sql: Sql, posting: TransferPosting): Effect.Effect<PostingOutcome, SqlError.SqlError> =>
  sql<PostingRow>`SELECT posted, available, refusal, ${sql.literal(QUEUED)} AS queued
      FROM issuing_post_transfer(${JSON.stringify(postingRecord(posting))}::jsonb, NULL::text)`.pipe(
    Effect.map((rows) => outcomeOf(rows[0]!))
  )
/**
 * The running totals of every book of the accounts the postings touch, summed over their slots
 * (docs/ledger.md#settlement-slots); `lock`: every slot FOR UPDATE, in (account, book, slot) order.
 */
const balanceTotals = (sql: Sql, postings: ReadonlyArray<TransferPosting>, lock: boolean) =>
  Effect.map(
    sql<{ account: string; book: string; debits: string; credits: string; pending: string }>`
      SELECT account, book, sum(debits_minor)::text AS debits, sum(credits_minor)::text AS credits,
             sum(pending_minor)::text AS pending
      FROM (SELECT financial_account_id AS account, book, debits_minor, credits_minor, pending_minor
            FROM issuing_balances
            WHERE financial_account_id IN ${sql.in([...new Set(postings.flatMap(({ deltas }) => deltas.map((d) => d.financial_account_id)))].sort())}
            ORDER BY financial_account_id, book, slot ${sql.literal(lock ? "FOR UPDATE" : "")}) l
      GROUP BY account, book`,
    (rows) =>
      new Map(
        rows.map((row) => [
          balanceRowKey(row.account, row.book),
          { debits: BigInt(row.debits), credits: BigInt(row.credits), pending: BigInt(row.pending) }
        ])
      )
  )

/** Writes rows of postings with `issuing_write_postings` (migration 0090): any of its tables, in one statement. */
const writeRows = (sql: Sql, rows: Partial<ReturnType<typeof postingRows>>) =>
  Effect.map(
    sql`SELECT ${sql.literal(QUEUED)} AS queued FROM (SELECT issuing_write_postings(${JSON.stringify(rows)}::jsonb, NULL::text)) w`,
    (result) => result[0]?.queued === true
  )

/**
 * A batch of new transfers (no card, each its own new transaction), in the caller's
 * transaction: the balance rows they touch are locked and read in one statement, the postings
 * decided in order over them here, and the ones that post written in one more
 * (`issuing_write_postings`): two round trips for the whole batch.
 */
const postNewTransfersLocked = (sql: Sql, postings: ReadonlyArray<TransferPosting>, allOrNothing: boolean, balanceEvents: BalanceEvents) =>
  Effect.gen(function* () {
    const outcomes = decidePostings(postings, yield* balanceTotals(sql, postings, true))
    const posted = postingsToWrite(postings, outcomes, allOrNothing)
    return posted.length === 0 ? outcomes : withWake(outcomes, yield* writeRows(sql, postingRows(posted, balanceEvents)))
  })

/** True for the failure of `issuing_post_decided` when the batch was decided otherwise under the locks. */
const decidedOtherwise = (error: SqlError.SqlError) => sqlErrorCode(error) === "IB409"

/**
 * The totals a batch is decided over, as read: every (account, book) its postings touch (the
 * source's principal of a funds-checked one included), 0 where no row was read. Taken before the
 * decision, which adds to the totals as it goes.
 */
const readTotals = (postings: ReadonlyArray<TransferPosting>, totals: Map<string, BalanceTotals>) => {
  const read = new Map<string, { account: string; book: string; debits: string; credits: string; pending: string }>()
  const add = (account: string, book: string) => {
    const key = balanceRowKey(account, book)
    if (read.has(key)) return
    const row = totals.get(key)
    read.set(key, {
      account,
      book,
      debits: String(row?.debits ?? 0n),
      credits: String(row?.credits ?? 0n),
      pending: String(row?.pending ?? 0n)
    })
  }
  for (const { checkFunds, deltas, transfer } of postings) {
    if (checkFunds) add(transfer.from_financial_account_id!, "principal")
    for (const d of deltas) add(d.financial_account_id, d.book)
  }
  return [...read.values()]
}

/**
 * The same batch outside any transaction, holding the balance-row locks only briefly (migration
 * 0100): decided here over the totals read WITHOUT locks, then ONE statement,
 * `issuing_post_decided`, writes the new rows of the ones that post, locks the balance rows,
 * checks the decision against what they hold now (sent with the totals it was made over and each
 * posting's available principal), and writes the summed deltas only if it stands — else it writes
 * nothing (SQLSTATE IB409) and the batch runs again the locked way. A batch that writes nothing
 * (every one refused, or all-or-nothing with one refused) was decided over a consistent read and
 * needs no statement.
 */
const postNewTransfersDecided = (
  client: SqlClient.SqlClient,
  sql: Sql,
  postings: ReadonlyArray<TransferPosting>,
  allOrNothing: boolean,
  balanceEvents: BalanceEvents
) =>
  Effect.gen(function* () {
    const totals = yield* balanceTotals(sql, postings, false)
    const read = readTotals(postings, totals)
    const outcomes = decidePostings(postings, totals)
    const posted = postingsToWrite(postings, outcomes, allOrNothing)
    if (posted.length === 0) return outcomes
    const { balance_events, balances, ...rows } = postingRows(posted, balanceEvents)
    const decided = postings.map(({ checkFunds, transfer }, i) => ({
      source: transfer.from_financial_account_id,
      amount: transfer.amount,
      check_funds: checkFunds,
      posted: outcomes[i]!.posted,
      refusal: outcomes[i]!.refusal,
      available: outcomes[i]!.availableMinor
    }))
    const [row] = yield* sql<{ available: ReadonlyArray<string>; queued: boolean }>`SELECT available, ${sql.literal(QUEUED)} AS queued
      FROM (SELECT issuing_post_decided(${JSON.stringify(rows)}::jsonb, ${JSON.stringify(balance_events)}::jsonb,
                                        ${JSON.stringify(decided)}::jsonb, ${JSON.stringify(read)}::jsonb,
                                        ${JSON.stringify(balances)}::jsonb, NULL::text) AS available) d`
    // Each posting's available principal as read under the locks.
    return withWake(
      outcomes.map((outcome, i) => ({ ...outcome, availableMinor: toInt(row!.available[i]!) })),
      row!.queued
    )
  }).pipe(
    Effect.catchIf(decidedOtherwise, () => client.withTransaction(postNewTransfersLocked(sql, postings, allOrNothing, balanceEvents)))
  )

/**
 * One message of a card transaction: ONE call of `issuing_post_card_message`
 * (src/functions/issuing_post_card_message.sql), its transfer included when it has one (its posting
 * record, as a single posting sends it): the message and its transfer are one statement, one round
 * trip. A message that both locks the wallet's row and posts a transfer (a clearing, a
 * single-message approval) has the function take the transfer's balance rows first, in the order
 * every posting takes them (docs/ledger.md#posting-rules).
 */
const postCardMessage = (sql: Sql, posting: CardMessagePosting): Effect.Effect<PostingOutcome, SqlError.SqlError> =>
  Effect.gen(function* () {
    const t = transactionRow(posting.transaction, posting.financialAccountId)
    // A message that moves money writes the wallet's balance.updated with its transfer, after the
    // transfer's deltas: written before it, it would describe the balance before the transfer.
    const balanceEventId = posting.transfer === null ? posting.balanceEventId : null
    const transfer =
      posting.transfer === null
        ? null
        : JSON.stringify(
            postingRecord({
              ...posting.transfer,
              balanceEvents:
                posting.balanceEventId === null ? [] : [{ id: posting.balanceEventId, financial_account_id: posting.financialAccountId }]
            })
          )
    const [row] = yield* sql<PostingRow>`SELECT posted, available, refusal, ${sql.literal(QUEUED)} AS queued FROM issuing_post_card_message(
        ${JSON.stringify(t)}::jsonb, ${posting.transactionWrite}, ${posting.financialAccountId}, ${posting.pendingDelta},
        ${posting.requireAvailable}, ${posting.activeCardId}, ${t.updated_at},
        ${posting.events.map((e) => e.id)}::text[], ${posting.events.map((e) => e.type)}::text[],
        ${posting.events.map((e) => storedEventData(e.data.object, t.program_id, t.updated_at))}::text[], ${balanceEventId}, NULL::text, ${transfer}::jsonb)`
    return outcomeOf(row!)
  })

/**
 * PostgreSQL's posting: ONE statement per transfer (a batch's new transfers: two per run), the
 * `issuing_post_transfer` function, so a transfer costs one round trip; its one argument is the
 * posting record (PostingRecord.ts), the same for a single posting, a batch's run and a card
 * message's transfer. New transfers posted concurrently on their own are coalesced into batches
 * (PostingCoalescer.ts; docs/ledger.md#coalesced-postings-on-postgresql). An outcome's `wake` says
 * the write queued webhook deliveries: the ledger then wakes the workers, of this process and
 * (NOTIFY) of the others, once the write has committed.
 */
export const PgLedgerPostingLive: Layer.Layer<LedgerPosting, never, SqlClient.SqlClient> = Layer.scoped(
  LedgerPosting,
  Effect.gen(function* () {
    const client = yield* SqlClient.SqlClient
    const sql = client.withoutTransforms()
    const coalescer = yield* makePostingCoalescer(
      (posting) => postTransfer(sql, posting),
      // Each posting's own balance.updated, as it would have written alone.
      (postings) => postNewTransfersDecided(client, sql, postings, false, "per posting")
    )
    return LedgerPosting.of({
      // A new transfer on its own (not in a caller's transaction) joins the postings in flight
      // beside it (PostingCoalescer.ts); anything else is its one statement.
      postTransfer: (posting) =>
        isNewTransfer(posting)
          ? Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (outer) =>
              outer._tag === "Some" ? postTransfer(sql, posting) : coalescer.post(posting)
            )
          : postTransfer(sql, posting),
      // In order, in the caller's transaction: each refusal writes nothing, and any database error
      // aborts the transaction (the batch) as a whole. New transfers without a card (every batch
      // item that posts at once) are decided here and written set-based; any other run goes
      // through issuing_post_transfers, one statement calling issuing_post_transfer per posting.
      postTransfers: (postings) =>
        postings.length === 0
          ? Effect.succeed([])
          : postings.every(isNewTransfer)
            ? postNewTransfersLocked(sql, postings, false, "per batch")
            : sql<PostingRow>`SELECT ord, posted, available, refusal, ${sql.literal(QUEUED)} AS queued FROM issuing_post_transfers(
                  ${JSON.stringify(postings.map(postingRecord))}::jsonb, NULL::text) ORDER BY ord`.pipe(
                Effect.map((rows) => rows.map(outcomeOf))
              ),
      // Its locks must be held until its write: in the caller's transaction the locked way (its
      // write is one statement, so all-or-nothing with no savepoint), else decided before locking.
      postNewTransfers: (postings, { allOrNothing }) =>
        !postings.every(isNewTransfer)
          ? Effect.die(notNewTransfers())
          : postings.length === 0
            ? Effect.succeed([])
            : Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (outer) =>
                outer._tag === "Some"
                  ? postNewTransfersLocked(sql, postings, allOrNothing, "per batch")
                  : postNewTransfersDecided(client, sql, postings, allOrNothing, "per batch")
              ),
      // Through the write lane: a transaction per write there, with its retries of transient failures.
      commitsNewTransfersItself: false,
      // The order issuing_post_transfer locks in, so every transaction takes its locks in one order.
      lockAccounts: (accountIds) =>
        accountIds.length === 0
          ? Effect.void
          : Effect.asVoid(sql`SELECT 1 FROM issuing_balances WHERE financial_account_id IN ${sql.in(accountIds)}
                              ORDER BY financial_account_id, book, slot FOR UPDATE`),
      postCardMessage: (posting) => postCardMessage(sql, posting),
      // In the caller's transaction: the pending amount, then the account's balance.updated as it now stands.
      releasePending: (accountId, amountMinor, at, event) =>
        Effect.zipRight(
          sql`UPDATE issuing_balances SET pending_minor = pending_minor - ${amountMinor}, updated_at = ${at}
              WHERE financial_account_id = ${accountId} AND book = 'principal'`,
          writeRows(sql, { balance_events: [{ id: event.id, program_id: event.program_id, account: accountId, created_at: at }] })
        )
    })
  })
)
