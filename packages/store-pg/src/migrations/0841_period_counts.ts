import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Counts per period of the lists a time filter narrows (docs/decisions.md "Time filters and
 * total_count"): events, transfers and transactions keep, beside each count of migration 0750, the
 * same key's count in the UTC month, day and hour of the row's own `created_at`, as rows of
 * `issuing_list_counts` whose list names the period: `transfers@m2026-11`, `transfers@d2026-11-29`,
 * `transfers@h2026-11-29T10` (core/src/sql/ListCounts.ts `countPeriods`). A window's total sums its
 * whole periods and counts only its two partial hours over the index. A reader of an earlier release
 * reads the lists by their plain names, which keep their counts as before.
 *
 * The same rows as the other store's migration of this id. The period counts of the rows already
 * written are backfilled here under SHARE locks, so that no row is written between the count and the
 * triggers; the living counting functions (src/functions/issuing_count_{events,transfers,
 * transactions}.sql, the posting functions, issuing_count_periods.sql), which write them from now
 * on in the same statements as the plain counts, are applied after the migrations in the same
 * transaction.
 */
const PERIODS = (at: string) => `(VALUES
    ('m' || to_char(${at} AT TIME ZONE 'UTC', 'YYYY-MM')),
    ('d' || to_char(${at} AT TIME ZONE 'UTC', 'YYYY-MM-DD')),
    ('h' || to_char(${at} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24'))
  ) AS p(period)`

const backfill = (list: string, rows: string) =>
  `INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
    SELECT '${list}@' || p.period, x.program_id, x.k, 0, count(*) FROM (${rows}) x CROSS JOIN LATERAL ${PERIODS("x.at")}
    GROUP BY p.period, x.program_id, x.k`

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`LOCK TABLE issuing_events, issuing_transfers, issuing_transactions IN SHARE MODE`
  yield* sql.unsafe(backfill("events", "SELECT program_id, '=' || type AS k, created_at AS at FROM issuing_events"))
  yield* sql.unsafe(
    backfill(
      "transfers",
      `SELECT program_id, '=' || status || '|=' || payment_rail || '|' AS k, created_at AS at FROM issuing_transfers
       UNION ALL
       SELECT program_id, '=' || status || '|=' || payment_rail || '|=' || from_financial_account_id, created_at FROM issuing_transfers
       UNION ALL
       SELECT program_id, '=' || status || '|=' || payment_rail || '|=' || to_financial_account_id, created_at FROM issuing_transfers
         WHERE to_financial_account_id <> from_financial_account_id`
    )
  )
  yield* sql.unsafe(
    backfill(
      "transactions",
      `SELECT program_id, '=' || status || '|' AS k, created_at AS at FROM issuing_transactions
       UNION ALL
       SELECT program_id, '=' || status || '|=' || card_id, created_at FROM issuing_transactions WHERE card_id IS NOT NULL`
    )
  )
})
