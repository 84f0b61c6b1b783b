import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A card's spend kept as it changes (docs/card-transactions.md#spend-controls): the spending
 * period of an authorization summed the card's transactions of the window — for ALL_TIME its whole
 * history — under the card's row lock, so its cost grew with the card's transactions.
 * `issuing_card_spend` holds, per card, `pending_minor + settled_minor` of its transactions by the
 * UTC day of their `created_at` (`day` 'YYYY-MM-DD'), plus the all-time total under day '' (before
 * every date, so no window's range `day >= first day` reads it). A window starts at a UTC midnight,
 * so its spend is the sum of at most 366 day rows (YEARLY), ALL_TIME one row.
 *
 * Row triggers on issuing_transactions keep it in the transaction of every write that changes a
 * card transaction's amounts, its day or its card — `issuing_post_card_message`, the expiry sweep,
 * a host app's own SQL alike — as they keep the list counts. Their WHEN skips rows without a card
 * (a book transfer's transaction runs no trigger function) and writes that change no amount.
 *
 * The triggers are constraint triggers deferred to the commit: a card message locks the wallet's
 * balance row before or after it writes the transaction (a return posts its transfer after), so
 * a spend row locked at the write would take locks in either order against an authorization
 * (balance row, then spend row) and deadlock; taken at commit, after every other lock, it is the
 * last lock of every writer, held only through the commit. The rows of one trigger run are
 * upserted in (card, day) order, so '' comes first for every writer.
 *
 * Backfilled from the transactions already written, under a SHARE lock so that no write slips
 * between the sum and the triggers; the same table and backfill as the other store's migration of
 * this id. Numbered 0380, past every id already applied.
 */
const DAY = (row: string) => `to_char(${row}.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')`

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE issuing_card_spend (
    card_id TEXT NOT NULL,
    day TEXT NOT NULL,
    spent_minor BIGINT NOT NULL,
    PRIMARY KEY (card_id, day)
  )`
  yield* sql`LOCK TABLE issuing_transactions IN SHARE MODE`
  yield* sql.unsafe(`INSERT INTO issuing_card_spend (card_id, day, spent_minor)
    SELECT card_id, day, SUM(amount) FROM (
      SELECT card_id, ${DAY("t")} AS day, pending_minor + settled_minor AS amount FROM issuing_transactions t WHERE card_id IS NOT NULL
      UNION ALL
      SELECT card_id, '', pending_minor + settled_minor FROM issuing_transactions WHERE card_id IS NOT NULL
    ) x
    GROUP BY card_id, day HAVING SUM(amount) <> 0`)
  // The row's amount taken off its old card and day and added to its new ones, as one upsert.
  yield* sql.unsafe(`CREATE FUNCTION issuing_card_spend_change() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE v_cards text[] := '{}'; v_days text[] := '{}'; v_amounts bigint[] := '{}';
    BEGIN
      IF TG_OP <> 'INSERT' AND OLD.card_id IS NOT NULL THEN
        v_cards := ARRAY[OLD.card_id, OLD.card_id];
        v_days := ARRAY['', ${DAY("OLD")}];
        v_amounts := ARRAY[-(OLD.pending_minor + OLD.settled_minor), -(OLD.pending_minor + OLD.settled_minor)];
      END IF;
      IF TG_OP <> 'DELETE' AND NEW.card_id IS NOT NULL THEN
        v_cards := v_cards || ARRAY[NEW.card_id, NEW.card_id];
        v_days := v_days || ARRAY['', ${DAY("NEW")}];
        v_amounts := v_amounts || ARRAY[NEW.pending_minor + NEW.settled_minor, NEW.pending_minor + NEW.settled_minor];
      END IF;
      INSERT INTO issuing_card_spend (card_id, day, spent_minor)
        SELECT u.card_id, u.day, SUM(u.amount) FROM unnest(v_cards, v_days, v_amounts) AS u(card_id, day, amount)
        GROUP BY u.card_id, u.day HAVING SUM(u.amount) <> 0
        ORDER BY u.card_id, u.day
        ON CONFLICT (card_id, day) DO UPDATE SET spent_minor = issuing_card_spend.spent_minor + excluded.spent_minor;
      RETURN NULL;
    END $$`)
  const amount = (row: string) => `${row}.pending_minor + ${row}.settled_minor`
  for (const [name, event, when] of [
    ["insert", "INSERT", `NEW.card_id IS NOT NULL AND ${amount("NEW")} <> 0`],
    [
      "update",
      "UPDATE OF card_id, created_at, pending_minor, settled_minor",
      `(OLD.card_id IS NOT NULL OR NEW.card_id IS NOT NULL) AND (OLD.card_id IS DISTINCT FROM NEW.card_id
        OR OLD.created_at IS DISTINCT FROM NEW.created_at OR ${amount("OLD")} <> ${amount("NEW")})`
    ],
    ["delete", "DELETE", `OLD.card_id IS NOT NULL AND ${amount("OLD")} <> 0`]
  ] as const) {
    yield* sql.unsafe(`CREATE CONSTRAINT TRIGGER issuing_card_spend_${name} AFTER ${event} ON issuing_transactions
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (${when}) EXECUTE FUNCTION issuing_card_spend_change()`)
  }
})
