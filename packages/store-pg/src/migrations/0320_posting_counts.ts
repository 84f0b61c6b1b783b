import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { replaceOnce } from "./functionText.js"
import { POST_TRANSFER_0310 } from "./0310_entries_posted_at.js"

/**
 * The transaction-local setting naming the lists whose rows the statement being run was counted by
 * `issuing_post_transfer` itself, each between spaces (` transfers events `); empty or unset
 * outside it. The counting triggers of those lists skip while their list is named.
 */
const COUNTED_SETTING = "issuing.posting_counted"

/** The WHEN of a counting trigger of `list`: its list is not being counted by the posting function. */
const unlessCounted = (list: string) => `WHEN (strpos(coalesce(current_setting('${COUNTED_SETTING}', true), ''), ' ${list} ') = 0)`

/**
 * Every count a posting adds, ONE upsert (the keys of docs/operations.md#exact-totals-at-any-size,
 * spelled as 0210's triggers spell them): its new transaction's (`|`, `=status|`, with its card
 * `|=card` and `=status|=card`), its transfer's 2 × 2 × (1 + accounts) (status, rail, either
 * account), its book transfer's `|` and per distinct account and book of its entries `=account|`,
 * `|=book`, `=account|=book`, and each event's `` and `=type` (balance.updated among them). In the
 * order the triggers took the same rows (list by list as the statements ran, then key), on this
 * backend's shard.
 */
const COUNT_POSTING = `INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
        SELECT c.list, p_program_id, c.key, pg_backend_pid() % 16, count(*)
        FROM (
          SELECT 1 AS rank, 'transactions' AS list, s.v || '|' || cd.v AS key
            FROM (VALUES (''), ('=' || p_transaction_status)) s(v)
            CROSS JOIN (SELECT '' UNION ALL SELECT '=' || p_card_id WHERE p_card_id IS NOT NULL) cd(v)
            WHERE p_transaction_write = 'insert'
          UNION ALL
          SELECT 2, 'transfers', s.v || '|' || r.v || '|' || a.v
            FROM (VALUES (''), ('=' || p_transfer_status)) s(v)
            CROSS JOIN (VALUES (''), ('=' || p_rail)) r(v)
            CROSS JOIN (SELECT '' UNION SELECT '=' || x FROM unnest(ARRAY[p_source, p_target]) x WHERE x IS NOT NULL) a(v)
          UNION ALL
          SELECT 3, 'book_transfers', '|'
          UNION ALL
          SELECT DISTINCT 4, 'book_transfers', k.v
            FROM unnest(p_entry_accounts, p_entry_books) e(account, book)
            CROSS JOIN LATERAL (VALUES ('=' || e.account || '|'), ('|=' || e.book), ('=' || e.account || '|=' || e.book)) k(v)
          UNION ALL
          SELECT 5, 'events', k.v
            FROM unnest(coalesce(p_event_types, '{}') || array_fill('balance.updated'::text, ARRAY[v_balance_events])) t(type)
            CROSS JOIN LATERAL (VALUES (''), ('=' || t.type)) k(v)
        ) c
        GROUP BY c.list, c.key
        ORDER BY min(c.rank), c.key
        ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      PERFORM set_config('${COUNTED_SETTING}', '', true);
`

/** 0310's `issuing_post_transfer`, counting its own rows in one upsert while their triggers skip. */
export const POST_TRANSFER_0320 = replaceOnce(
  replaceOnce(
    POST_TRANSFER_0310,
    "      WITH inserted_transaction AS (",
    `      PERFORM set_config('${COUNTED_SETTING}',
        CASE WHEN p_transaction_write = 'insert' THEN ' transactions ' ELSE '' END || ' transfers book_transfers events ', true);
      WITH inserted_transaction AS (`
  ),
  "      IF v_events + v_balance_events > 0 THEN",
  `      ${COUNT_POSTING}      IF v_events + v_balance_events > 0 THEN`
)

const INSERTED = "INSERT REFERENCING NEW TABLE AS new_rows"

/**
 * The triggers of 0210 that a posting's own count stands in for: trigger, table, event, function,
 * list. The transactions' UPDATE trigger among them: the posting's statement that inserts a new
 * transaction also holds the UPDATE of a joined one, which then updates no row.
 */
const SKIPPING_TRIGGERS = [
  ["issuing_count_transactions_insert", "issuing_transactions", INSERTED, "issuing_count_transactions", "transactions"],
  [
    "issuing_count_transactions_update",
    "issuing_transactions",
    "UPDATE REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows",
    "issuing_count_transactions",
    "transactions"
  ],
  ["issuing_count_transfers_insert", "issuing_transfers", INSERTED, "issuing_count_transfers", "transfers"],
  ["issuing_count_book_transfers_insert", "issuing_book_transfers", INSERTED, "issuing_count_book_transfers", "book_transfers"],
  ["issuing_count_book_entries_insert", "issuing_book_entries", INSERTED, "issuing_count_book_entries", "book_transfers"],
  ["issuing_count_events_insert", "issuing_events", INSERTED, "issuing_count_events", "events"]
] as const

/**
 * A posting counts its own rows (docs/operations.md#exact-totals-at-any-size): 0210's statement
 * triggers ran once per list a posting touches — 5 upserts, each computing its keys from a
 * transition table, the book transfers' with a subquery over the entries — about a quarter of the
 * database's CPU per `POST /v1/transfers`. `issuing_post_transfer` knows every key from its own
 * arguments, so it writes them all in ONE upsert after its inserts, on the same shard, in the same
 * transaction (a refusal writes nothing, counts included). While its statements run it names the
 * lists it counts in a transaction-local setting, and the INSERT triggers of those lists skip
 * (a WHEN on each, so no trigger function runs); it clears the setting before it returns, and a
 * failure rolls the setting back with everything else. Every other writer — batches
 * (`issuing_write_postings`), card messages, status changes, a host's own SQL — is still counted by
 * the triggers, and an UPDATE of a joined transaction (`p_transaction_write = 'update'`) too.
 * PostgreSQL functions only: SQLite's row triggers are unchanged.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const [trigger, table, event, fn, list] of SKIPPING_TRIGGERS) {
    const [operation, referencing] = [event.slice(0, event.indexOf(" ")), event.slice(event.indexOf(" ") + 1)]
    yield* sql.unsafe(`DROP TRIGGER ${trigger} ON ${table}`)
    yield* sql.unsafe(`CREATE TRIGGER ${trigger} AFTER ${operation} ON ${table}
      ${referencing} FOR EACH STATEMENT ${unlessCounted(list)} EXECUTE FUNCTION ${fn}()`)
  }
  yield* sql.unsafe(POST_TRANSFER_0320)
})
