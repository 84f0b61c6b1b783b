-- The fan-out of one event: issuing_webhook_fan_out_events with one element, so the fan-out of a
-- lone event, of a posting and of a batch cannot drift apart.
CREATE OR REPLACE FUNCTION issuing_webhook_fan_out(
    p_event_id text,
    p_program_id text,
    p_event_type text,
    p_created_at timestamp with time zone,
    p_channel text
)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
    BEGIN
      RETURN issuing_webhook_fan_out_events(ARRAY[p_event_id], ARRAY[p_program_id], ARRAY[p_event_type], ARRAY[p_created_at], p_channel);
    END $function$;
