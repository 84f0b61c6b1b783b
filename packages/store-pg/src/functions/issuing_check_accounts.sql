-- The guarantee the foreign keys of entries and transfers to their financial accounts gave
-- (migration 0990, docs/decisions.md#the-accounts-foreign-keys-as-one-check-a-statement): no row
-- of either table names an account that is not there, whoever writes it. Once per inserting
-- statement, over its new rows, the distinct accounts they name looked up by key, one lookup each
-- (`OFFSET 0` keeps the planner from a pass over the accounts while the table is small), without
-- locking them: an account is never deleted nor its id changed while rows name it
-- (issuing_refuse_account_removal), so no lock is needed to keep it there until this transaction
-- commits. As a row trigger, for an update of a transfer's accounts. An account inserted by a
-- transaction that has not committed is not seen, and refused (a foreign key would have waited).
CREATE OR REPLACE FUNCTION issuing_check_accounts()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    DECLARE
      v_missing text;
    BEGIN
      IF TG_LEVEL = 'ROW' THEN
        SELECT x INTO v_missing FROM unnest(ARRAY[NEW.from_financial_account_id, NEW.to_financial_account_id]) x
          WHERE NOT EXISTS (SELECT 1 FROM issuing_financial_accounts a WHERE a.id = x) LIMIT 1;
      ELSIF TG_TABLE_NAME = 'issuing_book_entries' THEN
        SELECT r.id INTO v_missing FROM (SELECT DISTINCT n.financial_account_id AS id FROM new_rows n) r
          LEFT JOIN LATERAL (SELECT a.id FROM issuing_financial_accounts a WHERE a.id = r.id OFFSET 0) a ON true
          WHERE a.id IS NULL LIMIT 1;
      ELSE
        SELECT r.id INTO v_missing
          FROM (SELECT n.from_financial_account_id AS id FROM new_rows n UNION SELECT n.to_financial_account_id FROM new_rows n) r
          LEFT JOIN LATERAL (SELECT a.id FROM issuing_financial_accounts a WHERE a.id = r.id OFFSET 0) a ON true
          WHERE a.id IS NULL LIMIT 1;
      END IF;
      IF v_missing IS NOT NULL THEN
        RAISE EXCEPTION 'insert or update on table "%" names financial account "%", which is not present', TG_TABLE_NAME, v_missing
          USING ERRCODE = 'foreign_key_violation';
      END IF;
      RETURN NULL;
    END $function$;
