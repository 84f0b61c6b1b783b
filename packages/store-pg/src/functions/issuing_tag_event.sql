-- Writes the tags of the wallets an event concerns (docs/webhooks.md#customers-and-tags), from the
-- event's own data at the time it is written: a wallet's own `tag`; `wallet_id` (accounts,
-- balances, cards); the accounts of a transfer; the card of a card transaction (or of the
-- transaction a later object names); the transfers of a transaction that has no card; for a
-- cardholder's own events, the wallets of that cardholder (docs/cardholders.md#events). AFTER the
-- inserting statement, so it sees every row that statement wrote (a posting's transfer and its
-- transaction's event are sibling CTEs). A program without tagged wallets pays one index probe.
CREATE OR REPLACE FUNCTION issuing_tag_event()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    DECLARE d jsonb; v_tags text[];
    BEGIN
      IF NEW.type = 'webhook.test' OR NEW.type LIKE 'wallet.%' THEN
        d := NEW.data::jsonb;
        v_tags := CASE WHEN d->>'tag' IS NULL THEN NULL ELSE ARRAY[d->>'tag'] END;
      ELSIF EXISTS (SELECT 1 FROM issuing_wallets w WHERE w.program_id = NEW.program_id AND w.tag IS NOT NULL) THEN
        d := NEW.data::jsonb;
        SELECT array_agg(DISTINCT w.tag) INTO v_tags
          FROM issuing_wallets w
          WHERE w.program_id = NEW.program_id AND w.tag IS NOT NULL AND w.id IN (
            SELECT d->>'wallet_id'
            UNION ALL
            SELECT a.wallet_id FROM issuing_financial_accounts a
              WHERE a.id IN (d->>'from_financial_account_id', d->>'to_financial_account_id')
            UNION ALL
            SELECT c.wallet_id FROM issuing_cards c
              WHERE c.id = d->>'card_id'
                 OR c.id = (SELECT t.card_id FROM issuing_transactions t
                            WHERE t.id = d->>'transaction_id' AND t.program_id = NEW.program_id)
            UNION ALL
            SELECT a.wallet_id FROM issuing_transfers x
              JOIN issuing_financial_accounts a ON a.id IN (x.from_financial_account_id, x.to_financial_account_id)
              WHERE NEW.type = 'transaction.updated' AND d->>'card_id' IS NULL AND x.transaction_id = d->>'id'
            UNION ALL
            SELECT h.id FROM issuing_wallets h
              WHERE NEW.type LIKE 'cardholder.%' AND h.program_id = NEW.program_id AND h.cardholder_id = d->>'id');
      END IF;
      IF v_tags IS NOT NULL THEN
        INSERT INTO issuing_event_tags (event_id, tag, program_id, created_at)
          SELECT NEW.id, t.tag, NEW.program_id, NEW.created_at FROM unnest(v_tags) AS t(tag);
      END IF;
      RETURN NULL;
    END $function$;
