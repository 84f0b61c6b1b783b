import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A card's spend kept as it changes (docs/card-transactions.md#spend-controls): the spending
 * period of an authorization summed the card's transactions of the window — for ALL_TIME its whole
 * history — so its cost grew with the card's transactions. `issuing_card_spend` holds, per card,
 * `pending_minor + settled_minor` of its transactions by the UTC day of their `created_at` (`day`
 * 'YYYY-MM-DD', the first ten characters of the ISO 8601 text this store keeps), plus the all-time
 * total under day '' (before every date, so no window's range `day >= first day` reads it). A
 * window starts at a UTC midnight, so its spend is the sum of at most 366 day rows (YEARLY),
 * ALL_TIME one row.
 *
 * Row triggers on issuing_transactions keep it in the transaction of every write that changes a
 * card transaction's amounts, its day or its card — the synchronous card posting, the expiry
 * sweep, a host app's own SQL alike — as they keep the list counts. Their WHEN skips rows without
 * a card (a book transfer's transaction, the writer thread's batches) and writes that change no
 * amount. One writer at a time: no lock order to keep (the other store's triggers run at commit).
 *
 * Backfilled from the transactions already written (the migration holds the write lock); the same
 * table and backfill as the other store's migration of this id. Numbered 0380, past every id
 * already applied.
 */
const DAY = (row: string) => `substr(${row}.created_at, 1, 10)`
const AMOUNT = (row: string) => `${row}.pending_minor + ${row}.settled_minor`

/** Adds `sign` × the row's amount to its card's all-time and day rows, when the row has a card. */
const add = (row: "NEW" | "OLD", sign: "" | "-") => `INSERT INTO issuing_card_spend (card_id, day, spent_minor)
    SELECT ${row}.card_id, '', ${sign}(${AMOUNT(row)}) WHERE ${row}.card_id IS NOT NULL
    UNION ALL SELECT ${row}.card_id, ${DAY(row)}, ${sign}(${AMOUNT(row)}) WHERE ${row}.card_id IS NOT NULL
    ON CONFLICT (card_id, day) DO UPDATE SET spent_minor = spent_minor + excluded.spent_minor;`

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE issuing_card_spend (
    card_id TEXT NOT NULL,
    day TEXT NOT NULL,
    spent_minor INTEGER NOT NULL,
    PRIMARY KEY (card_id, day)
  ) WITHOUT ROWID`
  yield* sql.unsafe(`INSERT INTO issuing_card_spend (card_id, day, spent_minor)
    SELECT card_id, day, SUM(amount) FROM (
      SELECT card_id, ${DAY("t")} AS day, ${AMOUNT("t")} AS amount FROM issuing_transactions t WHERE card_id IS NOT NULL
      UNION ALL
      SELECT card_id, '', ${AMOUNT("t")} FROM issuing_transactions t WHERE card_id IS NOT NULL
    ) x
    GROUP BY card_id, day HAVING SUM(amount) <> 0`)
  const columns = "UPDATE OF card_id, created_at, pending_minor, settled_minor"
  const sameKey = `NEW.card_id IS OLD.card_id AND ${DAY("NEW")} = ${DAY("OLD")}`
  // The common write (a message on a card transaction): its amount moves, its card and day stay.
  yield* sql.unsafe(`CREATE TRIGGER issuing_card_spend_update AFTER ${columns} ON issuing_transactions
    WHEN NEW.card_id IS NOT NULL AND ${sameKey} AND ${AMOUNT("NEW")} <> ${AMOUNT("OLD")}
    BEGIN
      INSERT INTO issuing_card_spend (card_id, day, spent_minor)
        VALUES (NEW.card_id, '', ${AMOUNT("NEW")} - (${AMOUNT("OLD")})), (NEW.card_id, ${DAY("NEW")}, ${AMOUNT("NEW")} - (${AMOUNT("OLD")}))
        ON CONFLICT (card_id, day) DO UPDATE SET spent_minor = spent_minor + excluded.spent_minor;
    END`)
  // A row moved to another card or day (SQL outside the platform's writes): out of the old rows, into the new.
  yield* sql.unsafe(`CREATE TRIGGER issuing_card_spend_move AFTER ${columns} ON issuing_transactions
    WHEN (OLD.card_id IS NOT NULL OR NEW.card_id IS NOT NULL) AND NOT (${sameKey})
    BEGIN
      ${add("OLD", "-")}
      ${add("NEW", "")}
    END`)
  yield* sql.unsafe(`CREATE TRIGGER issuing_card_spend_insert AFTER INSERT ON issuing_transactions
    WHEN NEW.card_id IS NOT NULL AND ${AMOUNT("NEW")} <> 0
    BEGIN ${add("NEW", "")} END`)
  yield* sql.unsafe(`CREATE TRIGGER issuing_card_spend_delete AFTER DELETE ON issuing_transactions
    WHEN OLD.card_id IS NOT NULL AND ${AMOUNT("OLD")} <> 0
    BEGIN ${add("OLD", "-")} END`)
})
