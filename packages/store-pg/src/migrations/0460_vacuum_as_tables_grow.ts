import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The tables a program only grows (events, the ledger's rows, attempts, audit records) are
 * vacuumed after every 20,000 rows inserted, instead of PostgreSQL's default of a fifth of the
 * table. A deep page of a list is an index-only scan that counts the rows it skips off the index,
 * but only over heap pages the visibility map marks all-visible, and only a vacuum marks them: with
 * the default, up to a fifth of a table — its newest rows, the ones a newest-first list reads — is
 * visited row by row in the heap. Measured on 3.6M events, page 1,000 of 100 of the events of one
 * type: 100,000 heap visits and 22.8 ms with the newest 600,000 unvacuumed (the default's fifth),
 * 6,676 and 14.3 ms with the newest 20,000, none and 13.4 ms all vacuumed — with every page in
 * memory; each visit of a page that is not is a read from disk (docs/operations.md#volume).
 * Vacuuming newly inserted pages is cheap: it reads only the pages the map does not mark, and with
 * no dead rows it skips the indexes.
 *
 * A table added later that a program only grows takes the same parameters in its own migration.
 *
 * Storage parameters only: `ALTER TABLE … SET` takes a lock that lets reads and writes go on, and
 * changes no row, so it runs the same on a populated database.
 */
const INSERT_VACUUMED_TABLES = [
  "issuing_events",
  "issuing_transfers",
  "issuing_transactions",
  "issuing_book_transfers",
  "issuing_book_entries",
  "issuing_webhook_attempts",
  "issuing_card_audit_records"
] as const

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const table of INSERT_VACUUMED_TABLES) {
    yield* sql`ALTER TABLE ${sql.literal(table)} SET (autovacuum_vacuum_insert_threshold = 20000, autovacuum_vacuum_insert_scale_factor = 0)`
  }
})
