import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Events are tagged once per inserting statement instead of once per event
 * (docs/decisions.md#the-tag-trigger-once-a-statement): the row trigger `issuing_tag_events`
 * (0490, its function `issuing_tag_event`) becomes a statement trigger over the statement's new
 * rows, with the same rule, set-based, in `issuing_tag_events()`. A book transfer's posting inserts
 * its 5 events in two statements: 2 calls instead of 5, and a batch of 100 one or two instead of 500.
 *
 * The function is created here as a raising stub; its body is the living
 * src/functions/issuing_tag_events.sql, applied after the migrations in the same transaction, which
 * also drops the row trigger's function (its file is gone). The other store keeps its row trigger:
 * SQLite has no statement triggers.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`DROP TRIGGER issuing_tag_events ON issuing_events`
  yield* sql.unsafe(`CREATE FUNCTION issuing_tag_events() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'issuing_tag_events: its body is src/functions/issuing_tag_events.sql';
    END $$`)
  yield* sql`CREATE TRIGGER issuing_tag_events AFTER INSERT ON issuing_events REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION issuing_tag_events()`
})
