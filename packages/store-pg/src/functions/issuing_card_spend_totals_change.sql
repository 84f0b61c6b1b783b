-- A card's running totals per spending window (docs/card-transactions.md#running-totals): each
-- card transaction's pending + settled amount, and 1 when it is an approved authorization not
-- released whole (PENDING or SETTLED with something authorized), taken off the windows of its old
-- card and creation time and added to its new ones — DAILY, WEEKLY (from Monday), MONTHLY, YEARLY
-- and ALL_TIME (window '') — as one upsert in (card, interval, window) order, ALL_TIME first. Run
-- by deferred constraint triggers at commit, so the totals' rows are every writer's last locks
-- (taken earlier they deadlocked against a card message's balance-row lock).
CREATE OR REPLACE FUNCTION issuing_card_spend_totals_change()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    DECLARE
      v_cards text[] := '{}'; v_at timestamptz[] := '{}'; v_amounts bigint[] := '{}'; v_counts bigint[] := '{}';
      v_amount bigint; v_count bigint; v_at_utc timestamp;
    BEGIN
      -- The common writes (a new card transaction, a message on one): one card and one creation
      -- time, so the five windows' rows are upserted straight from the row's delta.
      IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND OLD.card_id = NEW.card_id AND OLD.created_at = NEW.created_at) THEN
        v_amount := NEW.pending_minor + NEW.settled_minor;
        v_count := CASE WHEN NEW.status IN ('PENDING', 'SETTLED') AND COALESCE(NEW.authorized_minor, NEW.amount_minor) > 0 THEN 1 ELSE 0 END;
        IF TG_OP = 'UPDATE' THEN
          v_amount := v_amount - (OLD.pending_minor + OLD.settled_minor);
          v_count := v_count - CASE WHEN OLD.status IN ('PENDING', 'SETTLED') AND COALESCE(OLD.authorized_minor, OLD.amount_minor) > 0
            THEN 1 ELSE 0 END;
        END IF;
        v_at_utc := NEW.created_at AT TIME ZONE 'UTC';
        INSERT INTO issuing_card_spend_totals AS s (card_id, spend_interval, window_start, spent_minor, spent_count)
          VALUES
            (NEW.card_id, 'ALL_TIME', '', v_amount, v_count),
            (NEW.card_id, 'DAILY', to_char(v_at_utc, 'YYYY-MM-DD'), v_amount, v_count),
            (NEW.card_id, 'MONTHLY', to_char(v_at_utc, 'YYYY-MM') || '-01', v_amount, v_count),
            (NEW.card_id, 'WEEKLY', to_char(date_trunc('week', v_at_utc), 'YYYY-MM-DD'), v_amount, v_count),
            (NEW.card_id, 'YEARLY', to_char(v_at_utc, 'YYYY') || '-01-01', v_amount, v_count)
          ON CONFLICT (card_id, spend_interval, window_start)
            DO UPDATE SET spent_minor = s.spent_minor + excluded.spent_minor, spent_count = s.spent_count + excluded.spent_count;
        RETURN NULL;
      END IF;
      -- A row moved to another card or time, or deleted (SQL outside the platform's writes).
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
    END $function$;
