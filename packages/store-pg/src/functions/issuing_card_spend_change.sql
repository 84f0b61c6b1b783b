-- A card's spend kept as its transactions change (docs/card-transactions.md#spend-controls):
-- each card transaction's pending + settled amount taken off its old (card, day) and the all-time
-- row '' and added to its new ones, as one upsert in (card, day) order. Run by deferred constraint
-- triggers at commit, so the spend row is every writer's last lock (taken earlier it deadlocked
-- against a card message's balance-row lock).
CREATE OR REPLACE FUNCTION issuing_card_spend_change()
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
    END $function$;
