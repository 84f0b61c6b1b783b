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
 * The same rows as the other store's migration of this id. The row triggers of those lists are made
 * again to write them (an update of `created_at` moves a row's periods as one of its status does),
 * the insert triggers still skipping while a batch counts its own rows (migration 0780), and the
 * period counts of the rows already written are backfilled (the migration holds the write lock).
 */
const LEVELS = "(SELECT 0 AS lv UNION ALL SELECT 7 UNION ALL SELECT 10 UNION ALL SELECT 13)"

/** The list of level `lv` for a row created at `at`: the list itself (0), or its month, day or hour. */
const periodList = (list: string, at: string) =>
  `CASE p.lv WHEN 0 THEN '${list}' WHEN 7 THEN '${list}@m' || substr(${at}, 1, 7)
     WHEN 10 THEN '${list}@d' || substr(${at}, 1, 10) ELSE '${list}@h' || substr(${at}, 1, 13) END`

const upsert = (list: string, select: string) =>
  `INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT ${periodList(list, "x.at")}, x.program_id, x.k, 0, SUM(x.d) FROM (${select}) x CROSS JOIN ${LEVELS} p
   GROUP BY 1, x.program_id, x.k HAVING SUM(x.d) <> 0 ORDER BY 1, x.program_id, x.k
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n`

interface Counted {
  readonly list: string
  readonly table: string
  /** The columns a key reads (an update of another column leaves the counts alone). */
  readonly columns: ReadonlyArray<string>
  /** The keys of the row `r` (NEW or OLD) as (program_id, k, at) rows. */
  readonly keys: (r: "NEW" | "OLD") => string
}

const COUNTED: ReadonlyArray<Counted> = [
  {
    list: "events",
    table: "issuing_events",
    columns: ["program_id", "type", "created_at"],
    keys: (r) => `SELECT ${r}.program_id AS program_id, '=' || ${r}.type AS k, ${r}.created_at AS at`
  },
  {
    list: "transfers",
    table: "issuing_transfers",
    columns: ["program_id", "status", "payment_rail", "from_financial_account_id", "to_financial_account_id", "created_at"],
    keys: (r) => `SELECT ${r}.program_id AS program_id, '=' || ${r}.status || '|=' || ${r}.payment_rail || '|' || a.v AS k,
      ${r}.created_at AS at
      FROM (SELECT '' AS v UNION SELECT '=' || ${r}.from_financial_account_id UNION SELECT '=' || ${r}.to_financial_account_id) a`
  },
  {
    list: "transactions",
    table: "issuing_transactions",
    columns: ["program_id", "status", "card_id", "created_at"],
    keys: (r) => `SELECT ${r}.program_id AS program_id, '=' || ${r}.status || '|' || c.v AS k, ${r}.created_at AS at
      FROM (SELECT '' AS v UNION ALL SELECT '=' || ${r}.card_id WHERE ${r}.card_id IS NOT NULL) c`
  }
]

/** Each list's rows as (program_id, k, at), one per key a row counts under (the keys of migration 0750). */
const BACKFILL: ReadonlyArray<readonly [list: string, rows: string]> = [
  ["events", "SELECT program_id, '=' || type AS k, created_at AS at FROM issuing_events"],
  [
    "transfers",
    `SELECT program_id, '=' || status || '|=' || payment_rail || '|' AS k, created_at AS at FROM issuing_transfers
     UNION ALL
     SELECT program_id, '=' || status || '|=' || payment_rail || '|=' || from_financial_account_id, created_at FROM issuing_transfers
     UNION ALL
     SELECT program_id, '=' || status || '|=' || payment_rail || '|=' || to_financial_account_id, created_at FROM issuing_transfers
       WHERE to_financial_account_id <> from_financial_account_id`
  ],
  [
    "transactions",
    `SELECT program_id, '=' || status || '|' AS k, created_at AS at FROM issuing_transactions
     UNION ALL
     SELECT program_id, '=' || status || '|=' || card_id, created_at FROM issuing_transactions WHERE card_id IS NOT NULL`
  ]
]

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const { list, table, columns, keys } of COUNTED) {
    for (const event of ["insert", "update", "delete"]) yield* sql.unsafe(`DROP TRIGGER issuing_count_${list}_${event}`)
    yield* sql.unsafe(`CREATE TRIGGER issuing_count_${list}_insert AFTER INSERT ON ${table}
    WHEN NOT EXISTS (SELECT 1 FROM issuing_posting_counted WHERE list = '${list}')
    BEGIN ${upsert(list, `SELECT program_id, k, at, 1 AS d FROM (${keys("NEW")}) y`)}; END`)
    yield* sql.unsafe(`CREATE TRIGGER issuing_count_${list}_delete AFTER DELETE ON ${table}
      BEGIN ${upsert(list, `SELECT program_id, k, at, -1 AS d FROM (${keys("OLD")}) y`)}; END`)
    yield* sql.unsafe(`CREATE TRIGGER issuing_count_${list}_update AFTER UPDATE OF ${columns.join(", ")} ON ${table}
      WHEN ${columns.map((c) => `OLD.${c} IS NOT NEW.${c}`).join(" OR ")}
      BEGIN ${upsert(
        list,
        `SELECT program_id, k, at, 1 AS d FROM (${keys("NEW")}) y UNION ALL SELECT program_id, k, at, -1 AS d FROM (${keys("OLD")}) y`
      )}; END`)
  }
  // The rows already written, per key and period (their plain counts stay as they are).
  for (const [list, rows] of BACKFILL) {
    yield* sql.unsafe(`INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
      SELECT ${periodList(list, "x.at")}, x.program_id, x.k, 0, count(*) FROM (${rows}) x CROSS JOIN ${LEVELS} p
      WHERE p.lv <> 0 GROUP BY 1, x.program_id, x.k`)
  }
})
