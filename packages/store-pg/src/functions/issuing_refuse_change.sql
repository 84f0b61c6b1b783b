-- Book transfers and their entries are immutable (docs/ledger.md): a correction is a new posting.
-- The BEFORE UPDATE OR DELETE trigger of both tables.
CREATE OR REPLACE FUNCTION issuing_refuse_change()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN RAISE EXCEPTION 'book transfers and entries are immutable'; END $function$;
