import { SqlClient } from "@effect/sql"
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { toInt, toIso } from "../platform/Rows.js"

/**
 * The maintained card spend (`issuing_card_spend`, docs/card-transactions.md#spend-controls)
 * recomputed from the card transactions themselves, for tests: per card, `pending_minor +
 * settled_minor` summed by the UTC day of `created_at`, and over all days under day ''. Rows whose
 * sum is 0 are left out on both sides (a reversed hold leaves its maintained row at 0).
 */
export interface CardSpend {
  readonly card_id: string
  readonly day: string
  readonly spent_minor: number
}

const sorted = (rows: ReadonlyArray<CardSpend>) =>
  rows
    .filter((row) => row.spent_minor !== 0)
    .sort((a, b) => (a.card_id < b.card_id ? -1 : a.card_id > b.card_id ? 1 : a.day < b.day ? -1 : a.day > b.day ? 1 : 0))

/** What `issuing_card_spend` should hold, summed here from every card transaction. */
export const expectedCardSpend = Effect.gen(function* () {
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  const rows = yield* sql`SELECT card_id, created_at, pending_minor, settled_minor FROM issuing_transactions WHERE card_id IS NOT NULL`
  const sums = new Map<string, CardSpend>()
  const add = (card_id: string, day: string, amount: number) => {
    const key = `${card_id}\u0000${day}`
    sums.set(key, { card_id, day, spent_minor: (sums.get(key)?.spent_minor ?? 0) + amount })
  }
  for (const row of rows) {
    const amount = toInt(row.pending_minor) + toInt(row.settled_minor)
    add(row.card_id as string, "", amount)
    add(row.card_id as string, toIso(row.created_at).slice(0, 10), amount)
  }
  return sorted([...sums.values()])
})

/** What `issuing_card_spend` holds. */
export const maintainedCardSpend = Effect.gen(function* () {
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  const rows = yield* sql`SELECT card_id, day, spent_minor FROM issuing_card_spend`
  return sorted(rows.map((row) => ({ card_id: row.card_id as string, day: row.day as string, spent_minor: toInt(row.spent_minor) })))
})

/** The columns of a card transaction row the steps below write. */
const transactionRow = (programId: string, id: string, cardId: string | null, createdAt: string, pending: number, settled: number) => ({
  id,
  program_id: programId,
  status: pending > 0 ? "PENDING" : settled > 0 ? "SETTLED" : "DECLINED",
  amount_minor: Math.max(pending + settled, 1),
  currency: "USD",
  card_id: cardId,
  created_at: createdAt,
  updated_at: createdAt,
  pending_minor: pending,
  settled_minor: settled
})

/**
 * Writes of every kind the triggers must follow, each in its own transaction (one statement) and
 * some together in one, asserting after each that `issuing_card_spend` equals the sums of the rows:
 * card transactions inserted (one declined: nothing to add), their amounts moved as messages move
 * them, one moved across UTC midnight and to another card and to none, a transaction without a
 * card (nothing), a delete. For the stores' migration tests, on a database with program `programId`.
 */
export const cardSpendTriggerSteps = (programId: string) =>
  Effect.gen(function* () {
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const check = (step: string) =>
      Effect.gen(function* () {
        expect(yield* maintainedCardSpend, step).toEqual(yield* expectedCardSpend)
      })
    const insert = (row: ReturnType<typeof transactionRow>) => sql`INSERT INTO issuing_transactions ${sql.insert(row)}`
    const steps: ReadonlyArray<readonly [string, Effect.Effect<unknown, unknown>]> = [
      ["authorization", insert(transactionRow(programId, "txn_spend_a", "card_spend_x", "2026-03-01T23:59:59.999Z", 100, 0))],
      ["decline", insert(transactionRow(programId, "txn_spend_b", "card_spend_x", "2026-03-02T00:00:00.000Z", 0, 0))],
      ["no card", insert(transactionRow(programId, "txn_spend_c", null, "2026-03-02T00:00:00.000Z", 0, 50))],
      ["clearing", sql`UPDATE issuing_transactions SET pending_minor = 40, settled_minor = 60 WHERE id = 'txn_spend_a'`],
      ["release and return", sql`UPDATE issuing_transactions SET pending_minor = 0, settled_minor = 30 WHERE id = 'txn_spend_a'`],
      ["across midnight", sql`UPDATE issuing_transactions SET created_at = ${"2026-03-02T00:00:00.000Z"} WHERE id = 'txn_spend_a'`],
      ["another card", sql`UPDATE issuing_transactions SET card_id = 'card_spend_y' WHERE id = 'txn_spend_a'`],
      ["no card any more", sql`UPDATE issuing_transactions SET card_id = NULL WHERE id = 'txn_spend_a'`],
      ["a card again", sql`UPDATE issuing_transactions SET card_id = 'card_spend_x', settled_minor = 35 WHERE id = 'txn_spend_a'`],
      [
        "unchanged amount",
        sql`UPDATE issuing_transactions SET status = 'SETTLED', updated_at = ${"2026-03-03T00:00:00.000Z"} WHERE id = 'txn_spend_a'`
      ],
      [
        "several writes in one transaction",
        sql.withTransaction(
          Effect.all([
            insert(transactionRow(programId, "txn_spend_d", "card_spend_x", "2026-03-04T12:00:00.000Z", 10, 0)),
            sql`UPDATE issuing_transactions SET pending_minor = 5 WHERE id = 'txn_spend_d'`,
            sql`UPDATE issuing_transactions SET settled_minor = 1 WHERE id = 'txn_spend_a'`
          ])
        )
      ],
      ["delete", sql`DELETE FROM issuing_transactions WHERE id = 'txn_spend_d'`]
    ]
    for (const [step, write] of steps) {
      yield* write
      yield* check(step)
    }
    const [allTime] = yield* sql`SELECT spent_minor FROM issuing_card_spend WHERE card_id = 'card_spend_x' AND day = ''`
    expect(toInt(allTime!.spent_minor)).toBe(1)
  })

/**
 * Card transactions written before migration 0380, for both stores' migration checks: two cards,
 * either side of a UTC midnight, held, settled, partly returned, declined; and one without a card.
 */
export const insertCardSpendFixture = (programId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.all(
      (
        [
          ["txn_380_held", "card_380_a", "2026-02-01T23:59:59.999Z", "PENDING", 40, 0],
          ["txn_380_settled", "card_380_a", "2026-02-02T00:00:00.000Z", "SETTLED", 0, 25],
          ["txn_380_cleared", "card_380_a", "2026-02-02T08:00:00.000Z", "PENDING", 5, 12],
          ["txn_380_declined", "card_380_a", "2026-02-02T09:00:00.000Z", "DECLINED", 0, 0],
          ["txn_380_other", "card_380_b", "2026-02-01T10:00:00.000Z", "SETTLED", 0, 7],
          ["txn_380_book", null, "2026-02-01T10:00:00.000Z", "SETTLED", 0, 0]
        ] as const
      ).map(
        ([id, card, at, status, pending, settled]) =>
          sql`INSERT INTO issuing_transactions (id, program_id, status, amount_minor, currency, card_id, created_at, updated_at,
                pending_minor, settled_minor)
              VALUES (${id}, ${programId}, ${status}, 50, 'USD', ${card}, ${at}, ${at}, ${pending}, ${settled})`
      )
    )
  )

/** The fixture's backfilled spend: per card and UTC day, and all time under day ''. */
export const checkCardSpendFixture = Effect.gen(function* () {
  const spend = yield* maintainedCardSpend
  expect(spend.filter((row) => row.card_id.startsWith("card_380_"))).toEqual([
    { card_id: "card_380_a", day: "", spent_minor: 82 },
    { card_id: "card_380_a", day: "2026-02-01", spent_minor: 40 },
    { card_id: "card_380_a", day: "2026-02-02", spent_minor: 42 },
    { card_id: "card_380_b", day: "", spent_minor: 7 },
    { card_id: "card_380_b", day: "2026-02-01", spent_minor: 7 }
  ])
  expect(spend).toEqual(yield* expectedCardSpend)
})
