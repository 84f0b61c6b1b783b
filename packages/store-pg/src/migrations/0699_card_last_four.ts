import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * `GET /v1/cards?last_four=` (docs/card-data.md#finding-a-card): a program's cards with those last
 * four digits, one range of this index in the newest-first order whatever the size of the program,
 * and its count a count of that range. The digits are the only part of a number kept in plaintext
 * (as every card object shows them); a reissue rewrites them and the index with them. About one
 * card in ten thousand shares a program's last four, so the other filters and the updated_at order
 * are applied along that range. The same index as the other store's migration of this id.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX issuing_cards_by_last_four ON issuing_cards (program_id, last_four, created_at, id)`
})
