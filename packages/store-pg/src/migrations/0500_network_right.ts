import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The `network` right of API keys (docs/network.md#authentication): only a key holding it sends card
 * network messages and rail outcomes (/v1/network/*), in every environment. False for every key
 * but each organization's first admin key (the one bootstrap or `issuing orgs create` made), which
 * holds it as new organizations' first keys do — as migration 0120 did for `inbound_funding`.
 *
 * Numbered 0500, past every id already applied: the Migrator runs only ids above the latest one.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE issuing_api_keys ADD COLUMN network boolean NOT NULL DEFAULT false`
  yield* sql`UPDATE issuing_api_keys SET network = true
    WHERE role = 'admin' AND program_ids IS NULL AND id = (
      SELECT first.id FROM issuing_api_keys first
      WHERE first.organization_id = issuing_api_keys.organization_id AND first.role = 'admin'
      ORDER BY first.created_at, first.id LIMIT 1
    )`
})
