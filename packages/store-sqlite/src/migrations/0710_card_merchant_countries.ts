import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A card's merchant country allow and block lists (docs/card-transactions.md#controls): JSON arrays
 * of ISO 3166-1 alpha-2 codes, as the merchant category lists are kept; every card issued before
 * has neither ('[]'). The same columns as the other store's migration of this id.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE issuing_cards ADD COLUMN allowed_merchant_countries TEXT NOT NULL DEFAULT '[]'`
  yield* sql`ALTER TABLE issuing_cards ADD COLUMN blocked_merchant_countries TEXT NOT NULL DEFAULT '[]'`
})
