import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The transaction-local setting naming the lists a posting function counts itself (0320): the
 * counting triggers of those lists skip while their list is named between spaces.
 */
const COUNTED_SETTING = "issuing.posting_counted"

/** A `balance.updated` event's data: the account as its principal book's slots sum (0430's, unchanged). */
const BALANCE_EVENT_DATA = `json_build_object(
    'id', a.id, 'object', 'financial_account', 'program_id', a.program_id, 'wallet_id', a.wallet_id, 'kind', a.kind,
    'currency', a.currency,
    'balance', json_build_object('amount', b.credits_minor - b.debits_minor, 'currency', a.currency),
    'pending_balance', json_build_object('amount', b.pending_minor, 'currency', a.currency),
    'available_balance', json_build_object('amount', b.credits_minor - b.debits_minor - b.pending_minor, 'currency', a.currency),
    'created_at', to_char(a.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'updated_at', to_char(b.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text`

/**
 * Migration 0440: a posting's rows written with fewer statements and fewer checks
 * (docs/ledger.md#what-a-posting-costs-on-postgresql): `issuing_write_postings` made anew (below)
 * and 8 foreign keys no longer checked (`UNCHECKED_FOREIGN_KEYS`).
 *
 * `issuing_write_postings(p_rows, p_channel)` made anew: the same rows written, the same counts,
 * the same deliveries, in fewer statements.
 *
 * - A table the call has no rows for is not written: `issuing_post_decided` calls it twice, once
 *   with the postings' rows and once with their balances and `balance.updated` events, and each
 *   call ran the other's INSERTs over nothing, every one firing its statement triggers.
 * - Its counts are ONE upsert (the keys of docs/operations.md#exact-totals-at-any-size, spelled as
 *   0210's triggers spell them, as `issuing_post_transfer` has counted its own since 0320), summed
 *   per (list, program, key) over the whole batch, while the lists' INSERT triggers skip: they ran
 *   one upsert per table and statement — the transfers' and the book entries' (with its lookup of
 *   each entry's other entries) the costliest statements of a batch after the inserts themselves.
 *   A book transfer's entries are counted here only when every entry of the call belongs to a book
 *   transfer of the call (so it has no other entries; the batches always write them so); else the
 *   triggers count the book transfers and their entries, as before. Each list on the shard its
 *   trigger took: the events' through `issuing_count_shard` (0370), the others the backend's.
 * - The events and the `balance.updated` events are ONE insert (after the balances, which the
 *   latter read), whose RETURNING gives both the counts and the fan-out its events: the jsonb is no
 *   longer read again for them, and only the events written are counted (a `balance.updated` row
 *   whose account is unknown writes nothing, as before).
 *
 * Numbered 0440, past every id already applied: the Migrator runs only ids above the latest one.
 * PostgreSQL only: SQLite writes a batch with its own prepared statements (NewTransfers.ts).
 */
const WRITE_POSTINGS_0440 = `CREATE OR REPLACE FUNCTION issuing_write_postings(p_rows jsonb, p_channel text)
  RETURNS integer LANGUAGE plpgsql AS $$
    DECLARE
      n integer := 0;
      v_transactions boolean := coalesce(jsonb_array_length(p_rows->'transactions'), 0) > 0;
      v_transfers boolean := coalesce(jsonb_array_length(p_rows->'transfers'), 0) > 0;
      v_book_transfers boolean := coalesce(jsonb_array_length(p_rows->'book_transfers'), 0) > 0;
      v_entries boolean := coalesce(jsonb_array_length(p_rows->'entries'), 0) > 0;
      v_events boolean := coalesce(jsonb_array_length(p_rows->'events'), 0) + coalesce(jsonb_array_length(p_rows->'balance_events'), 0) > 0;
      v_own_entries boolean;
      v_event_shard integer;
      v_ids text[]; v_programs text[]; v_types text[]; v_created timestamptz[];
    BEGIN
      -- Entries of book transfers written by this call have no other entries: counted here.
      v_own_entries := NOT v_entries OR NOT EXISTS (
        SELECT 1 FROM jsonb_to_recordset(p_rows->'entries') AS e(book_transfer_id text)
        WHERE e.book_transfer_id NOT IN (SELECT b.id FROM jsonb_to_recordset(p_rows->'book_transfers') AS b(id text)));
      PERFORM set_config('${COUNTED_SETTING}',
        ' transactions transfers events ' || CASE WHEN v_own_entries THEN ' book_transfers ' ELSE '' END, true);
      IF v_transactions THEN
        INSERT INTO issuing_transactions
          (id, program_id, status, amount_minor, currency, card_id, decline_reason, mcc, merchant_name, created_at, updated_at)
          SELECT r.id, r.program_id, r.status, r.amount_minor, r.currency, r.card_id, NULL, r.mcc, r.merchant_name, r.created_at, r.updated_at
          FROM jsonb_to_recordset(p_rows->'transactions') AS r(id text, program_id text, status text, amount_minor bigint, currency text,
            card_id text, mcc text, merchant_name text, created_at timestamptz, updated_at timestamptz);
      END IF;
      IF v_transfers THEN
        INSERT INTO issuing_transfers
          (id, program_id, transaction_id, payment_rail, amount_minor, currency, from_financial_account_id,
           to_financial_account_id, status, description, metadata, created_at, updated_at)
          SELECT r.id, r.program_id, r.transaction_id, r.payment_rail, r.amount_minor, r.currency, r.from_financial_account_id,
            r.to_financial_account_id, r.status, r.description, coalesce(r.metadata, '{}'), r.created_at, r.created_at
          FROM jsonb_to_recordset(p_rows->'transfers') AS r(id text, program_id text, transaction_id text, payment_rail text,
            amount_minor bigint, currency text, from_financial_account_id text, to_financial_account_id text, status text,
            description text, metadata text, created_at timestamptz);
      END IF;
      IF v_book_transfers THEN
        INSERT INTO issuing_book_transfers (id, program_id, transfer_id, transaction_id, amount_minor, currency, posted_at)
          SELECT r.id, r.program_id, r.transfer_id, r.transaction_id, r.amount_minor, r.currency, r.posted_at
          FROM jsonb_to_recordset(p_rows->'book_transfers') AS r(id text, program_id text, transfer_id text, transaction_id text,
            amount_minor bigint, currency text, posted_at timestamptz);
      END IF;
      IF v_entries THEN
        INSERT INTO issuing_book_entries (book_transfer_id, position, financial_account_id, book, entry_type, amount_minor, currency, posted_at)
          SELECT r.book_transfer_id, r.position, r.financial_account_id, r.book, r.entry_type, r.amount_minor, r.currency, r.posted_at
          FROM jsonb_to_recordset(p_rows->'entries') AS r(book_transfer_id text, position integer, financial_account_id text, book text,
            entry_type text, amount_minor bigint, currency text, posted_at timestamptz);
      END IF;
      IF coalesce(jsonb_array_length(p_rows->'balances'), 0) > 0 THEN
        INSERT INTO issuing_balances (financial_account_id, book, slot, currency, debits_minor, credits_minor, pending_minor, updated_at)
          SELECT r.financial_account_id, r.book, 0, r.currency, r.debits_minor, r.credits_minor, coalesce(r.pending_minor, 0), r.updated_at
          FROM jsonb_to_recordset(p_rows->'balances') AS r(financial_account_id text, book text, currency text, debits_minor bigint,
            credits_minor bigint, pending_minor bigint, updated_at timestamptz)
          ORDER BY r.financial_account_id, r.book
          ON CONFLICT (financial_account_id, book, slot) DO UPDATE SET
            debits_minor = issuing_balances.debits_minor + excluded.debits_minor,
            credits_minor = issuing_balances.credits_minor + excluded.credits_minor,
            pending_minor = issuing_balances.pending_minor + excluded.pending_minor,
            updated_at = excluded.updated_at;
      END IF;
      IF v_events THEN
        -- A balance.updated row may say what the postings written after its own add to its account
        -- (0430): its data is then the account as ITS posting left it, at its posting's time.
        WITH written AS (
          INSERT INTO issuing_events (id, program_id, type, created_at, data)
            SELECT r.id, r.program_id, r.type, r.created_at, r.data
            FROM jsonb_to_recordset(p_rows->'events') AS r(id text, program_id text, type text, created_at timestamptz, data text)
            UNION ALL
            SELECT r.id, r.program_id, 'balance.updated', r.created_at, ${BALANCE_EVENT_DATA}
            FROM jsonb_to_recordset(p_rows->'balance_events') AS r(id text, program_id text, account text, created_at timestamptz,
              later_debits bigint, later_credits bigint, later_pending bigint)
            JOIN issuing_financial_accounts a ON a.id = r.account
            CROSS JOIN LATERAL (SELECT sum(x.debits_minor) - coalesce(r.later_debits, 0) AS debits_minor,
                sum(x.credits_minor) - coalesce(r.later_credits, 0) AS credits_minor,
                sum(x.pending_minor) - coalesce(r.later_pending, 0) AS pending_minor,
                CASE WHEN r.later_debits IS NULL THEN max(x.updated_at) ELSE r.created_at END AS updated_at
              FROM issuing_balances x WHERE x.financial_account_id = a.id AND x.book = 'principal') b
            RETURNING id, program_id, type, created_at
        )
        SELECT array_agg(w.id), array_agg(w.program_id), array_agg(w.type), array_agg(w.created_at)
          INTO v_ids, v_programs, v_types, v_created
          FROM written w;
        IF v_ids IS NOT NULL THEN v_event_shard := issuing_count_shard('events'); END IF;
      END IF;
      -- Every count of the call, one row per (list, program, key), in the order the triggers took
      -- them (list by list as the statements ran, then program and key).
      INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
        SELECT c.list, c.program_id, c.key, CASE WHEN c.list = 'events' THEN v_event_shard ELSE pg_backend_pid() % 16 END, count(*)
        FROM (
          SELECT 1 AS rank, 'transactions' AS list, r.program_id, s.v || '|' || cd.v AS key
            FROM jsonb_to_recordset(CASE WHEN v_transactions THEN p_rows->'transactions' END) AS r(program_id text, status text, card_id text)
            CROSS JOIN LATERAL (VALUES (''), ('=' || r.status)) s(v)
            CROSS JOIN LATERAL (SELECT '' UNION ALL SELECT '=' || r.card_id WHERE r.card_id IS NOT NULL) cd(v)
          UNION ALL
          SELECT 2, 'transfers', r.program_id, s.v || '|' || rl.v || '|' || ac.v
            FROM jsonb_to_recordset(CASE WHEN v_transfers THEN p_rows->'transfers' END) AS r(program_id text, status text,
              payment_rail text, from_financial_account_id text, to_financial_account_id text)
            CROSS JOIN LATERAL (VALUES (''), ('=' || r.status)) s(v)
            CROSS JOIN LATERAL (VALUES (''), ('=' || r.payment_rail)) rl(v)
            CROSS JOIN LATERAL (SELECT '' UNION SELECT '=' || x FROM unnest(ARRAY[r.from_financial_account_id, r.to_financial_account_id]) x
                                WHERE x IS NOT NULL) ac(v)
          UNION ALL
          SELECT 3, 'book_transfers', r.program_id, '|'
            FROM jsonb_to_recordset(CASE WHEN v_book_transfers AND v_own_entries THEN p_rows->'book_transfers' END) AS r(program_id text)
          UNION ALL
          SELECT 4, 'book_transfers', k.program_id, k.key
            FROM (SELECT DISTINCT b.program_id, e.book_transfer_id, k.v AS key
                  FROM jsonb_to_recordset(CASE WHEN v_entries AND v_own_entries THEN p_rows->'entries' END)
                    AS e(book_transfer_id text, financial_account_id text, book text)
                  JOIN jsonb_to_recordset(p_rows->'book_transfers') AS b(id text, program_id text) ON b.id = e.book_transfer_id
                  CROSS JOIN LATERAL (VALUES ('=' || e.financial_account_id || '|'), ('|=' || e.book),
                                             ('=' || e.financial_account_id || '|=' || e.book)) k(v)) k
          UNION ALL
          SELECT 5, 'events', v.program_id, k.v
            FROM unnest(v_programs, v_types) AS v(program_id, type)
            CROSS JOIN LATERAL (VALUES (''), ('=' || v.type)) k(v)
        ) c
        GROUP BY c.list, c.program_id, c.key
        ORDER BY min(c.rank), c.program_id, c.key
        ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      PERFORM set_config('${COUNTED_SETTING}', '', true);
      IF v_ids IS NOT NULL THEN
        n := issuing_webhook_fan_out_events(v_ids, v_programs, v_types, v_created, p_channel);
      END IF;
      RETURN n;
    END $$`

/**
 * The foreign keys a posting's rows no longer check, as (table, constraint): 8 of the 21 checks of
 * a transfer, each a lookup (and, for the program's, a FOR KEY SHARE lock of the one program row
 * that every concurrent posting of the program takes). What keeps each true instead is in
 * docs/ledger.md#foreign-keys-a-posting-does-not-check:
 *
 * - a row and its parent written by the same call of the same posting function: a book entry's
 *   book transfer, a book transfer's transfer and transaction, a transfer's transaction (inserted
 *   in the same statement, or an existing one the ledger read and locked in the transaction first);
 * - the program of the rows only the platform writes, always the caller's program resolved by the
 *   request pipeline (an unknown one is a 403 before any write) and the program of the accounts
 *   (or card) the rows are checked against — transactions, transfers, book transfers and events.
 *   Programs are never deleted.
 *
 * The accounts' keys stay (an account id comes from the request), as do every other table's.
 */
const UNCHECKED_FOREIGN_KEYS = [
  ["issuing_book_entries", "issuing_book_entries_book_transfer_id_fkey"],
  ["issuing_book_transfers", "issuing_book_transfers_transfer_id_fkey"],
  ["issuing_book_transfers", "issuing_book_transfers_transaction_id_fkey"],
  ["issuing_transfers", "issuing_transfers_transaction_id_fkey"],
  ["issuing_transactions", "issuing_transactions_program_id_fkey"],
  ["issuing_transfers", "issuing_transfers_program_id_fkey"],
  ["issuing_book_transfers", "issuing_book_transfers_program_id_fkey"],
  ["issuing_events", "issuing_events_program_id_fkey"]
] as const

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(WRITE_POSTINGS_0440)
  for (const [table, constraint] of UNCHECKED_FOREIGN_KEYS) yield* sql.unsafe(`ALTER TABLE ${table} DROP CONSTRAINT ${constraint}`)
})
