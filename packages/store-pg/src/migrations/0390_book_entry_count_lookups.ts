import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The book-entry counting trigger looks a batch's book transfers up by key instead of reading the
 * whole entries table (docs/operations.md#exact-totals-at-any-size).
 *
 * Migration 0210's `issuing_count_book_entries` counts an account's book transfers once per
 * (book transfer, account), (book transfer, book) and (book transfer, account, book): an entry
 * counts unless another entry of its book transfer already stands for the same key, which a
 * `NOT EXISTS` over `issuing_book_entries` decides. PostgreSQL pulled that `NOT EXISTS` up into a
 * hash anti join, building its hash from EVERY entry in the table, so each multi-row insert of
 * entries (a batch's, `issuing_write_postings`) read the whole table: 65 ms per 1,000 book
 * transfers at 10,000, 1,583 ms at 1,000,000 (EXPLAIN ANALYZE through auto_explain), and
 * `POST /v1/transfers/batch` fell from 1,893 to 493 transfers/s between 1,000 and 1,000,000
 * transfers (`npm run bench -- volume`). The single posting was spared: it counts its own rows
 * (0320) and the trigger skips.
 *
 * `OFFSET 0` keeps the subquery a correlated subplan, so each new entry reads its own book
 * transfer's few entries through the primary key (book_transfer_id, position): 74 ms per 1,000 at
 * 300,000, the same as at 10,000. The keys and counts are unchanged; only the plan is.
 *
 * Numbered 0390, past every id already applied: the Migrator runs only ids above the latest one.
 * PostgreSQL only: SQLite's counting triggers are per row and look entries up by key already.
 */

const PULLED_UP = "n.position = e.position)))) x"
const KEPT_CORRELATED = "n.position = e.position)) OFFSET 0)) x"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const [row] = yield* sql<{ body: string }>`SELECT prosrc AS body FROM pg_proc WHERE proname = 'issuing_count_book_entries'`
  // A body that no longer ends its subquery this way is not the one this migration was written for.
  if (row === undefined || row.body.split(PULLED_UP).length !== 2)
    throw new Error("migration 0390: issuing_count_book_entries is not 0210's")
  const body = row.body.replace(PULLED_UP, KEPT_CORRELATED)
  yield* sql.unsafe(`CREATE OR REPLACE FUNCTION issuing_count_book_entries() RETURNS trigger LANGUAGE plpgsql AS $body$${body}$body$`)
})
