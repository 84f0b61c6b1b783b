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
 * Kept as 0380's were: deferred constraint triggers on issuing_transactions, run at commit in the
 * transaction of every write that moves a card transaction's amounts, status, card or creation
 * time (every writer, a host app's SQL included), upserting a run's rows in (card, interval,
 * window) order, ALL_TIME first; at commit they are every writer's last locks. 0380's triggers,
 * table and function go (its living file is deleted).
 *
 * Backfilled from the transactions already written, under a SHARE lock so that no write slips
 * between the sum and the triggers. The trigger's function is created here as first written; its
 * living text is src/functions/issuing_card_spend_totals_change.sql, applied after the migrations.
 * The same tables and backfill as the other store's migration of this id; numbered 0751, past
 * every id already applied (0750 was the latest).
 */
const TOTALS_CHANGE = `CREATE OR REPLACE FUNCTION issuing_card_spend_totals_change()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    DECLARE
      v_cards text[] := '{}'; v_at timestamptz[] := '{}'; v_amounts bigint[] := '{}'; v_counts bigint[] := '{}';
    BEGIN
      IF TG_OP <> 'INSERT' AND OLD.card_id IS NOT NULL THEN
        v_cards := ARRAY[OLD.card_id];
        v_at := ARRAY[OLD.created_at];
        v_amounts := ARRAY[-(OLD.pending_minor + OLD.settled_minor)];
        v_counts := ARRAY[CASE WHEN OLD.status IN ('PENDING', 'SETTLED') AND COALESCE(OLD.authorized_minor, OLD.amount_minor) > 0
          THEN -1 ELSE 0 END];
      END IF;
      IF TG_OP <> 'DELETE' AND NEW.card_id IS NOT NULL THEN
        v_cards := v_cards || NEW.card_id;
        v_at := v_at || NEW.created_at;
        v_amounts := v_amounts || (NEW.pending_minor + NEW.settled_minor);
        v_counts := v_counts || CASE WHEN NEW.status IN ('PENDING', 'SETTLED') AND COALESCE(NEW.authorized_minor, NEW.amount_minor) > 0
          THEN 1::bigint ELSE 0::bigint END;
      END IF;
      INSERT INTO issuing_card_spend_totals AS s (card_id, spend_interval, window_start, spent_minor, spent_count)
        SELECT u.card_id, w.spend_interval, w.window_start, SUM(u.amount), SUM(u.n)
        FROM unnest(v_cards, v_at, v_amounts, v_counts) AS u(card_id, created_at, amount, n)
        CROSS JOIN LATERAL (VALUES
          ('ALL_TIME', ''),
          ('DAILY', to_char(u.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')),
          ('MONTHLY', to_char(u.created_at AT TIME ZONE 'UTC', 'YYYY-MM') || '-01'),
          ('WEEKLY', to_char(date_trunc('week', u.created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD')),
          ('YEARLY', to_char(u.created_at AT TIME ZONE 'UTC', 'YYYY') || '-01-01')
        ) AS w(spend_interval, window_start)
        GROUP BY u.card_id, w.spend_interval, w.window_start HAVING SUM(u.amount) <> 0 OR SUM(u.n) <> 0
        ORDER BY u.card_id, w.spend_interval, w.window_start
        ON CONFLICT (card_id, spend_interval, window_start)
          DO UPDATE SET spent_minor = s.spent_minor + excluded.spent_minor, spent_count = s.spent_count + excluded.spent_count;
      RETURN NULL;
    END $function$`

/** The windows of a creation time: ALL_TIME (''), and the first day of its UTC day, ISO week, month and year. */
const WINDOWS = (at: string) => `(VALUES
    ('ALL_TIME', ''),
    ('DAILY', to_char(${at} AT TIME ZONE 'UTC', 'YYYY-MM-DD')),
    ('MONTHLY', to_char(${at} AT TIME ZONE 'UTC', 'YYYY-MM') || '-01'),
    ('WEEKLY', to_char(date_trunc('week', ${at} AT TIME ZONE 'UTC'), 'YYYY-MM-DD')),
    ('YEARLY', to_char(${at} AT TIME ZONE 'UTC', 'YYYY') || '-01-01')
  ) AS w(spend_interval, window_start)`

const AMOUNT = (row: string) => `(${row}.pending_minor + ${row}.settled_minor)`
/** Whether a row counts as an approved authorization (1) or not (0). */
const COUNTED = (row: string) =>
  `(CASE WHEN ${row}.status IN ('PENDING', 'SETTLED') AND COALESCE(${row}.authorized_minor, ${row}.amount_minor) > 0 THEN 1 ELSE 0 END)`

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE issuing_cards ADD COLUMN spending_limits text NOT NULL DEFAULT '[]'`
  yield* sql`UPDATE issuing_cards
    SET spending_limits = json_build_array(json_build_object('interval', spending_interval, 'amount', spending_amount_minor, 'count', NULL))::text
    WHERE spending_interval IS NOT NULL`
  yield* sql`ALTER TABLE issuing_cards DROP COLUMN spending_interval, DROP COLUMN spending_amount_minor`

  for (const name of ["insert", "update", "delete"]) yield* sql.unsafe(`DROP TRIGGER issuing_card_spend_${name} ON issuing_transactions`)
  yield* sql`DROP TABLE issuing_card_spend`
  yield* sql`CREATE TABLE issuing_card_spend_totals (
    card_id text NOT NULL,
    spend_interval text NOT NULL,
    window_start text NOT NULL,
    spent_minor bigint NOT NULL,
    spent_count bigint NOT NULL,
    PRIMARY KEY (card_id, spend_interval, window_start)
  )`
  yield* sql`LOCK TABLE issuing_transactions IN SHARE MODE`
  yield* sql.unsafe(`INSERT INTO issuing_card_spend_totals (card_id, spend_interval, window_start, spent_minor, spent_count)
    SELECT t.card_id, w.spend_interval, w.window_start, SUM(${AMOUNT("t")}), SUM(${COUNTED("t")})
    FROM issuing_transactions t CROSS JOIN LATERAL ${WINDOWS("t.created_at")}
    WHERE t.card_id IS NOT NULL
    GROUP BY t.card_id, w.spend_interval, w.window_start
    HAVING SUM(${AMOUNT("t")}) <> 0 OR SUM(${COUNTED("t")}) <> 0`)
  yield* sql.unsafe(TOTALS_CHANGE)
  for (const [name, event, when] of [
    ["insert", "INSERT", `NEW.card_id IS NOT NULL AND (${AMOUNT("NEW")} <> 0 OR ${COUNTED("NEW")} <> 0)`],
    [
      "update",
      "UPDATE OF card_id, created_at, pending_minor, settled_minor, status, authorized_minor",
      `(OLD.card_id IS NOT NULL OR NEW.card_id IS NOT NULL) AND (OLD.card_id IS DISTINCT FROM NEW.card_id
        OR OLD.created_at IS DISTINCT FROM NEW.created_at OR ${AMOUNT("OLD")} <> ${AMOUNT("NEW")} OR ${COUNTED("OLD")} <> ${COUNTED("NEW")})`
    ],
    ["delete", "DELETE", `OLD.card_id IS NOT NULL AND (${AMOUNT("OLD")} <> 0 OR ${COUNTED("OLD")} <> 0)`]
  ] as const) {
    yield* sql.unsafe(`CREATE CONSTRAINT TRIGGER issuing_card_spend_totals_${name} AFTER ${event} ON issuing_transactions
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (${when}) EXECUTE FUNCTION issuing_card_spend_totals_change()`)
  }
  yield* sql`DROP FUNCTION issuing_card_spend_change()`
})
