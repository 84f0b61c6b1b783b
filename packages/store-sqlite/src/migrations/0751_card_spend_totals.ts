import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A card's spending limits and their running totals (docs/card-transactions.md#running-totals).
 *
 * Limits: a card takes up to five (`spending_limits`, a JSON array of `{interval, amount, count}`
 * kept as the merchant lists are); each card's one spending period (`spending_interval`,
 * `spending_amount_minor`) becomes its one limit, and those columns go.
 *
 * Totals: `issuing_card_spend` (0380) kept a card's spend per UTC day, and a window summed up to 366
 * of its rows (YEARLY) at every authorization, with no count of authorizations.
 * `issuing_card_spend_totals` keeps, per card, interval and window (`window_start` its first day
 * 'YYYY-MM-DD', '' for ALL_TIME), `pending_minor + settled_minor` of the card's transactions
 * created in it and how many of them are approved authorizations not released whole (PENDING or
 * SETTLED, something authorized: a declined, voided or expired one, a force post or an unlinked
 * refund counts 0). A limit reads one row, whatever the card's history. Every window of every
 * interval is kept for every card transaction, whether or not its card has a limit of that
 * interval, so a limit added by a PATCH reads an exact total at once.
 *
 * Kept as 0380's were: row triggers on issuing_transactions in the transaction of every write that
 * moves a card transaction's amounts, status, card or creation time (one writer at a time: no
 * lock order to keep). 0380's triggers and table go. Backfilled from the transactions already
 * written (the migration holds the write lock); the same tables and backfill as the other store's
 * migration of this id; numbered 0751, past every id already applied (0750 was the latest).
 */
const DAY = (at: string) => `substr(${at}, 1, 10)`
/** The five intervals, as rows `w.spend_interval` to join each transaction row with. */
const INTERVALS = `(SELECT 'ALL_TIME' AS spend_interval UNION ALL SELECT 'DAILY' UNION ALL SELECT 'MONTHLY'
    UNION ALL SELECT 'WEEKLY' UNION ALL SELECT 'YEARLY') w`
/** The window of `w.spend_interval` holding a creation time (ISO 8601 text): '' for ALL_TIME, else its first UTC day. */
const WINDOW_START = (at: string) => `CASE w.spend_interval
    WHEN 'ALL_TIME' THEN ''
    WHEN 'DAILY' THEN ${DAY(at)}
    WHEN 'MONTHLY' THEN substr(${at}, 1, 7) || '-01'
    WHEN 'WEEKLY' THEN date(${DAY(at)}, '-' || ((CAST(strftime('%w', ${DAY(at)}) AS INTEGER) + 6) % 7) || ' days')
    ELSE substr(${at}, 1, 4) || '-01-01' END`
const AMOUNT = (row: string) => `(${row}.pending_minor + ${row}.settled_minor)`
/** Whether a row counts as an approved authorization (1) or not (0). */
const COUNTED = (row: string) =>
  `(CASE WHEN ${row}.status IN ('PENDING', 'SETTLED') AND COALESCE(${row}.authorized_minor, ${row}.amount_minor) > 0 THEN 1 ELSE 0 END)`
const UPSERT = `ON CONFLICT (card_id, spend_interval, window_start)
    DO UPDATE SET spent_minor = spent_minor + excluded.spent_minor, spent_count = spent_count + excluded.spent_count;`

/** Adds `amount` and `count` (SQL expressions) to the windows of `row`'s card and creation time. */
const add = (row: "NEW" | "OLD", amount: string, count: string) => `INSERT INTO issuing_card_spend_totals
    (card_id, spend_interval, window_start, spent_minor, spent_count)
    SELECT ${row}.card_id, w.spend_interval, ${WINDOW_START(`${row}.created_at`)}, ${amount}, ${count} FROM ${INTERVALS}
    WHERE ${row}.card_id IS NOT NULL
    ${UPSERT}`

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE issuing_cards ADD COLUMN spending_limits TEXT NOT NULL DEFAULT '[]'`
  yield* sql`UPDATE issuing_cards
    SET spending_limits = json_array(json_object('interval', spending_interval, 'amount', spending_amount_minor, 'count', NULL))
    WHERE spending_interval IS NOT NULL`
  yield* sql`ALTER TABLE issuing_cards DROP COLUMN spending_interval`
  yield* sql`ALTER TABLE issuing_cards DROP COLUMN spending_amount_minor`

  for (const name of ["insert", "update", "move", "delete"]) yield* sql.unsafe(`DROP TRIGGER issuing_card_spend_${name}`)
  yield* sql`DROP TABLE issuing_card_spend`
  yield* sql`CREATE TABLE issuing_card_spend_totals (
    card_id TEXT NOT NULL,
    spend_interval TEXT NOT NULL,
    window_start TEXT NOT NULL,
    spent_minor INTEGER NOT NULL,
    spent_count INTEGER NOT NULL,
    PRIMARY KEY (card_id, spend_interval, window_start)
  ) WITHOUT ROWID`
  yield* sql.unsafe(`INSERT INTO issuing_card_spend_totals (card_id, spend_interval, window_start, spent_minor, spent_count)
    SELECT t.card_id, w.spend_interval, ${WINDOW_START("t.created_at")} AS window_start, SUM(${AMOUNT("t")}), SUM(${COUNTED("t")})
    FROM issuing_transactions t CROSS JOIN ${INTERVALS}
    WHERE t.card_id IS NOT NULL
    GROUP BY t.card_id, w.spend_interval, window_start
    HAVING SUM(${AMOUNT("t")}) <> 0 OR SUM(${COUNTED("t")}) <> 0`)
  const columns = "UPDATE OF card_id, created_at, pending_minor, settled_minor, status, authorized_minor"
  const sameKey = `NEW.card_id IS OLD.card_id AND NEW.created_at = OLD.created_at`
  // The common write (a message on a card transaction): its amount or status moves, its card and time stay.
  yield* sql.unsafe(`CREATE TRIGGER issuing_card_spend_totals_update AFTER ${columns} ON issuing_transactions
    WHEN NEW.card_id IS NOT NULL AND ${sameKey} AND (${AMOUNT("NEW")} <> ${AMOUNT("OLD")} OR ${COUNTED("NEW")} <> ${COUNTED("OLD")})
    BEGIN ${add("NEW", `${AMOUNT("NEW")} - ${AMOUNT("OLD")}`, `${COUNTED("NEW")} - ${COUNTED("OLD")}`)} END`)
  // A row moved to another card or time (SQL outside the platform's writes): out of the old windows, into the new.
  yield* sql.unsafe(`CREATE TRIGGER issuing_card_spend_totals_move AFTER ${columns} ON issuing_transactions
    WHEN (OLD.card_id IS NOT NULL OR NEW.card_id IS NOT NULL) AND NOT (${sameKey})
    BEGIN
      ${add("OLD", `-${AMOUNT("OLD")}`, `-${COUNTED("OLD")}`)}
      ${add("NEW", AMOUNT("NEW"), COUNTED("NEW"))}
    END`)
  yield* sql.unsafe(`CREATE TRIGGER issuing_card_spend_totals_insert AFTER INSERT ON issuing_transactions
    WHEN NEW.card_id IS NOT NULL AND (${AMOUNT("NEW")} <> 0 OR ${COUNTED("NEW")} <> 0)
    BEGIN ${add("NEW", AMOUNT("NEW"), COUNTED("NEW"))} END`)
  yield* sql.unsafe(`CREATE TRIGGER issuing_card_spend_totals_delete AFTER DELETE ON issuing_transactions
    WHEN OLD.card_id IS NOT NULL AND (${AMOUNT("OLD")} <> 0 OR ${COUNTED("OLD")} <> 0)
    BEGIN ${add("OLD", `-${AMOUNT("OLD")}`, `-${COUNTED("OLD")}`)} END`)
})
