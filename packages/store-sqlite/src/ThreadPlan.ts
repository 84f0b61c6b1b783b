import { type BalanceRowId, type BalanceTotals, balanceRowKey, balanceRowOrder, type TransferPosting } from "@issuing/core"
import type { BatchStatement } from "./MultiRowSql.js"
import { type NewTransfersPlan, planNewTransfers, TOTALS_OF, type TotalsRow, totalsOf, touchedAccountIds } from "./NewTransfers.js"
import type { WriterJobPlan } from "./SqliteClient.js"

/**
 * The writer-thread lane's planning (docs/architecture.md#the-sqlite-writer-thread), pure: a job's
 * batches decided over the balance rows as the jobs sent before it will leave them, the job's
 * statements and guard, and the rows as this job will leave them in turn. The lane (ThreadLane.ts)
 * only reads what this asks for, sends the job and hands the prediction on.
 */

/** A batch of new transfers sent to the lane. */
export interface LaneBatch {
  readonly postings: ReadonlyArray<TransferPosting>
  readonly allOrNothing: boolean
  /**
   * A lone posting (a single `POST /v1/transfers`, one posting): planned together with the lone
   * postings next to it in the job as one set, each with its own `balance.updated`
   * (docs/ledger.md#coalesced-postings-on-sqlite).
   */
  readonly alone: boolean
}

/** A balance row as predicted. */
export type PredictedRow = BalanceRowId & Readonly<BalanceTotals>

/**
 * The balance rows as they will stand once the jobs sent so far commit (existing rows only, by
 * `balanceRowKey`), for the accounts read since the lane took the gate.
 */
export interface Prediction {
  /** The accounts whose rows are all in `rows` (an account with no row yet: none to hold). */
  readonly accounts: ReadonlySet<string>
  readonly rows: ReadonlyMap<string, PredictedRow>
}

/** Nothing read yet: the prediction at the start of a hold of the gate. */
export const emptyPrediction: Prediction = { accounts: new Set(), rows: new Map() }

/** The accounts of the batches the prediction knows nothing of: their rows are read (TOTALS_OF) before `planJob`. */
export const accountsToRead = (prediction: Prediction, batches: ReadonlyArray<LaneBatch>): ReadonlyArray<string> =>
  touchedAccountIds(batches.flatMap((batch) => batch.postings)).filter((account) => !prediction.accounts.has(account))

/** A job planned: each batch's plan (in order), the job for the thread, and the prediction once it commits. */
export interface PlannedJob {
  readonly plans: ReadonlyArray<NewTransfersPlan>
  readonly job: WriterJobPlan
  readonly next: Prediction
}

/** TOTALS_OF's rows for `accounts` as predicted, in its order: what the thread must read back. */
const expectedRows = (rows: ReadonlyMap<string, PredictedRow>, accounts: ReadonlyArray<string>): ReadonlyArray<TotalsRow> => {
  const wanted = new Set(accounts)
  return [...rows.values()]
    .filter((row) => wanted.has(row.financial_account_id))
    .sort(balanceRowOrder)
    .map((row) => ({
      account: row.financial_account_id,
      book: row.book,
      debits: Number(row.debits),
      credits: Number(row.credits),
      pending: Number(row.pending)
    }))
}

/**
 * Plans one job over `prediction` and `read` (the rows of `accountsToRead`, as just read): the
 * batches decided in order, each over the rows as the ones before it leave them; the statements
 * that write them, guarded by the rows they were decided over; and the rows as the job leaves them.
 */
export const planJob = (prediction: Prediction, batches: ReadonlyArray<LaneBatch>, read: ReadonlyArray<TotalsRow>): PlannedJob => {
  const rows = new Map(prediction.rows)
  for (const row of read) {
    rows.set(balanceRowKey(row.account, row.book), {
      financial_account_id: row.account,
      book: row.book,
      debits: BigInt(row.debits),
      credits: BigInt(row.credits),
      pending: BigInt(row.pending)
    })
  }
  const accounts = touchedAccountIds(batches.flatMap((batch) => batch.postings))
  const expected = expectedRows(rows, accounts)
  const totals = totalsOf(expected)
  const statements: Array<BatchStatement> = []
  const plans: Array<NewTransfersPlan> = []
  const written: Array<NewTransfersPlan["written"][number]> = []
  for (let start = 0; start < batches.length; ) {
    // Lone postings next to each other: one set, decided in order (each refused one alone), as
    // one after another would have been; a batch request: a plan of its own.
    let end = start + 1
    if (batches[start]!.alone) while (end < batches.length && batches[end]!.alone) end++
    const group = batches.slice(start, end)
    const plan =
      group.length === 1 && !group[0]!.alone
        ? planNewTransfers(totals, group[0]!.postings, group[0]!.allOrNothing, statements)
        : planNewTransfers(
            totals,
            group.flatMap((batch) => batch.postings),
            false,
            statements,
            "per posting"
          )
    written.push(...plan.written)
    let offset = 0
    for (const batch of group) {
      plans.push(group.length === 1 ? plan : { ...plan, outcomes: plan.outcomes.slice(offset, offset + batch.postings.length) })
      offset += batch.postings.length
    }
    start = end
  }
  for (const { book, financial_account_id } of written) {
    const key = balanceRowKey(financial_account_id, book)
    rows.set(key, { financial_account_id, book, ...totals.get(key)! })
  }
  return {
    plans,
    job: { guard: { sql: TOTALS_OF, params: [JSON.stringify(accounts)], expected: JSON.stringify(expected) }, statements },
    next: { accounts: new Set([...prediction.accounts, ...accounts]), rows }
  }
}
