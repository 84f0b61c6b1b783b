import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A batch of new transfers counts its own rows (docs/ledger.md#batches): one upsert per count key
 * per batch instead of one per row from each row's trigger — as PostgreSQL's batch does while its
 * `issuing.posting_counted` setting names the lists. SQLite has no such setting, so the batch names
 * the lists in `issuing_posting_counted`, a table it fills before its rows and empties after them
 * inside its own transaction (no other writer ever sees a row there), and the insert triggers of
 * those lists skip while their list is named. The triggers are otherwise those of migration 0750,
 * read back from the schema and given the condition.
 */
const SKIPPED = [
  ["events", "issuing_count_events_insert"],
  ["transfers", "issuing_count_transfers_insert"],
  ["transactions", "issuing_count_transactions_insert"],
  ["book_transfers", "issuing_count_book_entries_insert"]
] as const

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE issuing_posting_counted (list TEXT PRIMARY KEY) WITHOUT ROWID`
  for (const [list, trigger] of SKIPPED) {
    const [row] = yield* sql<{ sql: string }>`SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ${trigger}`
    const text = row?.sql ?? ""
    const skipping = text.replace(
      /^(CREATE TRIGGER \w+ AFTER INSERT ON \w+)\s+BEGIN\b/,
      `$1\n    WHEN NOT EXISTS (SELECT 1 FROM issuing_posting_counted WHERE list = '${list}')\n    BEGIN`
    )
    if (skipping === text) return yield* Effect.die(new Error(`migration 0780: trigger ${trigger} is not the one of migration 0750`))
    yield* sql.unsafe(`DROP TRIGGER ${trigger}`)
    yield* sql.unsafe(skipping)
  }
})
