-- THE webhook fan-out (docs/webhooks.md): one queued delivery per enabled subscription to each
-- event's type, for a tagged subscription only the events carrying its tag. With a NULL channel it
-- only marks the transaction (issuing.deliveries_queued), which the posting statements return, and
-- the process wakes the workers after the commit (docs/webhooks.md#wake-ups-on-postgresql); a NOTIFY
-- in the transaction held a cluster-wide lock through its commit's WAL flush.
CREATE OR REPLACE FUNCTION issuing_webhook_fan_out_events(
    p_event_ids text[],
    p_program_ids text[],
    p_event_types text[],
    p_created_at timestamp with time zone[],
    p_channel text
)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
    DECLARE n integer;
    BEGIN
      INSERT INTO issuing_webhook_deliveries
        (id, program_id, subscription_id, event_id, attempt_count, next_attempt_at, claim_token, created_at)
      SELECT e.id || ':' || et.subscription_id, et.program_id, et.subscription_id, e.id, 0, e.created_at, NULL, e.created_at
      FROM unnest(p_event_ids, p_program_ids, p_event_types, p_created_at) AS e(id, program_id, type, created_at)
      JOIN issuing_webhook_event_types et ON et.program_id = e.program_id AND et.event_type = e.type
      JOIN issuing_webhook_subscriptions s ON s.id = et.subscription_id
      WHERE s.disabled = false
        AND (s.tag IS NULL OR EXISTS (SELECT 1 FROM issuing_event_tags t WHERE t.event_id = e.id AND t.tag = s.tag));
      GET DIAGNOSTICS n = ROW_COUNT;
      IF n > 0 THEN
        IF p_channel IS NULL THEN PERFORM set_config('issuing.deliveries_queued', 'yes', true);
        ELSE PERFORM pg_notify(p_channel, 'due');
        END IF;
      END IF;
      RETURN n;
    END $function$;
