-- A lone emit's events (core webhooks/SqlWebhookQueue.ts): inserted, then fanned out to their
-- subscriptions as a later statement, so the fan-out sees the tags issuing_tag_events wrote for them.
-- One call, one round trip.
CREATE OR REPLACE FUNCTION issuing_append_events(
    p_ids text[],
    p_program_ids text[],
    p_types text[],
    p_created_at timestamp with time zone[],
    p_data text[]
)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
    BEGIN
      INSERT INTO issuing_events (id, program_id, type, created_at, data)
        SELECT * FROM unnest(p_ids, p_program_ids, p_types, p_created_at, p_data);
      RETURN issuing_webhook_fan_out_events(p_ids, p_program_ids, p_types, p_created_at, NULL::text);
    END $function$;
