// `npm run bench -- spend-triggers [--rounds=10] [--messages=400]`
//
// What the card spend's triggers cost a card message on PostgreSQL, apart from everything else a
// message does: on a table of the columns they read (issuing_transactions' id, card, creation
// time, status and amounts), `--messages` holds opened and cleared (an INSERT and an UPDATE each,
// the two writes of an authorization and its clearing) in one transaction per round, so the
// deferred triggers run at its commit, with
//   none    no spend trigger;
//   0380    migration 0380's per-day total (two rows per write: the day and all time), its text below;
//   0751    the running totals (five rows per write: ALL_TIME, DAILY, MONTHLY, WEEKLY, YEARLY, with
//           the count), src/functions/issuing_card_spend_totals_change.sql and its triggers as
//           store-pg/schema/current.sql has them;
// switched by ENABLE/DISABLE TRIGGER in alternated rounds on one database. Prints µs per write, the
// median of the rounds (docs/decisions.md#spending-limits-several-per-card-amounts-and-counts-running-totals).
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { option } from "./support/common.js"
import { createDatabase, startPostgres, withPgClient } from "./support/postgres.js"

const ROOT = path.resolve(import.meta.dirname, "..")

/** Migration 0380's trigger function and triggers, as they were before 0751 replaced them. */
const PER_DAY_FUNCTION = `CREATE OR REPLACE FUNCTION issuing_card_spend_change()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    DECLARE v_cards text[] := '{}'; v_days text[] := '{}'; v_amounts bigint[] := '{}';
    BEGIN
      IF TG_OP <> 'INSERT' AND OLD.card_id IS NOT NULL THEN
        v_cards := ARRAY[OLD.card_id, OLD.card_id];
        v_days := ARRAY['', to_char(OLD.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')];
        v_amounts := ARRAY[-(OLD.pending_minor + OLD.settled_minor), -(OLD.pending_minor + OLD.settled_minor)];
      END IF;
      IF TG_OP <> 'DELETE' AND NEW.card_id IS NOT NULL THEN
        v_cards := v_cards || ARRAY[NEW.card_id, NEW.card_id];
        v_days := v_days || ARRAY['', to_char(NEW.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')];
        v_amounts := v_amounts || ARRAY[NEW.pending_minor + NEW.settled_minor, NEW.pending_minor + NEW.settled_minor];
      END IF;
      INSERT INTO issuing_card_spend (card_id, day, spent_minor)
        SELECT u.card_id, u.day, SUM(u.amount) FROM unnest(v_cards, v_days, v_amounts) AS u(card_id, day, amount)
        GROUP BY u.card_id, u.day HAVING SUM(u.amount) <> 0
        ORDER BY u.card_id, u.day
        ON CONFLICT (card_id, day) DO UPDATE SET spent_minor = issuing_card_spend.spent_minor + excluded.spent_minor;
      RETURN NULL;
    END $function$;`
const PER_DAY_TRIGGERS = `CREATE CONSTRAINT TRIGGER issuing_card_spend_delete AFTER DELETE ON issuing_transactions DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (((old.card_id IS NOT NULL) AND ((old.pending_minor + old.settled_minor) <> 0))) EXECUTE FUNCTION issuing_card_spend_change();

--
CREATE CONSTRAINT TRIGGER issuing_card_spend_insert AFTER INSERT ON issuing_transactions DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (((new.card_id IS NOT NULL) AND ((new.pending_minor + new.settled_minor) <> 0))) EXECUTE FUNCTION issuing_card_spend_change();

--
CREATE CONSTRAINT TRIGGER issuing_card_spend_update AFTER UPDATE OF card_id, created_at, pending_minor, settled_minor ON issuing_transactions DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN ((((old.card_id IS NOT NULL) OR (new.card_id IS NOT NULL)) AND ((old.card_id IS DISTINCT FROM new.card_id) OR (old.created_at IS DISTINCT FROM new.created_at) OR ((old.pending_minor + old.settled_minor) <> (new.pending_minor + new.settled_minor))))) EXECUTE FUNCTION issuing_card_spend_change();`

const totalsTriggers = () =>
  fs
    .readFileSync(path.join(ROOT, "packages/store-pg/schema/current.sql"), "utf8")
    .match(/CREATE CONSTRAINT TRIGGER issuing_card_spend_totals_.*?;\n/gs)
    .map((statement) => statement.replaceAll("public.", ""))

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

export async function run(args) {
  const rounds = Number(option(args, "rounds", "10"))
  const messages = Number(option(args, "messages", "400"))
  const pg = await startPostgres()
  try {
    const url = await createDatabase(pg.adminUrl, "issuing_bench_spend_triggers")
    await withPgClient(url, async (client) => {
      await client.query(`CREATE TABLE issuing_transactions (id text PRIMARY KEY, card_id text, created_at timestamptz NOT NULL,
        status text NOT NULL, amount_minor bigint NOT NULL, authorized_minor bigint, pending_minor bigint NOT NULL DEFAULT 0,
        settled_minor bigint NOT NULL DEFAULT 0)`)
      await client.query(`CREATE TABLE issuing_card_spend (card_id text NOT NULL, day text NOT NULL, spent_minor bigint NOT NULL,
        PRIMARY KEY (card_id, day))`)
      await client.query(`CREATE TABLE issuing_card_spend_totals (card_id text NOT NULL, spend_interval text NOT NULL,
        window_start text NOT NULL, spent_minor bigint NOT NULL, spent_count bigint NOT NULL,
        PRIMARY KEY (card_id, spend_interval, window_start))`)
      await client.query(PER_DAY_FUNCTION)
      await client.query(fs.readFileSync(path.join(ROOT, "packages/store-pg/src/functions/issuing_card_spend_totals_change.sql"), "utf8"))
      for (const statement of [...PER_DAY_TRIGGERS.split("\n--\n"), ...totalsTriggers()]) await client.query(statement)
      const use = async (side) => {
        for (const name of ["insert", "update", "delete"]) {
          await client.query(
            `ALTER TABLE issuing_transactions ${side === "0380" ? "ENABLE" : "DISABLE"} TRIGGER issuing_card_spend_${name}`
          )
          await client.query(
            `ALTER TABLE issuing_transactions ${side === "0751" ? "ENABLE" : "DISABLE"} TRIGGER issuing_card_spend_totals_${name}`
          )
        }
      }
      const times = { none: [], "0380": [], "0751": [] }
      let n = 0
      for (let round = 0; round < rounds; round++) {
        for (const side of round % 2 === 0 ? ["0380", "0751", "none"] : ["none", "0751", "0380"]) {
          await use(side)
          const started = performance.now()
          await client.query("BEGIN")
          for (let i = 0; i < messages; i++) {
            const id = `txn_${n++}`
            await client.query(`INSERT INTO issuing_transactions VALUES ($1, $2, now(), 'PENDING', 100, 100, 100, 0)`, [
              id,
              `card_${i % 20}`
            ])
            await client.query(`UPDATE issuing_transactions SET pending_minor = 0, settled_minor = 100, status = 'SETTLED' WHERE id = $1`, [
              id
            ])
          }
          await client.query("COMMIT")
          times[side].push(((performance.now() - started) / (2 * messages)) * 1000)
        }
      }
      console.log(`spend triggers bench: ${rounds} rounds of ${messages} messages (2 writes each), load ${os.loadavg()[0].toFixed(1)}`)
      for (const side of ["none", "0380", "0751"]) {
        const extra = side === "none" ? "" : `, the trigger ${(median(times[side]) - median(times.none)).toFixed(0)} µs`
        console.log(
          `  ${side.padEnd(5)} µs per write (median) ${median(times[side]).toFixed(0)}${extra}  [${times[side].map((t) => t.toFixed(0)).join(" ")}]`
        )
      }
    })
  } finally {
    await pg.stop()
  }
}
