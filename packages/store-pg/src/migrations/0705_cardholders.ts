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
 *   "any"), kept by statement triggers as 0210 keeps the others'. Their function is created here as
 *   first written, for the triggers to name; its living text is
 *   src/functions/issuing_count_cardholders.sql, applied after the migrations.
 * - `cardholder_id` on wallets and cards (NULL: none); a program's `require_verified_cardholder`.
 * - Events about a cardholder carry the tags of its wallets (docs/webhooks.md#customers-and-tags):
 *   the living issuing_tag_event.sql reads them through the partial index made here.
 */
const keys = (rows: string) =>
  `SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.status END || '|' || CASE d1.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.email END AS k
   FROM ${rows} r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d1
   WHERE (d0.o <> 1 OR r.status IS NOT NULL) AND (d1.o <> 1 OR r.email IS NOT NULL)`

const upsert = (select: string) => `INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT 'cardholders', program_id, k, pg_backend_pid() % 16, SUM(d) FROM (${select}) x
   GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n`

const added = `SELECT program_id, k, 1 AS d FROM (${keys("new_rows")}) y`
const removed = `SELECT program_id, k, -1 AS d FROM (${keys("old_rows")}) y`

const COUNT_CARDHOLDERS = `CREATE OR REPLACE FUNCTION issuing_count_cardholders() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        ${upsert(added)};
      ELSIF TG_OP = 'DELETE' THEN
        ${upsert(removed)};
      ELSE
        ${upsert(`${added} UNION ALL ${removed}`)};
      END IF;
      RETURN NULL;
    END $$`

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE issuing_cardholders (
    id text PRIMARY KEY,
    program_id text NOT NULL REFERENCES issuing_programs (id),
    type text NOT NULL CHECK (type IN ('individual', 'business')),
    name text NOT NULL,
    email text,
    phone_number text,
    billing_address text NOT NULL,
    individual text,
    metadata text NOT NULL DEFAULT '{}',
    status text NOT NULL CHECK (status IN ('PENDING_VERIFICATION', 'VERIFIED', 'REJECTED')),
    verification_reference text,
    verification_updated_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX issuing_cardholders_by_program ON issuing_cardholders (program_id, created_at, id)`
  yield* sql`CREATE INDEX issuing_cardholders_by_program_update ON issuing_cardholders (program_id, updated_at, id)`
  yield* sql`CREATE INDEX issuing_cardholders_by_status ON issuing_cardholders (program_id, status, created_at, id)`
  yield* sql`CREATE INDEX issuing_cardholders_by_status_update ON issuing_cardholders (program_id, status, updated_at, id)`
  yield* sql`CREATE INDEX issuing_cardholders_by_email ON issuing_cardholders (program_id, email, created_at, id) WHERE email IS NOT NULL`
  yield* sql`CREATE INDEX issuing_cardholders_by_email_update ON issuing_cardholders (program_id, email, updated_at, id) WHERE email IS NOT NULL`

  yield* sql.unsafe(COUNT_CARDHOLDERS)
  for (const [event, referencing] of [
    ["INSERT", "NEW TABLE AS new_rows"],
    ["UPDATE", "OLD TABLE AS old_rows NEW TABLE AS new_rows"],
    ["DELETE", "OLD TABLE AS old_rows"]
  ] as const) {
    yield* sql.unsafe(`CREATE TRIGGER issuing_count_cardholders_${event.toLowerCase()} AFTER ${event} ON issuing_cardholders
      REFERENCING ${referencing} FOR EACH STATEMENT EXECUTE FUNCTION issuing_count_cardholders()`)
  }

  yield* sql`ALTER TABLE issuing_programs ADD COLUMN require_verified_cardholder boolean NOT NULL DEFAULT false`
  yield* sql`ALTER TABLE issuing_wallets ADD COLUMN cardholder_id text REFERENCES issuing_cardholders (id)`
  yield* sql`ALTER TABLE issuing_cards ADD COLUMN cardholder_id text REFERENCES issuing_cardholders (id)`
  yield* sql`CREATE INDEX issuing_wallets_by_cardholder ON issuing_wallets (cardholder_id) WHERE cardholder_id IS NOT NULL`
})
