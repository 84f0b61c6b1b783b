import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * `metadata` on wallets, cards, transfers and webhook subscriptions (docs/api.md#metadata): the
 * caller's key-value pairs as JSON text, `{}` for every row written before. The same columns as
 * the PostgreSQL migration of this id. No index: metadata is never searched.
 *
 * The transfer row is written by the posting (SqlitePosting.ts, NewTransfers.ts), which names the
 * column; nothing else changes.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const table of ["issuing_wallets", "issuing_cards", "issuing_transfers", "issuing_webhook_subscriptions"]) {
    yield* sql.unsafe(`ALTER TABLE ${table} ADD COLUMN metadata TEXT NOT NULL DEFAULT '{}'`)
  }
})
