import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Cardholders (docs/cardholders.md): the people and businesses a program issues cards to, with the
 * outcome of the program's own identity checks. The same tables, columns, indexes and counts as the
 * other store's migration of this id.
 *
 * - `issuing_cardholders`: the address and the individual's details as JSON text (read whole,
 *   never searched); the list's indexes serve each filter (none, `status`, `email`) in both orders
 *   as a range (docs/operations.md#volume).
 * - The list's count (`cardholders`, filters status and email: keys `=status|=email` with '' for
 *   "any"), kept by row triggers as 0210 keeps the others' (written out here for two filters).
 * - `cardholder_id` on wallets and cards (NULL: none); a program's `require_verified_cardholder`.
 * - Events about a cardholder carry the tags of its wallets (docs/webhooks.md#customers-and-tags):
 *   0490's trigger is made again with one more source of wallets, the wallets whose cardholder the
 *   event's object is; the partial index finds them.
 */

/** The (program_id, k) of the row `r`, for every combination of "any" and its own status and email. */
const keysOf = (row: "NEW" | "OLD") =>
  `SELECT r.program_id AS program_id,
          CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.status END || '|' || CASE d1.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.email END AS k
   FROM (SELECT ${row}.program_id AS program_id, ${row}.status AS status, ${row}.email AS email) r
   CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d1
   WHERE (d0.o <> 1 OR r.status IS NOT NULL) AND (d1.o <> 1 OR r.email IS NOT NULL)`

const rowUpsert = (delta: number, keys: string) =>
  `INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT 'cardholders', program_id, k, 0, ${delta} FROM (${keys}) x WHERE true
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n`

/** 0490's sources of an event's wallets, and a cardholder's wallets for the cardholder's own events. */
const WALLETS_OF_EVENT = `
  SELECT json_extract(NEW.data, '$.wallet_id')
  UNION ALL
  SELECT a.wallet_id FROM issuing_financial_accounts a
    WHERE a.id IN (json_extract(NEW.data, '$.from_financial_account_id'), json_extract(NEW.data, '$.to_financial_account_id'))
  UNION ALL
  SELECT c.wallet_id FROM issuing_cards c
    WHERE c.id = json_extract(NEW.data, '$.card_id')
       OR c.id = (SELECT t.card_id FROM issuing_transactions t
                  WHERE t.id = json_extract(NEW.data, '$.transaction_id') AND t.program_id = NEW.program_id)
  UNION ALL
  SELECT a.wallet_id FROM issuing_transfers x
    JOIN issuing_financial_accounts a ON a.id IN (x.from_financial_account_id, x.to_financial_account_id)
    WHERE NEW.type = 'transaction.updated' AND json_extract(NEW.data, '$.card_id') IS NULL
      AND x.transaction_id = json_extract(NEW.data, '$.id')
  UNION ALL
  SELECT h.id FROM issuing_wallets h
    WHERE NEW.type LIKE 'cardholder.%' AND h.program_id = NEW.program_id AND h.cardholder_id = json_extract(NEW.data, '$.id')`

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE issuing_cardholders (
    id TEXT PRIMARY KEY,
    program_id TEXT NOT NULL REFERENCES issuing_programs (id),
    type TEXT NOT NULL CHECK (type IN ('individual', 'business')),
    name TEXT NOT NULL,
    email TEXT,
    phone_number TEXT,
    billing_address TEXT NOT NULL,
    individual TEXT,
    metadata TEXT NOT NULL DEFAULT '{}',
    status TEXT NOT NULL CHECK (status IN ('PENDING_VERIFICATION', 'VERIFIED', 'REJECTED')),
    verification_reference TEXT,
    verification_updated_at TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  )`
  yield* sql`CREATE INDEX issuing_cardholders_by_program ON issuing_cardholders (program_id, created_at, id)`
  yield* sql`CREATE INDEX issuing_cardholders_by_program_update ON issuing_cardholders (program_id, updated_at, id)`
  yield* sql`CREATE INDEX issuing_cardholders_by_status ON issuing_cardholders (program_id, status, created_at, id)`
  yield* sql`CREATE INDEX issuing_cardholders_by_status_update ON issuing_cardholders (program_id, status, updated_at, id)`
  yield* sql`CREATE INDEX issuing_cardholders_by_email ON issuing_cardholders (program_id, email, created_at, id) WHERE email IS NOT NULL`
  yield* sql`CREATE INDEX issuing_cardholders_by_email_update ON issuing_cardholders (program_id, email, updated_at, id) WHERE email IS NOT NULL`

  yield* sql.unsafe(`CREATE TRIGGER issuing_count_cardholders_insert AFTER INSERT ON issuing_cardholders
    BEGIN ${rowUpsert(1, keysOf("NEW"))}; END`)
  yield* sql.unsafe(`CREATE TRIGGER issuing_count_cardholders_delete AFTER DELETE ON issuing_cardholders
    BEGIN ${rowUpsert(-1, keysOf("OLD"))}; END`)
  yield* sql.unsafe(`CREATE TRIGGER issuing_count_cardholders_update AFTER UPDATE OF program_id, status, email ON issuing_cardholders
    WHEN OLD.program_id IS NOT NEW.program_id OR OLD.status IS NOT NEW.status OR OLD.email IS NOT NEW.email
    BEGIN INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
      SELECT 'cardholders', program_id, k, 0, SUM(d) FROM (
        SELECT program_id, k, 1 AS d FROM (${keysOf("NEW")}) y UNION ALL SELECT program_id, k, -1 AS d FROM (${keysOf("OLD")}) y) x
      GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
      ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n; END`)

  yield* sql`ALTER TABLE issuing_programs ADD COLUMN require_verified_cardholder INTEGER NOT NULL DEFAULT 0`
  yield* sql`ALTER TABLE issuing_wallets ADD COLUMN cardholder_id TEXT REFERENCES issuing_cardholders (id)`
  yield* sql`ALTER TABLE issuing_cards ADD COLUMN cardholder_id TEXT REFERENCES issuing_cardholders (id)`
  yield* sql`CREATE INDEX issuing_wallets_by_cardholder ON issuing_wallets (cardholder_id) WHERE cardholder_id IS NOT NULL`

  yield* sql`DROP TRIGGER issuing_tag_events`
  yield* sql.unsafe(`CREATE TRIGGER issuing_tag_events AFTER INSERT ON issuing_events
    WHEN NEW.type <> 'webhook.test' AND NEW.type NOT LIKE 'wallet.%'
      AND EXISTS (SELECT 1 FROM issuing_wallets w WHERE w.program_id = NEW.program_id AND w.tag IS NOT NULL)
    BEGIN
      INSERT INTO issuing_event_tags (event_id, tag, program_id, created_at)
        SELECT DISTINCT NEW.id, w.tag, NEW.program_id, NEW.created_at FROM issuing_wallets w
        WHERE w.program_id = NEW.program_id AND w.tag IS NOT NULL AND w.id IN (${WALLETS_OF_EVENT});
    END`)
})
