import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { replaceOnce } from "./functionText.js"
import { WRITE_POSTINGS_0310 } from "./0310_entries_posted_at.js"

const BALANCE_EVENT_ROW = "AS r(id text, program_id text, account text, created_at timestamptz)"
const BALANCE_EVENT_ROW_0430 =
  "AS r(id text, program_id text, account text, created_at timestamptz,\n          later_debits bigint, later_credits bigint, later_pending bigint)"
const PRINCIPAL_SUMS = `CROSS JOIN LATERAL (SELECT sum(x.debits_minor) AS debits_minor, sum(x.credits_minor) AS credits_minor,
      sum(x.pending_minor) AS pending_minor, max(x.updated_at) AS updated_at`
const PRINCIPAL_SUMS_0430 = `CROSS JOIN LATERAL (SELECT sum(x.debits_minor) - coalesce(r.later_debits, 0) AS debits_minor,
      sum(x.credits_minor) - coalesce(r.later_credits, 0) AS credits_minor,
      sum(x.pending_minor) - coalesce(r.later_pending, 0) AS pending_minor,
      CASE WHEN r.later_debits IS NULL THEN max(x.updated_at) ELSE r.created_at END AS updated_at`

/**
 * `CREATE OR REPLACE FUNCTION issuing_write_postings(...)`: 0310's, where a `balance.updated` row
 * may say what the postings written after its own add to its account's principal book
 * (`later_debits`, `later_credits`, `later_pending`): its data is then the account as ITS posting
 * left it — the balances as the whole write leaves them, less those later amounts — at its
 * posting's time. Coalesced postings (docs/ledger.md#coalesced-postings-on-postgresql) write one
 * `balance.updated` per posting and wallet account this way, as each posting alone would have; a
 * batch's rows carry no such amounts and keep one event per account with the account as the batch
 * leaves it (docs/ledger.md#batches).
 *
 * Numbered 0430, past every id already applied: the Migrator runs only ids above the latest one.
 * PostgreSQL only: SQLite does not coalesce postings (its posting is a synchronous call under group commit).
 */
export const WRITE_POSTINGS_0430 = replaceOnce(
  replaceOnce(WRITE_POSTINGS_0310, BALANCE_EVENT_ROW, BALANCE_EVENT_ROW_0430),
  PRINCIPAL_SUMS,
  PRINCIPAL_SUMS_0430
)

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(WRITE_POSTINGS_0430)
})
