-- Writes the tags of the wallets each inserted event concerns (docs/webhooks.md#customers-and-tags),
-- from the event's own data at the time it is written: a wallet's own `tag`; `wallet_id` (accounts,
-- balances, cards); the accounts of a transfer; the card of a card transaction (or of the
-- transaction a later object names); the transfers of a transaction that has no card; for a
-- cardholder's own events, the wallets of that cardholder (docs/cardholders.md#events). A statement
-- trigger over the statement's new rows, AFTER it, so it sees every row that statement wrote (a
-- posting's transfer and its transaction's event are sibling CTEs): one call per inserting
-- statement, not one per event (docs/decisions.md#the-tag-trigger-once-a-statement). A statement
-- whose programs have no tagged wallet, and no wallet or test event among its rows, pays one probe
-- of the wallets' partial tag index per program, and its events' data is not parsed.
CREATE OR REPLACE FUNCTION issuing_tag_events()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      IF NOT EXISTS (SELECT 1 FROM new_rows r WHERE r.type = 'webhook.test' OR r.type LIKE 'wallet.%')
         AND NOT EXISTS (SELECT 1 FROM issuing_wallets w
                         WHERE w.program_id IN (SELECT r.program_id FROM new_rows r) AND w.tag IS NOT NULL) THEN
        RETURN NULL;
      END IF;
      INSERT INTO issuing_event_tags (event_id, tag, program_id, created_at)
        WITH e AS MATERIALIZED (
          SELECT r.id, r.program_id, r.type, r.created_at, r.data::jsonb AS d,
                 r.type = 'webhook.test' OR r.type LIKE 'wallet.%' AS own
          FROM new_rows r
        )
        SELECT e.id, e.d->>'tag', e.program_id, e.created_at FROM e WHERE e.own AND e.d->>'tag' IS NOT NULL
        UNION ALL
        SELECT e.id, t.tag, e.program_id, e.created_at
        FROM e CROSS JOIN LATERAL (
          SELECT DISTINCT w.tag FROM issuing_wallets w
          WHERE w.program_id = e.program_id AND w.tag IS NOT NULL AND w.id IN (
            SELECT e.d->>'wallet_id'
            UNION ALL
            SELECT a.wallet_id FROM issuing_financial_accounts a
              WHERE a.id IN (e.d->>'from_financial_account_id', e.d->>'to_financial_account_id')
            UNION ALL
            SELECT c.wallet_id FROM issuing_cards c
              WHERE c.id = e.d->>'card_id'
                 OR c.id = (SELECT t.card_id FROM issuing_transactions t
                            WHERE t.id = e.d->>'transaction_id' AND t.program_id = e.program_id)
            UNION ALL
            SELECT a.wallet_id FROM issuing_transfers x
              JOIN issuing_financial_accounts a ON a.id IN (x.from_financial_account_id, x.to_financial_account_id)
              WHERE e.type = 'transaction.updated' AND e.d->>'card_id' IS NULL AND x.transaction_id = e.d->>'id'
            UNION ALL
            SELECT h.id FROM issuing_wallets h
              WHERE e.type LIKE 'cardholder.%' AND h.program_id = e.program_id AND h.cardholder_id = e.d->>'id')
        ) t
        WHERE NOT e.own;
      RETURN NULL;
    END $function$;
