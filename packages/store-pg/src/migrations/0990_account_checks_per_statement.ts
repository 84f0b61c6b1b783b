import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The foreign keys of entries and transfers to their financial accounts become one check per
 * inserting statement (docs/decisions.md#the-accounts-foreign-keys-as-one-check-a-statement). Each
 * key probed its account row `FOR KEY SHARE`, six probes a transfer and 600 a batch of 100, and
 * with batches in flight over the same accounts every new locker of a row already locked by another
 * made a new multixact. `issuing_check_accounts` looks the distinct accounts of a statement's new
 * rows up by key without a lock (and a transfer's on an update of them);
 * `issuing_refuse_account_removal` refuses deleting an account, or changing its id, while rows name
 * it, after waiting out every writer of both tables — together what the keys guaranteed.
 *
 * The functions are created here as raising stubs; their bodies are the living
 * src/functions/issuing_check_accounts.sql and issuing_refuse_account_removal.sql, applied after the
 * migrations in the same transaction. The other store keeps its foreign keys: SQLite's probes lock
 * nothing.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const name of ["issuing_check_accounts", "issuing_refuse_account_removal"])
    yield* sql.unsafe(`CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION '${name}: its body is src/functions/${name}.sql';
      END $$`)
  yield* sql`ALTER TABLE issuing_book_entries DROP CONSTRAINT issuing_book_entries_financial_account_id_fkey`
  yield* sql`ALTER TABLE issuing_transfers DROP CONSTRAINT issuing_transfers_from_financial_account_id_fkey`
  yield* sql`ALTER TABLE issuing_transfers DROP CONSTRAINT issuing_transfers_to_financial_account_id_fkey`
  yield* sql`CREATE TRIGGER issuing_check_accounts AFTER INSERT ON issuing_book_entries REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION issuing_check_accounts()`
  yield* sql`CREATE TRIGGER issuing_check_accounts AFTER INSERT ON issuing_transfers REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION issuing_check_accounts()`
  yield* sql`CREATE TRIGGER issuing_check_account_change AFTER UPDATE OF from_financial_account_id, to_financial_account_id
    ON issuing_transfers FOR EACH ROW EXECUTE FUNCTION issuing_check_accounts()`
  yield* sql`CREATE TRIGGER issuing_refuse_account_removal BEFORE DELETE OR UPDATE OF id ON issuing_financial_accounts
    FOR EACH ROW EXECUTE FUNCTION issuing_refuse_account_removal()`
})
