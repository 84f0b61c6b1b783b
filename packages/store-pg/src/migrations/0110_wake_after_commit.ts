import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Webhook wake-ups leave the transaction (docs/webhooks.md#wake-ups-on-postgresql). A transaction
 * that runs NOTIFY takes one lock for the whole cluster at its commit and holds it through its WAL
 * flush, so every transaction that queued deliveries committed one after another, each waiting
 * for the fsyncs of all before it (seen as "AccessExclusiveLock on object 0 of class 1262" waits
 * and commits of 100–900 ms under webhook load). Now, called with a NULL channel, the fan-out
 * only marks the transaction (the setting `issuing.deliveries_queued`, local to it), which the
 * posting statements return; the process announces the commit afterwards with a NOTIFY of its
 * own that does not wait for a flush. A non-NULL channel still notifies as before, so a node of
 * the previous version keeps working against this schema.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE OR REPLACE FUNCTION issuing_webhook_fan_out_events(
      p_event_ids text[], p_program_ids text[], p_event_types text[], p_created_at timestamptz[], p_channel text)
    RETURNS integer LANGUAGE plpgsql AS $$
    DECLARE n integer;
    BEGIN
      INSERT INTO issuing_webhook_deliveries
        (id, program_id, subscription_id, event_id, attempt_count, next_attempt_at, claim_token, created_at)
      SELECT e.id || ':' || et.subscription_id, et.program_id, et.subscription_id, e.id, 0, e.created_at, NULL, e.created_at
      FROM unnest(p_event_ids, p_program_ids, p_event_types, p_created_at) AS e(id, program_id, type, created_at)
      JOIN issuing_webhook_event_types et ON et.program_id = e.program_id AND et.event_type = e.type
      JOIN issuing_webhook_subscriptions s ON s.id = et.subscription_id
      WHERE s.disabled = false;
      GET DIAGNOSTICS n = ROW_COUNT;
      IF n > 0 THEN
        IF p_channel IS NULL THEN PERFORM set_config('issuing.deliveries_queued', 'yes', true);
        ELSE PERFORM pg_notify(p_channel, 'due');
        END IF;
      END IF;
      RETURN n;
    END $$`
})
