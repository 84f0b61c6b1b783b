import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The transaction-local setting naming the lists whose rows the statement being run was counted by
 * `issuing_post_transfer` itself, each between spaces (` transfers events `); empty or unset
 * outside it. The counting triggers of those lists skip while their list is named.
 */
const COUNTED_SETTING = "issuing.posting_counted"

/** The WHEN of a counting trigger of `list`: its list is not being counted by the posting function. */
const unlessCounted = (list: string) => `WHEN (strpos(coalesce(current_setting('${COUNTED_SETTING}', true), ''), ' ${list} ') = 0)`

/**
 * 0310's `issuing_post_transfer`, counting its own rows in one upsert while their triggers skip
 * (the text this migration ran, written out whole). Every count a posting adds, ONE upsert (the
 * keys of docs/operations.md#exact-totals-at-any-size, spelled as 0210's triggers spell them):
 * its new transaction's (`|`, `=status|`, with its card
 * `|=card` and `=status|=card`), its transfer's 2 × 2 × (1 + accounts) (status, rail, either
 * account), its book transfer's `|` and per distinct account and book of its entries `=account|`,
 * `|=book`, `=account|=book`, and each event's `` and `=type` (balance.updated among them). In the
 * order the triggers took the same rows (list by list as the statements ran, then key), on this
 * backend's shard.
 */
const POST_TRANSFER_0320 = `CREATE OR REPLACE FUNCTION issuing_post_transfer(
      p_program_id text, p_source text, p_target text, p_check_funds boolean, p_amount bigint, p_currency text,
      p_now timestamptz,
      p_transaction_write text, p_transaction_id text, p_transaction_status text, p_transaction_created_at timestamptz,
      p_card_id text, p_mcc text, p_merchant_name text,
      p_transfer_id text, p_rail text, p_transfer_status text, p_description text,
      p_book_transfer_id text,
      p_entry_accounts text[], p_entry_books text[], p_entry_types text[], p_entry_amounts bigint[],
      p_delta_accounts text[], p_delta_books text[], p_delta_debits bigint[], p_delta_credits bigint[],
      p_event_ids text[], p_event_types text[], p_event_data text[], p_channel text, p_active_card text,
      p_delta_pending bigint[], p_balance_event_ids text[], p_balance_event_accounts text[], p_metadata text)
    RETURNS TABLE (posted boolean, available bigint, refusal text) LANGUAGE plpgsql AS $$
    DECLARE v_available bigint; v_over boolean; v_card_state text; v_events integer := coalesce(array_length(p_event_ids, 1), 0);
      v_balance_events integer := coalesce(array_length(p_balance_event_ids, 1), 0);
      v_slot smallint := pg_backend_pid() % 16;
    BEGIN
      IF p_active_card IS NOT NULL THEN
        SELECT c.state INTO v_card_state FROM issuing_cards c WHERE c.id = p_active_card FOR SHARE;
        IF v_card_state IS DISTINCT FROM 'ACTIVE' THEN
          RETURN QUERY SELECT false, NULL::bigint,
            CASE WHEN v_card_state = 'FROZEN' THEN 'card_frozen' ELSE 'card_closed' END;
          RETURN;
        END IF;
      END IF;
      -- The rows this posting adds into: a wallet's (slot 0), this backend's slot of a settlement account.
      PERFORM 1 FROM issuing_balances l JOIN issuing_financial_accounts a ON a.id = l.financial_account_id
        WHERE l.financial_account_id IN (p_source, p_target)
          AND l.slot = CASE WHEN a.kind = 'settlement' THEN v_slot ELSE 0 END
        ORDER BY l.financial_account_id, l.book, l.slot FOR UPDATE OF l;
      -- Decided over each (account, book) summed over its slots: a wallet's one row is locked; a
      -- settlement account's other slots are as committed (it is never funds-checked).
      SELECT max(b.credits_minor - b.debits_minor - b.pending_minor) FILTER (WHERE b.account = p_source AND b.book = 'principal'),
             coalesce(bool_or(b.debits_minor + d.debits > 9007199254740991 OR b.credits_minor + d.credits > 9007199254740991), false)
        INTO v_available, v_over
        FROM (SELECT l.financial_account_id AS account, l.book, sum(l.debits_minor) AS debits_minor,
                     sum(l.credits_minor) AS credits_minor, sum(l.pending_minor) AS pending_minor
              FROM issuing_balances l
              WHERE l.financial_account_id IN (p_source, p_target)
              GROUP BY l.financial_account_id, l.book) b
        LEFT JOIN unnest(p_delta_accounts, p_delta_books, p_delta_debits, p_delta_credits) AS d(account, book, debits, credits)
          ON d.account = b.account AND d.book = b.book;
      IF p_check_funds THEN
        v_available := coalesce(v_available, 0);
        IF v_available < p_amount THEN
          RETURN QUERY SELECT false, v_available, 'insufficient_funds';
          RETURN;
        END IF;
      ELSE
        v_available := NULL;
      END IF;
      IF v_over THEN
        RETURN QUERY SELECT false, v_available, 'balance_limit_exceeded';
        RETURN;
      END IF;
      PERFORM set_config('issuing.posting_counted',
        CASE WHEN p_transaction_write = 'insert' THEN ' transactions ' ELSE '' END || ' transfers book_transfers events ', true);
      WITH inserted_transaction AS (
        INSERT INTO issuing_transactions
          (id, program_id, status, amount_minor, currency, card_id, decline_reason, mcc, merchant_name, created_at, updated_at)
          SELECT p_transaction_id, p_program_id, p_transaction_status, p_amount, p_currency, p_card_id, NULL, p_mcc,
                 p_merchant_name, p_transaction_created_at, p_now
          WHERE p_transaction_write = 'insert'
      ), updated_transaction AS (
        UPDATE issuing_transactions SET status = p_transaction_status, updated_at = p_now
          WHERE id = p_transaction_id AND p_transaction_write = 'update'
      ), inserted_transfer AS (
        INSERT INTO issuing_transfers
          (id, program_id, transaction_id, payment_rail, amount_minor, currency, from_financial_account_id,
           to_financial_account_id, status, description, metadata, created_at, updated_at)
          VALUES (p_transfer_id, p_program_id, p_transaction_id, p_rail, p_amount, p_currency, p_source, p_target,
                  p_transfer_status, p_description, p_metadata, p_now, p_now)
      ), inserted_book_transfer AS (
        INSERT INTO issuing_book_transfers (id, program_id, transfer_id, transaction_id, amount_minor, currency, posted_at)
          VALUES (p_book_transfer_id, p_program_id, p_transfer_id, p_transaction_id, p_amount, p_currency, p_now)
      ), inserted_entries AS (
        INSERT INTO issuing_book_entries (book_transfer_id, position, financial_account_id, book, entry_type, amount_minor, currency, posted_at)
          SELECT p_book_transfer_id, e.ord - 1, e.account, e.book, e.entry_type, e.amount, p_currency, p_now
          FROM unnest(p_entry_accounts, p_entry_books, p_entry_types, p_entry_amounts)
            WITH ORDINALITY AS e(account, book, entry_type, amount, ord)
      ), inserted_events AS (
        INSERT INTO issuing_events (id, program_id, type, created_at, data)
          SELECT v.id, p_program_id, v.type, p_now, v.data
          FROM unnest(p_event_ids, p_event_types, p_event_data) WITH ORDINALITY AS v(id, type, data, ord)
          ORDER BY v.ord
      )
      INSERT INTO issuing_balances (financial_account_id, book, slot, currency, debits_minor, credits_minor, pending_minor, updated_at)
        SELECT d.account, d.book, CASE WHEN a.kind = 'settlement' THEN v_slot ELSE 0 END, p_currency, d.debits, d.credits,
               d.pending, p_now
        FROM unnest(p_delta_accounts, p_delta_books, p_delta_debits, p_delta_credits, p_delta_pending)
          AS d(account, book, debits, credits, pending)
        JOIN issuing_financial_accounts a ON a.id = d.account
        ORDER BY d.account, d.book
        ON CONFLICT (financial_account_id, book, slot) DO UPDATE SET
          debits_minor = issuing_balances.debits_minor + excluded.debits_minor,
          credits_minor = issuing_balances.credits_minor + excluded.credits_minor,
          pending_minor = issuing_balances.pending_minor + excluded.pending_minor,
          updated_at = excluded.updated_at;
      IF v_balance_events > 0 THEN
        INSERT INTO issuing_events (id, program_id, type, created_at, data)
          SELECT v.id, p_program_id, 'balance.updated', p_now, json_build_object(
    'id', a.id, 'object', 'financial_account', 'program_id', a.program_id, 'wallet_id', a.wallet_id, 'kind', a.kind,
    'currency', a.currency,
    'balance', json_build_object('amount', b.credits_minor - b.debits_minor, 'currency', a.currency),
    'pending_balance', json_build_object('amount', b.pending_minor, 'currency', a.currency),
    'available_balance', json_build_object('amount', b.credits_minor - b.debits_minor - b.pending_minor, 'currency', a.currency),
    'created_at', to_char(a.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'updated_at', to_char(b.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text
          FROM unnest(p_balance_event_ids, p_balance_event_accounts) WITH ORDINALITY AS v(id, account, ord)
          JOIN issuing_financial_accounts a ON a.id = v.account
          CROSS JOIN LATERAL (SELECT sum(x.debits_minor) AS debits_minor, sum(x.credits_minor) AS credits_minor,
      sum(x.pending_minor) AS pending_minor, max(x.updated_at) AS updated_at
    FROM issuing_balances x WHERE x.financial_account_id = a.id AND x.book = 'principal') b
          ORDER BY v.ord;
      END IF;
      INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
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
      PERFORM set_config('issuing.posting_counted', '', true);
      IF v_events + v_balance_events > 0 THEN
        PERFORM issuing_webhook_fan_out_events(p_event_ids || p_balance_event_ids,
          array_fill(p_program_id, ARRAY[v_events + v_balance_events]),
          p_event_types || array_fill('balance.updated'::text, ARRAY[v_balance_events]),
          array_fill(p_now, ARRAY[v_events + v_balance_events]), p_channel);
      END IF;
      RETURN QUERY SELECT true, v_available, NULL::text;
    END $$`

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
