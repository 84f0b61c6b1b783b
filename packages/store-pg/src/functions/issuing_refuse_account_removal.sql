-- The other half of issuing_check_accounts (migration 0990): a financial account that an entry or a
-- transfer names is never deleted nor given another id, as the foreign keys it replaces refused. It
-- first takes both tables in SHARE mode, so it waits for every transaction writing to them and none
-- can name the account until it ends: the rows it then reads are every row that will ever have
-- named it. Deleting an account is no operation of the platform; only a host's own SQL does it.
CREATE OR REPLACE FUNCTION issuing_refuse_account_removal()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      IF TG_OP = 'UPDATE' AND NEW.id = OLD.id THEN
        RETURN NEW;
      END IF;
      LOCK TABLE issuing_book_entries, issuing_transfers IN SHARE MODE;
      IF EXISTS (SELECT 1 FROM issuing_book_entries e WHERE e.financial_account_id = OLD.id)
         OR EXISTS (SELECT 1 FROM issuing_transfers t WHERE t.from_financial_account_id = OLD.id OR t.to_financial_account_id = OLD.id) THEN
        RAISE EXCEPTION 'financial account "%" is named by entries or transfers', OLD.id USING ERRCODE = 'foreign_key_violation';
      END IF;
      RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
    END $function$;
