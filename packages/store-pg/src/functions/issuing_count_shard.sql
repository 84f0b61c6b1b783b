-- A shard of `p_list`'s counts that no other transaction is counting into: the first of the 16
-- whose transaction-level advisory lock it gets, starting at the backend's own
-- (docs/operations.md#exact-totals-at-any-size). pg_try_ never waits, so it adds no deadlock; only
-- when all 16 are taken does it fall back to the backend's shard and wait there.
CREATE OR REPLACE FUNCTION issuing_count_shard(
    p_list text
)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
    DECLARE
      v_home integer := pg_backend_pid() % 16;
      v_space integer := hashtext('issuing_list_counts.' || p_list);
    BEGIN
      FOR i IN 0..15 LOOP
        IF pg_try_advisory_xact_lock(v_space, (v_home + i) % 16) THEN
          RETURN (v_home + i) % 16;
        END IF;
      END LOOP;
      RETURN v_home;
    END $function$;
