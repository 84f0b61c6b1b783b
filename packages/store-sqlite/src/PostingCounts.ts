import type { CountRow } from "@issuing/core"
import { byRowCount, valuesList } from "./MultiRowSql.js"

/**
 * The list counts of a posting's rows, written by the posting itself in one upsert while the insert
 * triggers of those lists skip (migration 0780): a batch's (NewTransfers.ts) and a lone transfer's
 * (SqlitePosting.ts `postTransferSync`). The keys are core's `countRows`: the ones the insert
 * triggers write per row, summed per (list, program, key) first, so a key touched several times is
 * one row update.
 */

export const COUNT_UPSERT = "ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n"

/** The lists a posting counts itself while it writes its rows (migration 0780): their insert triggers skip. */
export const COUNTING = `INSERT INTO issuing_posting_counted (list) VALUES ('book_transfers'), ('events'), ('transactions'), ('transfers')`
export const COUNTED = "DELETE FROM issuing_posting_counted"

/**
 * The list counts of events just written, read back by id (its one parameter: a JSON array whose
 * items hold an event's id first, BalanceEvents.ts' parameters): a batch's balance.updated, whose
 * rows its own statement composes, counted under their type in the same upsert per period as the
 * insert trigger would have (migration 0841), one row update per key instead of four per event.
 */
export const COUNT_WRITTEN_EVENTS = `INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
  SELECT CASE p.lv WHEN 0 THEN 'events' WHEN 7 THEN 'events@m' || substr(e.created_at, 1, 7)
           WHEN 10 THEN 'events@d' || substr(e.created_at, 1, 10) ELSE 'events@h' || substr(e.created_at, 1, 13) END,
         e.program_id, '=' || e.type, 0, count(*)
  FROM json_each(?) j CROSS JOIN issuing_events e
  CROSS JOIN (SELECT 0 AS lv UNION ALL SELECT 7 UNION ALL SELECT 10 UNION ALL SELECT 13) p
  WHERE e.id = j.value ->> 0
  GROUP BY 1, e.program_id, e.type
  ${COUNT_UPSERT}`

/** One upsert of `count` count rows (a lone transfer's 30 or so: one text per count, built once). */
export const upsertCounts = byRowCount(
  (count) => `INSERT INTO issuing_list_counts (list, program_id, key, shard, n) VALUES ${valuesList(count, "(?, ?, ?, ?, ?)")}
    ${COUNT_UPSERT}`
)

/** `upsertCounts`' parameters for `rows`. */
export const countParams = (rows: ReadonlyArray<CountRow>): Array<unknown> =>
  rows.flatMap((row) => [row.list, row.program_id, row.key, row.shard, row.n])
