import { SqlClient } from "@effect/sql"
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { type WindowedInterval, windowKey } from "../cards/SpendRules.js"
import { toInt, toIso } from "../platform/Rows.js"

/**
 * The running totals (`issuing_card_spend_totals`, docs/card-transactions.md#running-totals)
 * recomputed from the card transactions themselves, for tests: per card, interval and window of
 * `created_at` (its first UTC day by SpendRules.windowKey, '' for ALL_TIME), `pending_minor +
 * settled_minor` summed, and the approved authorizations not released whole counted (PENDING or
 * SETTLED with something authorized). Rows whose sums are both 0 are left out on both sides (a
 * reversed hold leaves its maintained rows at 0).
 */
export interface CardSpendTotal {
  readonly card_id: string
  readonly interval: WindowedInterval
  readonly window: string
  readonly spent_minor: number
  readonly spent_count: number
}

/** Every interval the totals are kept for. */
export const TOTAL_INTERVALS: ReadonlyArray<WindowedInterval> = ["ALL_TIME", "DAILY", "MONTHLY", "WEEKLY", "YEARLY"]

const keyOf = (row: Pick<CardSpendTotal, "card_id" | "interval" | "window">) => `${row.card_id}\u0000${row.interval}\u0000${row.window}`

const sorted = (rows: ReadonlyArray<CardSpendTotal>) =>
  rows
    .filter((row) => row.spent_minor !== 0 || row.spent_count !== 0)
    .sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0))

/** Whether a card transaction row counts as an approved authorization, as the triggers decide it. */
const counted = (row: any) =>
  (row.status === "PENDING" || row.status === "SETTLED") && toInt(row.authorized_minor ?? row.amount_minor) > 0 ? 1 : 0

/** What `issuing_card_spend_totals` should hold, summed here from every card transaction. */
export const expectedSpendTotals = Effect.gen(function* () {
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  const rows = yield* sql`SELECT card_id, created_at, status, amount_minor, authorized_minor, pending_minor, settled_minor
                          FROM issuing_transactions WHERE card_id IS NOT NULL`
  const sums = new Map<string, CardSpendTotal>()
  for (const row of rows) {
    const amount = toInt(row.pending_minor) + toInt(row.settled_minor)
    const at = Date.parse(toIso(row.created_at))
    for (const interval of TOTAL_INTERVALS) {
      const key = { card_id: row.card_id as string, interval, window: windowKey(interval, at) }
      const before = sums.get(keyOf(key))
      sums.set(keyOf(key), {
        ...key,
        spent_minor: (before?.spent_minor ?? 0) + amount,
        spent_count: (before?.spent_count ?? 0) + counted(row)
      })
    }
  }
  return sorted([...sums.values()])
})

/** What `issuing_card_spend_totals` holds. */
export const maintainedSpendTotals = Effect.gen(function* () {
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  const rows = yield* sql`SELECT card_id, spend_interval, window_start, spent_minor, spent_count FROM issuing_card_spend_totals`
  return sorted(
    rows.map((row) => ({
      card_id: row.card_id as string,
      interval: row.spend_interval as WindowedInterval,
      window: row.window_start as string,
      spent_minor: toInt(row.spent_minor),
      spent_count: toInt(row.spent_count)
    }))
  )
})

/** The columns of a card transaction row the steps below write. */
const transactionRow = (
  programId: string,
  id: string,
  cardId: string | null,
  createdAt: string,
  status: string,
  pending: number,
  settled: number
) => ({
  id,
  program_id: programId,
  status,
  amount_minor: Math.max(pending + settled, 1),
  currency: "USD",
  card_id: cardId,
  created_at: createdAt,
  updated_at: createdAt,
  authorized_minor: Math.max(pending + settled, 1),
  pending_minor: pending,
  settled_minor: settled
})

/**
 * Writes of every kind the triggers must follow, each in its own transaction (one statement) and
 * some together in one, asserting after each that `issuing_card_spend_totals` equals the sums of
 * the rows: card transactions inserted (one declined: nothing to add), their amounts and status
 * moved as messages move them (a void takes its count off, a late presentment puts it back), one
 * moved across a UTC midnight that is also a week's, a month's and a year's end, to another card
 * and to none, a transaction without a card (nothing), a delete. For the stores' migration tests,
 * on a database with program `programId`.
 */
export const spendTotalsTriggerSteps = (programId: string) =>
  Effect.gen(function* () {
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const check = (step: string) =>
      Effect.gen(function* () {
        expect(yield* maintainedSpendTotals, step).toEqual(yield* expectedSpendTotals)
      })
    const insert = (row: ReturnType<typeof transactionRow>) => sql`INSERT INTO issuing_transactions ${sql.insert(row)}`
    const steps: ReadonlyArray<readonly [string, Effect.Effect<unknown, unknown>]> = [
      ["authorization", insert(transactionRow(programId, "txn_720_a", "card_720_x", "2028-12-31T23:59:59.999Z", "PENDING", 100, 0))],
      ["decline", insert(transactionRow(programId, "txn_720_b", "card_720_x", "2029-01-01T00:00:00.000Z", "DECLINED", 0, 0))],
      ["no card", insert(transactionRow(programId, "txn_720_c", null, "2029-01-01T00:00:00.000Z", "SETTLED", 0, 50))],
      ["clearing", sql`UPDATE issuing_transactions SET pending_minor = 40, settled_minor = 60 WHERE id = 'txn_720_a'`],
      ["void", sql`UPDATE issuing_transactions SET status = 'VOIDED', pending_minor = 0, settled_minor = 0 WHERE id = 'txn_720_a'`],
      ["late presentment", sql`UPDATE issuing_transactions SET status = 'SETTLED', settled_minor = 30 WHERE id = 'txn_720_a'`],
      ["across midnight", sql`UPDATE issuing_transactions SET created_at = ${"2029-01-01T00:00:00.000Z"} WHERE id = 'txn_720_a'`],
      ["another card", sql`UPDATE issuing_transactions SET card_id = 'card_720_y' WHERE id = 'txn_720_a'`],
      ["no card any more", sql`UPDATE issuing_transactions SET card_id = NULL WHERE id = 'txn_720_a'`],
      ["a card again", sql`UPDATE issuing_transactions SET card_id = 'card_720_x', settled_minor = 35 WHERE id = 'txn_720_a'`],
      [
        "unchanged amount and count",
        sql`UPDATE issuing_transactions SET updated_at = ${"2029-01-03T00:00:00.000Z"} WHERE id = 'txn_720_a'`
      ],
      [
        "several writes in one transaction",
        sql.withTransaction(
          Effect.all([
            insert(transactionRow(programId, "txn_720_d", "card_720_x", "2029-01-04T12:00:00.000Z", "PENDING", 10, 0)),
            sql`UPDATE issuing_transactions SET pending_minor = 5 WHERE id = 'txn_720_d'`,
            sql`UPDATE issuing_transactions SET settled_minor = 1 WHERE id = 'txn_720_a'`
          ])
        )
      ],
      ["delete", sql`DELETE FROM issuing_transactions WHERE id = 'txn_720_d'`]
    ]
    for (const [step, write] of steps) {
      yield* write
      yield* check(step)
    }
    const [allTime] =
      yield* sql`SELECT spent_minor, spent_count FROM issuing_card_spend_totals WHERE card_id = 'card_720_x' AND spend_interval = 'ALL_TIME'`
    expect([toInt(allTime!.spent_minor), toInt(allTime!.spent_count)]).toEqual([1, 1])
  })

/** The backfilled totals of 0380's fixture (CardSpendChecks.insertCardSpendFixture), as 0751 computes them. */
export const checkSpendTotalsFixture = Effect.gen(function* () {
  const totals = yield* maintainedSpendTotals
  const a = totals.filter((row) => row.card_id === "card_380_a")
  // Held 40 on Sunday 1 February 2026; settled 25, partly cleared 5 + 12 and declined on Monday the 2nd.
  expect(a).toEqual([
    { card_id: "card_380_a", interval: "ALL_TIME", window: "", spent_minor: 82, spent_count: 3 },
    { card_id: "card_380_a", interval: "DAILY", window: "2026-02-01", spent_minor: 40, spent_count: 1 },
    { card_id: "card_380_a", interval: "DAILY", window: "2026-02-02", spent_minor: 42, spent_count: 2 },
    { card_id: "card_380_a", interval: "MONTHLY", window: "2026-02-01", spent_minor: 82, spent_count: 3 },
    { card_id: "card_380_a", interval: "WEEKLY", window: "2026-01-26", spent_minor: 40, spent_count: 1 },
    { card_id: "card_380_a", interval: "WEEKLY", window: "2026-02-02", spent_minor: 42, spent_count: 2 },
    { card_id: "card_380_a", interval: "YEARLY", window: "2026-01-01", spent_minor: 82, spent_count: 3 }
  ])
  expect(totals).toEqual(yield* expectedSpendTotals)
})
