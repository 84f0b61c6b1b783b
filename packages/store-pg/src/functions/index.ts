// Generated from the .sql files of this folder by `npm run schema`; edit those, never this file
// (packages/store-pg/test/functions.test.ts fails while it differs from them).
import type { FunctionFile } from "../StoredFunctions.js"

/** Every stored function's living text, by name (docs/architecture.md#stored-functions). */
export const FUNCTION_FILES: ReadonlyArray<FunctionFile> = [
  {
    name: "issuing_account_json",
    text: `-- The financial_account object of the API (core ledger/Records.ts FinancialAccount) for account
-- row \`a\` and its principal book's totals: the data of every balance.updated this store writes,
-- defined once for issuing_post_transfer, issuing_post_card_message and issuing_write_postings
-- (test/ledger/balance-events.test.ts decodes it with the TypeScript schema and compares it with
-- GET /v1/financial-accounts/{id}). A SQL function of one expression, so the planner inlines it
-- into each caller's statement.
CREATE OR REPLACE FUNCTION issuing_account_json(
    a issuing_financial_accounts,
    p_debits_minor numeric,
    p_credits_minor numeric,
    p_pending_minor numeric,
    p_updated_at timestamp with time zone
)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
  SELECT json_build_object(
    'id', a.id, 'object', 'financial_account', 'program_id', a.program_id, 'wallet_id', a.wallet_id, 'kind', a.kind,
    'currency', a.currency,
    'balance', json_build_object('amount', p_credits_minor - p_debits_minor, 'currency', a.currency),
    'pending_balance', json_build_object('amount', p_pending_minor, 'currency', a.currency),
    'available_balance', json_build_object('amount', p_credits_minor - p_debits_minor - p_pending_minor, 'currency', a.currency),
    'created_at', to_char(a.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'updated_at', to_char(p_updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text
$function$;
`
  },
  {
    name: "issuing_append_events",
    text: `-- A lone emit's events (core webhooks/SqlWebhookQueue.ts): inserted, then fanned out to their
-- subscriptions as a later statement, so the fan-out sees the tags issuing_tag_events wrote for them.
-- One call, one round trip.
CREATE OR REPLACE FUNCTION issuing_append_events(
    p_ids text[],
    p_program_ids text[],
    p_types text[],
    p_created_at timestamp with time zone[],
    p_data text[]
)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
    BEGIN
      INSERT INTO issuing_events (id, program_id, type, created_at, data)
        SELECT * FROM unnest(p_ids, p_program_ids, p_types, p_created_at, p_data);
      RETURN issuing_webhook_fan_out_events(p_ids, p_program_ids, p_types, p_created_at, NULL::text);
    END $function$;
`
  },
  {
    name: "issuing_card_spend_totals_change",
    text: `-- A card's running totals per spending window (docs/card-transactions.md#running-totals): each
-- card transaction's pending + settled amount, and 1 when it is an approved authorization not
-- released whole (PENDING or SETTLED with something authorized), taken off the windows of its old
-- card and creation time and added to its new ones — DAILY, WEEKLY (from Monday), MONTHLY, YEARLY
-- and ALL_TIME (window '') — as one upsert in (card, interval, window) order, ALL_TIME first. Run
-- by deferred constraint triggers at commit, so the totals' rows are every writer's last locks
-- (taken earlier they deadlocked against a card message's balance-row lock).
CREATE OR REPLACE FUNCTION issuing_card_spend_totals_change()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    DECLARE
      v_cards text[] := '{}'; v_at timestamptz[] := '{}'; v_amounts bigint[] := '{}'; v_counts bigint[] := '{}';
      v_amount bigint; v_count bigint; v_at_utc timestamp;
    BEGIN
      -- The common writes (a new card transaction, a message on one): one card and one creation
      -- time, so the five windows' rows are upserted straight from the row's delta.
      IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND OLD.card_id = NEW.card_id AND OLD.created_at = NEW.created_at) THEN
        v_amount := NEW.pending_minor + NEW.settled_minor;
        v_count := CASE WHEN NEW.status IN ('PENDING', 'SETTLED') AND COALESCE(NEW.authorized_minor, NEW.amount_minor) > 0 THEN 1 ELSE 0 END;
        IF TG_OP = 'UPDATE' THEN
          v_amount := v_amount - (OLD.pending_minor + OLD.settled_minor);
          v_count := v_count - CASE WHEN OLD.status IN ('PENDING', 'SETTLED') AND COALESCE(OLD.authorized_minor, OLD.amount_minor) > 0
            THEN 1 ELSE 0 END;
        END IF;
        v_at_utc := NEW.created_at AT TIME ZONE 'UTC';
        INSERT INTO issuing_card_spend_totals AS s (card_id, spend_interval, window_start, spent_minor, spent_count)
          VALUES
            (NEW.card_id, 'ALL_TIME', '', v_amount, v_count),
            (NEW.card_id, 'DAILY', to_char(v_at_utc, 'YYYY-MM-DD'), v_amount, v_count),
            (NEW.card_id, 'MONTHLY', to_char(v_at_utc, 'YYYY-MM') || '-01', v_amount, v_count),
            (NEW.card_id, 'WEEKLY', to_char(date_trunc('week', v_at_utc), 'YYYY-MM-DD'), v_amount, v_count),
            (NEW.card_id, 'YEARLY', to_char(v_at_utc, 'YYYY') || '-01-01', v_amount, v_count)
          ON CONFLICT (card_id, spend_interval, window_start)
            DO UPDATE SET spent_minor = s.spent_minor + excluded.spent_minor, spent_count = s.spent_count + excluded.spent_count;
        RETURN NULL;
      END IF;
      -- A row moved to another card or time, or deleted (SQL outside the platform's writes).
      IF TG_OP <> 'INSERT' AND OLD.card_id IS NOT NULL THEN
        v_cards := ARRAY[OLD.card_id];
        v_at := ARRAY[OLD.created_at];
        v_amounts := ARRAY[-(OLD.pending_minor + OLD.settled_minor)];
        v_counts := ARRAY[CASE WHEN OLD.status IN ('PENDING', 'SETTLED') AND COALESCE(OLD.authorized_minor, OLD.amount_minor) > 0
          THEN -1 ELSE 0 END];
      END IF;
      IF TG_OP <> 'DELETE' AND NEW.card_id IS NOT NULL THEN
        v_cards := v_cards || NEW.card_id;
        v_at := v_at || NEW.created_at;
        v_amounts := v_amounts || (NEW.pending_minor + NEW.settled_minor);
        v_counts := v_counts || CASE WHEN NEW.status IN ('PENDING', 'SETTLED') AND COALESCE(NEW.authorized_minor, NEW.amount_minor) > 0
          THEN 1::bigint ELSE 0::bigint END;
      END IF;
      INSERT INTO issuing_card_spend_totals AS s (card_id, spend_interval, window_start, spent_minor, spent_count)
        SELECT u.card_id, w.spend_interval, w.window_start, SUM(u.amount), SUM(u.n)
        FROM unnest(v_cards, v_at, v_amounts, v_counts) AS u(card_id, created_at, amount, n)
        CROSS JOIN LATERAL (VALUES
          ('ALL_TIME', ''),
          ('DAILY', to_char(u.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')),
          ('MONTHLY', to_char(u.created_at AT TIME ZONE 'UTC', 'YYYY-MM') || '-01'),
          ('WEEKLY', to_char(date_trunc('week', u.created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD')),
          ('YEARLY', to_char(u.created_at AT TIME ZONE 'UTC', 'YYYY') || '-01-01')
        ) AS w(spend_interval, window_start)
        GROUP BY u.card_id, w.spend_interval, w.window_start HAVING SUM(u.amount) <> 0 OR SUM(u.n) <> 0
        ORDER BY u.card_id, w.spend_interval, w.window_start
        ON CONFLICT (card_id, spend_interval, window_start)
          DO UPDATE SET spent_minor = s.spent_minor + excluded.spent_minor, spent_count = s.spent_count + excluded.spent_count;
      RETURN NULL;
    END $function$;
`
  },
  {
    name: "issuing_check_accounts",
    text: `-- The guarantee the foreign keys of entries and transfers to their financial accounts gave
-- (migration 0990, docs/decisions.md#the-accounts-foreign-keys-as-one-check-a-statement): no row
-- of either table names an account that is not there, whoever writes it. Once per inserting
-- statement, over its new rows, the distinct accounts they name looked up by key, one lookup each
-- (\`OFFSET 0\` keeps the planner from a pass over the accounts while the table is small), without
-- locking them: an account is never deleted nor its id changed while rows name it
-- (issuing_refuse_account_removal), so no lock is needed to keep it there until this transaction
-- commits. As a row trigger, for an update of a transfer's accounts. An account inserted by a
-- transaction that has not committed is not seen, and refused (a foreign key would have waited).
CREATE OR REPLACE FUNCTION issuing_check_accounts()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    DECLARE
      v_missing text;
    BEGIN
      IF TG_LEVEL = 'ROW' THEN
        SELECT x INTO v_missing FROM unnest(ARRAY[NEW.from_financial_account_id, NEW.to_financial_account_id]) x
          WHERE NOT EXISTS (SELECT 1 FROM issuing_financial_accounts a WHERE a.id = x) LIMIT 1;
      ELSIF TG_TABLE_NAME = 'issuing_book_entries' THEN
        SELECT r.id INTO v_missing FROM (SELECT DISTINCT n.financial_account_id AS id FROM new_rows n) r
          LEFT JOIN LATERAL (SELECT a.id FROM issuing_financial_accounts a WHERE a.id = r.id OFFSET 0) a ON true
          WHERE a.id IS NULL LIMIT 1;
      ELSE
        SELECT r.id INTO v_missing
          FROM (SELECT n.from_financial_account_id AS id FROM new_rows n UNION SELECT n.to_financial_account_id FROM new_rows n) r
          LEFT JOIN LATERAL (SELECT a.id FROM issuing_financial_accounts a WHERE a.id = r.id OFFSET 0) a ON true
          WHERE a.id IS NULL LIMIT 1;
      END IF;
      IF v_missing IS NOT NULL THEN
        RAISE EXCEPTION 'insert or update on table "%" names financial account "%", which is not present', TG_TABLE_NAME, v_missing
          USING ERRCODE = 'foreign_key_violation';
      END IF;
      RETURN NULL;
    END $function$;
`
  },
  {
    name: "issuing_count_book_entries",
    text: `-- Counts a book transfer once per account of its entries, under the set of books that account's
-- entries have in it: key \`=account|=cash+principal\` (books sorted by code unit, joined with \`+\`;
-- core/src/sql/ListCounts.ts SUMMED_FILTERS), so an account's total sums its sets and a book's
-- total the sets holding it (docs/operations.md#exact-totals-at-any-size). Entries written to a
-- book transfer that has some already move its account from the set before to the set after.
-- The entries are read by their book transfer's key (\`OFFSET 0\` keeps each lookup a correlated
-- subplan: pulled up into a join it read every entry of the table per batch). Skips while the
-- posting functions count their own rows (issuing.posting_counted, the trigger's WHEN).
CREATE OR REPLACE FUNCTION issuing_count_book_entries()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      WITH sets AS (
        SELECT t.book_transfer_id, t.account,
               (SELECT string_agg(b.book, '+' ORDER BY b.book COLLATE "C")
                  FROM (SELECT DISTINCT e.book FROM issuing_book_entries e
                        WHERE e.book_transfer_id = t.book_transfer_id AND e.financial_account_id = t.account OFFSET 0) b) AS after,
               (SELECT string_agg(b.book, '+' ORDER BY b.book COLLATE "C")
                  FROM (SELECT DISTINCT e.book FROM issuing_book_entries e
                        WHERE e.book_transfer_id = t.book_transfer_id AND e.financial_account_id = t.account
                          AND NOT EXISTS (SELECT 1 FROM new_rows n WHERE n.book_transfer_id = e.book_transfer_id AND n.position = e.position) OFFSET 0) b) AS before
          FROM (SELECT DISTINCT r.book_transfer_id, r.financial_account_id AS account FROM new_rows r) t
      )
      INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
        SELECT 'book_transfers', program_id, k, pg_backend_pid() % 16, SUM(d) FROM (
          SELECT bt.program_id, '=' || s.account || '|=' || s.after AS k, 1 AS d
            FROM sets s JOIN issuing_book_transfers bt ON bt.id = s.book_transfer_id
            WHERE s.after IS DISTINCT FROM s.before
          UNION ALL
          SELECT bt.program_id, '=' || s.account || '|=' || s.before, -1
            FROM sets s JOIN issuing_book_transfers bt ON bt.id = s.book_transfer_id
            WHERE s.before IS NOT NULL AND s.after IS DISTINCT FROM s.before
        ) x
        GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
        ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      RETURN NULL;
    END $function$;
`
  },
  {
    name: "issuing_count_card_audit_records",
    text: `-- Keeps the card audit records' counts (docs/operations.md#exact-totals-at-any-size): per
-- statement, one upsert of every (program, key) its rows add or remove, keys \`=card|=action\` with
-- "any" ('') for each filter, on the backend's shard.
CREATE OR REPLACE FUNCTION issuing_count_card_audit_records()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT 'card_audit_records', program_id, k, pg_backend_pid() % 16, SUM(d) FROM (SELECT program_id, k, 1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.card_id END || '|' || CASE d1.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.action END AS k FROM new_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d1
          WHERE (d0.o <> 1 OR r.card_id IS NOT NULL) AND (d1.o <> 1 OR r.action IS NOT NULL)) y) x
   GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT 'card_audit_records', program_id, k, pg_backend_pid() % 16, SUM(d) FROM (SELECT program_id, k, -1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.card_id END || '|' || CASE d1.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.action END AS k FROM old_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d1
          WHERE (d0.o <> 1 OR r.card_id IS NOT NULL) AND (d1.o <> 1 OR r.action IS NOT NULL)) y) x
   GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      ELSE
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT 'card_audit_records', program_id, k, pg_backend_pid() % 16, SUM(d) FROM (SELECT program_id, k, 1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.card_id END || '|' || CASE d1.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.action END AS k FROM new_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d1
          WHERE (d0.o <> 1 OR r.card_id IS NOT NULL) AND (d1.o <> 1 OR r.action IS NOT NULL)) y UNION ALL SELECT program_id, k, -1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.card_id END || '|' || CASE d1.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.action END AS k FROM old_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d1
          WHERE (d0.o <> 1 OR r.card_id IS NOT NULL) AND (d1.o <> 1 OR r.action IS NOT NULL)) y) x
   GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      END IF;
      RETURN NULL;
    END $function$;
`
  },
  {
    name: "issuing_count_cardholders",
    text: `-- Keeps the cardholders' counts (docs/operations.md#exact-totals-at-any-size): per statement, one
-- upsert of every (program, key) its rows add or remove, keys \`=status|=email\` with "any" ('') for
-- each filter, on the backend's shard; an update moves a cardholder between keys (a verification,
-- a new email).
CREATE OR REPLACE FUNCTION issuing_count_cardholders()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT 'cardholders', program_id, k, pg_backend_pid() % 16, SUM(d) FROM (SELECT program_id, k, 1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.status END || '|' || CASE d1.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.email END AS k FROM new_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d1
          WHERE (d0.o <> 1 OR r.status IS NOT NULL) AND (d1.o <> 1 OR r.email IS NOT NULL)) y) x
   GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT 'cardholders', program_id, k, pg_backend_pid() % 16, SUM(d) FROM (SELECT program_id, k, -1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.status END || '|' || CASE d1.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.email END AS k FROM old_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d1
          WHERE (d0.o <> 1 OR r.status IS NOT NULL) AND (d1.o <> 1 OR r.email IS NOT NULL)) y) x
   GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      ELSE
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT 'cardholders', program_id, k, pg_backend_pid() % 16, SUM(d) FROM (SELECT program_id, k, 1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.status END || '|' || CASE d1.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.email END AS k FROM new_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d1
          WHERE (d0.o <> 1 OR r.status IS NOT NULL) AND (d1.o <> 1 OR r.email IS NOT NULL)) y UNION ALL SELECT program_id, k, -1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.status END || '|' || CASE d1.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.email END AS k FROM old_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d1
          WHERE (d0.o <> 1 OR r.status IS NOT NULL) AND (d1.o <> 1 OR r.email IS NOT NULL)) y) x
   GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      END IF;
      RETURN NULL;
    END $function$;
`
  },
  {
    name: "issuing_count_cards",
    text: `-- Keeps the cards' counts (docs/operations.md#exact-totals-at-any-size): per statement, one
-- upsert of every (program, key) its rows add or remove, keys \`=wallet|=state\` with "any" ('') for
-- each filter, on the backend's shard; an update moves a card between keys.
CREATE OR REPLACE FUNCTION issuing_count_cards()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT 'cards', program_id, k, pg_backend_pid() % 16, SUM(d) FROM (SELECT program_id, k, 1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.wallet_id END || '|' || CASE d1.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.state END AS k FROM new_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d1
          WHERE (d0.o <> 1 OR r.wallet_id IS NOT NULL) AND (d1.o <> 1 OR r.state IS NOT NULL)) y) x
   GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT 'cards', program_id, k, pg_backend_pid() % 16, SUM(d) FROM (SELECT program_id, k, -1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.wallet_id END || '|' || CASE d1.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.state END AS k FROM old_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d1
          WHERE (d0.o <> 1 OR r.wallet_id IS NOT NULL) AND (d1.o <> 1 OR r.state IS NOT NULL)) y) x
   GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      ELSE
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT 'cards', program_id, k, pg_backend_pid() % 16, SUM(d) FROM (SELECT program_id, k, 1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.wallet_id END || '|' || CASE d1.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.state END AS k FROM new_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d1
          WHERE (d0.o <> 1 OR r.wallet_id IS NOT NULL) AND (d1.o <> 1 OR r.state IS NOT NULL)) y UNION ALL SELECT program_id, k, -1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.wallet_id END || '|' || CASE d1.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.state END AS k FROM old_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d1
          WHERE (d0.o <> 1 OR r.wallet_id IS NOT NULL) AND (d1.o <> 1 OR r.state IS NOT NULL)) y) x
   GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      END IF;
      RETURN NULL;
    END $function$;
`
  },
  {
    name: "issuing_count_events",
    text: `-- Keeps the events' counts (docs/operations.md#exact-totals-at-any-size), key \`=type\` only (the
-- program's total sums its types), on a shard nobody else is counting into (issuing_count_shard):
-- emits were the hot case of two backends sharing a shard and waiting on each other's counter row
-- until commit.
-- Each key again in the row's UTC month, day and hour (issuing_count_periods, migration 0841).
CREATE OR REPLACE FUNCTION issuing_count_events()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
          SELECT pl.list, x.program_id, x.k, issuing_count_shard('events'), SUM(x.d) FROM (SELECT program_id, k, at, 1 AS d FROM (SELECT r.program_id, '=' || r.type AS k, r.created_at AS at FROM new_rows r) y) x
          CROSS JOIN LATERAL issuing_count_periods('events', x.at) pl(list)
          GROUP BY pl.list, x.program_id, x.k HAVING SUM(x.d) <> 0 ORDER BY pl.list, x.program_id, x.k
          ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
          SELECT pl.list, x.program_id, x.k, issuing_count_shard('events'), SUM(x.d) FROM (SELECT program_id, k, at, -1 AS d FROM (SELECT r.program_id, '=' || r.type AS k, r.created_at AS at FROM old_rows r) y) x
          CROSS JOIN LATERAL issuing_count_periods('events', x.at) pl(list)
          GROUP BY pl.list, x.program_id, x.k HAVING SUM(x.d) <> 0 ORDER BY pl.list, x.program_id, x.k
          ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      ELSE
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
          SELECT pl.list, x.program_id, x.k, issuing_count_shard('events'), SUM(x.d) FROM (SELECT program_id, k, at, 1 AS d FROM (SELECT r.program_id, '=' || r.type AS k, r.created_at AS at FROM new_rows r) y UNION ALL SELECT program_id, k, at, -1 AS d FROM (SELECT r.program_id, '=' || r.type AS k, r.created_at AS at FROM old_rows r) y) x
          CROSS JOIN LATERAL issuing_count_periods('events', x.at) pl(list)
          GROUP BY pl.list, x.program_id, x.k HAVING SUM(x.d) <> 0 ORDER BY pl.list, x.program_id, x.k
          ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      END IF;
      RETURN NULL;
    END $function$;
`
  },
  {
    name: "issuing_count_financial_accounts",
    text: `-- Keeps the financial accounts' counts (docs/operations.md#exact-totals-at-any-size): keys
-- \`=kind|=wallet|=currency\` with "any" ('') for each filter, on the backend's shard.
CREATE OR REPLACE FUNCTION issuing_count_financial_accounts()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT 'financial_accounts', program_id, k, pg_backend_pid() % 16, SUM(d) FROM (SELECT program_id, k, 1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.kind END || '|' || CASE d1.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.wallet_id END || '|' || CASE d2.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.currency END AS k FROM new_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d1 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d2
          WHERE (d0.o <> 1 OR r.kind IS NOT NULL) AND (d1.o <> 1 OR r.wallet_id IS NOT NULL) AND (d2.o <> 1 OR r.currency IS NOT NULL)) y) x
   GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT 'financial_accounts', program_id, k, pg_backend_pid() % 16, SUM(d) FROM (SELECT program_id, k, -1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.kind END || '|' || CASE d1.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.wallet_id END || '|' || CASE d2.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.currency END AS k FROM old_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d1 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d2
          WHERE (d0.o <> 1 OR r.kind IS NOT NULL) AND (d1.o <> 1 OR r.wallet_id IS NOT NULL) AND (d2.o <> 1 OR r.currency IS NOT NULL)) y) x
   GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      ELSE
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT 'financial_accounts', program_id, k, pg_backend_pid() % 16, SUM(d) FROM (SELECT program_id, k, 1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.kind END || '|' || CASE d1.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.wallet_id END || '|' || CASE d2.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.currency END AS k FROM new_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d1 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d2
          WHERE (d0.o <> 1 OR r.kind IS NOT NULL) AND (d1.o <> 1 OR r.wallet_id IS NOT NULL) AND (d2.o <> 1 OR r.currency IS NOT NULL)) y UNION ALL SELECT program_id, k, -1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.kind END || '|' || CASE d1.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.wallet_id END || '|' || CASE d2.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.currency END AS k FROM old_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d1 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d2
          WHERE (d0.o <> 1 OR r.kind IS NOT NULL) AND (d1.o <> 1 OR r.wallet_id IS NOT NULL) AND (d2.o <> 1 OR r.currency IS NOT NULL)) y) x
   GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      END IF;
      RETURN NULL;
    END $function$;
`
  },
  {
    name: "issuing_count_periods",
    text: `-- The lists a count of \`p_list\` is kept under for a row created at \`p_at\` (migration 0841,
-- docs/decisions.md "Time filters and total_count"): the list itself and, for events, transfers and
-- transactions, the same key again in the row's UTC month, day and hour (\`transfers@m2026-11\`,
-- \`transfers@d2026-11-29\`, \`transfers@h2026-11-29T10\`; core/src/sql/ListCounts.ts countPeriods).
-- The period is the row's own created_at, never the time of the write. A SQL function of one
-- SELECT, so the planner inlines it into each counting statement.
CREATE OR REPLACE FUNCTION issuing_count_periods(
    p_list text,
    p_at timestamp with time zone
)
 RETURNS SETOF text
 LANGUAGE sql
 STABLE
AS $function$
  SELECT p_list
  UNION ALL
  SELECT p_list || v.period
  FROM (SELECT to_char(p_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24') AS t) x
  CROSS JOIN LATERAL (VALUES ('@m' || left(x.t, 7)), ('@d' || left(x.t, 10)), ('@h' || x.t)) AS v(period)
  WHERE p_list IN ('events', 'transfers', 'transactions')
$function$;
`
  },
  {
    name: "issuing_count_shard",
    text: `-- A shard of \`p_list\`'s counts that no other transaction is counting into: the first of the 16
-- whose transaction-level advisory lock it gets, starting at the backend's own
-- (docs/operations.md#exact-totals-at-any-size). pg_try_ never waits, so it adds no deadlock; only
-- when all 16 are taken does it fall back to the backend's shard and wait there.
CREATE OR REPLACE FUNCTION issuing_count_shard(
    p_list text
)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
    DECLARE
      v_home integer := pg_backend_pid() % 16;
      v_space integer := hashtext('issuing_list_counts.' || p_list);
    BEGIN
      FOR i IN 0..15 LOOP
        IF pg_try_advisory_xact_lock(v_space, (v_home + i) % 16) THEN
          RETURN (v_home + i) % 16;
        END IF;
      END LOOP;
      RETURN v_home;
    END $function$;
`
  },
  {
    name: "issuing_count_transactions",
    text: `-- Keeps the transactions' counts (docs/operations.md#exact-totals-at-any-size): keys \`=status|\`
-- and, with a card, \`=status|=card\`, status counted per value only (core/src/sql/ListCounts.ts
-- SUMMED_FILTERS), on the backend's shard. Skips while the posting function counts its own rows
-- (issuing.posting_counted, the triggers' WHEN).
-- Each key again in the row's UTC month, day and hour (issuing_count_periods, migration 0841).
CREATE OR REPLACE FUNCTION issuing_count_transactions()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
          SELECT pl.list, x.program_id, x.k, pg_backend_pid() % 16, SUM(x.d) FROM (SELECT program_id, k, at, 1 AS d FROM (SELECT r.program_id, '=' || r.status || '|' || c.v AS k, r.created_at AS at FROM new_rows r
            CROSS JOIN LATERAL (SELECT '' UNION ALL SELECT '=' || r.card_id WHERE r.card_id IS NOT NULL) c(v)) y) x
          CROSS JOIN LATERAL issuing_count_periods('transactions', x.at) pl(list)
          GROUP BY pl.list, x.program_id, x.k HAVING SUM(x.d) <> 0 ORDER BY pl.list, x.program_id, x.k
          ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
          SELECT pl.list, x.program_id, x.k, pg_backend_pid() % 16, SUM(x.d) FROM (SELECT program_id, k, at, -1 AS d FROM (SELECT r.program_id, '=' || r.status || '|' || c.v AS k, r.created_at AS at FROM old_rows r
            CROSS JOIN LATERAL (SELECT '' UNION ALL SELECT '=' || r.card_id WHERE r.card_id IS NOT NULL) c(v)) y) x
          CROSS JOIN LATERAL issuing_count_periods('transactions', x.at) pl(list)
          GROUP BY pl.list, x.program_id, x.k HAVING SUM(x.d) <> 0 ORDER BY pl.list, x.program_id, x.k
          ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      ELSE
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
          SELECT pl.list, x.program_id, x.k, pg_backend_pid() % 16, SUM(x.d) FROM (SELECT program_id, k, at, 1 AS d FROM (SELECT r.program_id, '=' || r.status || '|' || c.v AS k, r.created_at AS at FROM new_rows r
            CROSS JOIN LATERAL (SELECT '' UNION ALL SELECT '=' || r.card_id WHERE r.card_id IS NOT NULL) c(v)) y UNION ALL SELECT program_id, k, at, -1 AS d FROM (SELECT r.program_id, '=' || r.status || '|' || c.v AS k, r.created_at AS at FROM old_rows r
            CROSS JOIN LATERAL (SELECT '' UNION ALL SELECT '=' || r.card_id WHERE r.card_id IS NOT NULL) c(v)) y) x
          CROSS JOIN LATERAL issuing_count_periods('transactions', x.at) pl(list)
          GROUP BY pl.list, x.program_id, x.k HAVING SUM(x.d) <> 0 ORDER BY pl.list, x.program_id, x.k
          ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      END IF;
      RETURN NULL;
    END $function$;
`
  },
  {
    name: "issuing_count_transfers",
    text: `-- Keeps the transfers' counts (docs/operations.md#exact-totals-at-any-size): keys
-- \`=status|=rail|\` and \`=status|=rail|=account\` for each of its two accounts (which differ), status
-- and rail counted per value only (core/src/sql/ListCounts.ts SUMMED_FILTERS: a total without them
-- sums their values), on the backend's shard. Skips while a posting function counts its own rows.
-- Each key again in the row's UTC month, day and hour (issuing_count_periods, migration 0841).
CREATE OR REPLACE FUNCTION issuing_count_transfers()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
          SELECT pl.list, x.program_id, x.k, pg_backend_pid() % 16, SUM(x.d) FROM (SELECT program_id, k, at, 1 AS d FROM (SELECT r.program_id, '=' || r.status || '|=' || r.payment_rail || '|' || a.v AS k, r.created_at AS at FROM new_rows r
            CROSS JOIN LATERAL (SELECT '' UNION SELECT '=' || r.from_financial_account_id UNION SELECT '=' || r.to_financial_account_id) a(v)) y) x
          CROSS JOIN LATERAL issuing_count_periods('transfers', x.at) pl(list)
          GROUP BY pl.list, x.program_id, x.k HAVING SUM(x.d) <> 0 ORDER BY pl.list, x.program_id, x.k
          ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
          SELECT pl.list, x.program_id, x.k, pg_backend_pid() % 16, SUM(x.d) FROM (SELECT program_id, k, at, -1 AS d FROM (SELECT r.program_id, '=' || r.status || '|=' || r.payment_rail || '|' || a.v AS k, r.created_at AS at FROM old_rows r
            CROSS JOIN LATERAL (SELECT '' UNION SELECT '=' || r.from_financial_account_id UNION SELECT '=' || r.to_financial_account_id) a(v)) y) x
          CROSS JOIN LATERAL issuing_count_periods('transfers', x.at) pl(list)
          GROUP BY pl.list, x.program_id, x.k HAVING SUM(x.d) <> 0 ORDER BY pl.list, x.program_id, x.k
          ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      ELSE
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
          SELECT pl.list, x.program_id, x.k, pg_backend_pid() % 16, SUM(x.d) FROM (SELECT program_id, k, at, 1 AS d FROM (SELECT r.program_id, '=' || r.status || '|=' || r.payment_rail || '|' || a.v AS k, r.created_at AS at FROM new_rows r
            CROSS JOIN LATERAL (SELECT '' UNION SELECT '=' || r.from_financial_account_id UNION SELECT '=' || r.to_financial_account_id) a(v)) y UNION ALL SELECT program_id, k, at, -1 AS d FROM (SELECT r.program_id, '=' || r.status || '|=' || r.payment_rail || '|' || a.v AS k, r.created_at AS at FROM old_rows r
            CROSS JOIN LATERAL (SELECT '' UNION SELECT '=' || r.from_financial_account_id UNION SELECT '=' || r.to_financial_account_id) a(v)) y) x
          CROSS JOIN LATERAL issuing_count_periods('transfers', x.at) pl(list)
          GROUP BY pl.list, x.program_id, x.k HAVING SUM(x.d) <> 0 ORDER BY pl.list, x.program_id, x.k
          ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      END IF;
      RETURN NULL;
    END $function$;
`
  },
  {
    name: "issuing_count_wallets",
    text: `-- Keeps the wallets' counts (docs/operations.md#exact-totals-at-any-size): key '' for every wallet
-- and \`=tag\` for a tagged one, so a re-tag moves one between tags and an update that keeps the tag
-- nets to nothing.
CREATE OR REPLACE FUNCTION issuing_count_wallets()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT 'wallets', program_id, k, pg_backend_pid() % 16, SUM(d) FROM (SELECT program_id, k, 1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.tag END AS k FROM new_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0
          WHERE (d0.o <> 1 OR r.tag IS NOT NULL)) y) x
   GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT 'wallets', program_id, k, pg_backend_pid() % 16, SUM(d) FROM (SELECT program_id, k, -1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.tag END AS k FROM old_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0
          WHERE (d0.o <> 1 OR r.tag IS NOT NULL)) y) x
   GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      ELSE
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT 'wallets', program_id, k, pg_backend_pid() % 16, SUM(d) FROM (SELECT program_id, k, 1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.tag END AS k FROM new_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0
          WHERE (d0.o <> 1 OR r.tag IS NOT NULL)) y UNION ALL SELECT program_id, k, -1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.tag END AS k FROM old_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0
          WHERE (d0.o <> 1 OR r.tag IS NOT NULL)) y) x
   GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      END IF;
      RETURN NULL;
    END $function$;
`
  },
  {
    name: "issuing_count_webhook_attempts",
    text: `-- Keeps the webhook attempts' counts (docs/operations.md#exact-totals-at-any-size), keys
-- \`=subscription|=status\`, on a shard nobody else is counting into (issuing_count_shard): the
-- delivery workers record attempts concurrently.
CREATE OR REPLACE FUNCTION issuing_count_webhook_attempts()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT 'webhook_attempts', program_id, k, issuing_count_shard('webhook_attempts'), SUM(d) FROM (SELECT program_id, k, 1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.subscription_id END || '|' || CASE d1.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.status END AS k FROM new_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d1
          WHERE (d0.o <> 1 OR r.subscription_id IS NOT NULL) AND (d1.o <> 1 OR r.status IS NOT NULL)) y) x
   GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT 'webhook_attempts', program_id, k, issuing_count_shard('webhook_attempts'), SUM(d) FROM (SELECT program_id, k, -1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.subscription_id END || '|' || CASE d1.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.status END AS k FROM old_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d1
          WHERE (d0.o <> 1 OR r.subscription_id IS NOT NULL) AND (d1.o <> 1 OR r.status IS NOT NULL)) y) x
   GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      ELSE
        INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
   SELECT 'webhook_attempts', program_id, k, issuing_count_shard('webhook_attempts'), SUM(d) FROM (SELECT program_id, k, 1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.subscription_id END || '|' || CASE d1.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.status END AS k FROM new_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d1
          WHERE (d0.o <> 1 OR r.subscription_id IS NOT NULL) AND (d1.o <> 1 OR r.status IS NOT NULL)) y UNION ALL SELECT program_id, k, -1 AS d FROM (SELECT r.program_id AS program_id, CASE d0.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.subscription_id END || '|' || CASE d1.o WHEN 0 THEN '' WHEN 1 THEN '=' || r.status END AS k FROM old_rows r CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d0 CROSS JOIN (SELECT 0 AS o UNION ALL SELECT 1) d1
          WHERE (d0.o <> 1 OR r.subscription_id IS NOT NULL) AND (d1.o <> 1 OR r.status IS NOT NULL)) y) x
   GROUP BY program_id, k HAVING SUM(d) <> 0 ORDER BY program_id, k
   ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      END IF;
      RETURN NULL;
    END $function$;
`
  },
  {
    name: "issuing_lock_posting_rows",
    text: `-- The balance rows a posting between two accounts adds into, locked in the one order every write
-- takes them (docs/ledger.md#posting-rules): each wallet's rows (slot 0) and this backend's slot of
-- a settlement account's (issuing_posting_slot), by (account, book, slot), for a card message's
-- transfer (issuing_post_card_message; issuing_post_transfer locks in the statement that sums them).
-- Returns this backend's slot. Each row's account is a lookup by key (\`OFFSET 0\`), never a pass over
-- the program's accounts.
CREATE OR REPLACE FUNCTION issuing_lock_posting_rows(
    p_source text,
    p_target text
)
 RETURNS smallint
 LANGUAGE plpgsql
AS $function$
    DECLARE v_slot smallint := pg_backend_pid() % 16;
    BEGIN
      PERFORM 1 FROM issuing_balances l
        CROSS JOIN LATERAL (SELECT a.kind FROM issuing_financial_accounts a WHERE a.id = l.financial_account_id OFFSET 0) a
        WHERE l.financial_account_id IN (p_source, p_target)
          AND l.slot = issuing_posting_slot(a.kind)
        ORDER BY l.financial_account_id, l.book, l.slot FOR UPDATE OF l;
      RETURN v_slot;
    END $function$;
`
  },
  {
    name: "issuing_post_card_message",
    text: `-- One message of a card transaction in ONE statement (docs/card-transactions.md#what-a-message-writes):
-- the card still ACTIVE (FOR SHARE, which a freeze waits for), the wallet's principal row locked and
-- its available amount checked when the message moves its hold or needs funds (the transfer's rows
-- first, in the order every posting takes them, so a return cannot deadlock against it), the
-- transaction row, the hold's change, the events and their fan-out, the account's balance.updated,
-- then the message's transfer (\`p_transfer\`, a posting record of issuing_post_transfer, NULL when
-- the message moves no money). A refusal answers (false, available, refusal) and writes nothing of
-- its own; a refused transfer is answered too, and the caller's transaction rolls the message back.
CREATE OR REPLACE FUNCTION issuing_post_card_message(
    p_transaction jsonb,
    p_write text,
    p_account text,
    p_pending_delta bigint,
    p_require_available bigint,
    p_active_card text,
    p_now timestamp with time zone,
    p_event_ids text[],
    p_event_types text[],
    p_event_data text[],
    p_balance_event_id text,
    p_channel text,
    p_transfer jsonb
)
 RETURNS TABLE(posted boolean, available bigint, refusal text)
 LANGUAGE plpgsql
AS $function$
    DECLARE v_available bigint; v_card_state text; v_program text := p_transaction->>'program_id';
      v_ids text[] := p_event_ids; v_types text[] := p_event_types; v_transfer record;
    BEGIN
      IF p_active_card IS NOT NULL THEN
        SELECT c.state INTO v_card_state FROM issuing_cards c WHERE c.id = p_active_card FOR SHARE;
        IF v_card_state IS DISTINCT FROM 'ACTIVE' THEN
          RETURN QUERY SELECT false, NULL::bigint,
            CASE WHEN v_card_state = 'FROZEN' THEN 'card_frozen' ELSE 'card_closed' END;
          RETURN;
        END IF;
      END IF;
      -- The wallet's principal row, locked when the message moves its hold or needs its funds (a
      -- decline does neither: it locks nothing).
      IF p_require_available > 0 OR p_pending_delta <> 0 THEN
        IF p_transfer IS NOT NULL THEN
          PERFORM issuing_lock_posting_rows(p_transfer->>'source', p_transfer->>'target');
        END IF;
        SELECT b.credits_minor - b.debits_minor - b.pending_minor INTO v_available FROM issuing_balances b
          WHERE b.financial_account_id = p_account AND b.book = 'principal' FOR UPDATE;
        v_available := coalesce(v_available, 0);
        IF p_require_available > 0 AND v_available < p_require_available THEN
          RETURN QUERY SELECT false, v_available, 'insufficient_funds';
          RETURN;
        END IF;
      END IF;
      IF p_write = 'insert' THEN
        INSERT INTO issuing_transactions SELECT * FROM jsonb_populate_record(NULL::issuing_transactions, p_transaction);
      ELSE
        UPDATE issuing_transactions t SET status = r.status, amount_minor = r.amount_minor, decline_reason = r.decline_reason,
            authorized_minor = r.authorized_minor, pending_minor = r.pending_minor, settled_minor = r.settled_minor,
            expires_at = r.expires_at, card_events = r.card_events, request_history = r.request_history, updated_at = r.updated_at
          FROM jsonb_populate_record(NULL::issuing_transactions, p_transaction) r
          WHERE t.id = r.id;
      END IF;
      IF p_pending_delta <> 0 THEN
        UPDATE issuing_balances SET pending_minor = pending_minor + p_pending_delta, updated_at = p_now
          WHERE financial_account_id = p_account AND book = 'principal';
      END IF;
      INSERT INTO issuing_events (id, program_id, type, created_at, data)
        SELECT v.id, v_program, v.type, p_now, v.data
        FROM unnest(p_event_ids, p_event_types, p_event_data) WITH ORDINALITY AS v(id, type, data, ord)
        ORDER BY v.ord;
      IF p_balance_event_id IS NOT NULL THEN
        INSERT INTO issuing_events (id, program_id, type, created_at, data)
          SELECT p_balance_event_id, v_program, 'balance.updated', p_now,
                 issuing_account_json(a, b.debits_minor, b.credits_minor, b.pending_minor, b.updated_at)
          FROM issuing_financial_accounts a
          JOIN issuing_balances b ON b.financial_account_id = a.id AND b.book = 'principal'
          WHERE a.id = p_account;
        v_ids := v_ids || p_balance_event_id;
        v_types := v_types || 'balance.updated'::text;
      END IF;
      IF coalesce(array_length(v_ids, 1), 0) > 0 THEN
        PERFORM issuing_webhook_fan_out_events(v_ids, array_fill(v_program, ARRAY[array_length(v_ids, 1)]), v_types,
          array_fill(p_now, ARRAY[array_length(v_ids, 1)]), p_channel);
      END IF;
      IF p_transfer IS NOT NULL THEN
        SELECT x.posted, x.available, x.refusal INTO v_transfer FROM issuing_post_transfer(p_transfer, p_channel) x;
        IF NOT v_transfer.posted THEN
          RETURN QUERY SELECT false, v_transfer.available, v_transfer.refusal;
          RETURN;
        END IF;
      END IF;
      RETURN QUERY SELECT true, v_available, NULL::text;
    END $function$;
`
  },
  {
    name: "issuing_post_decided",
    text: `-- A batch decided in the process over balances read without locks, written in ONE statement that
-- holds the balance-row locks only briefly (docs/ledger.md#batches): the postings' new rows first
-- (issuing_write_postings), then every slot of the batch's accounts locked in (account, book, slot)
-- order, the batch's decision checked against what those rows hold now, and the summed deltas and
-- balance.updated written only if it stands. Otherwise SQLSTATE IB409 rolls the statement back and
-- the process runs the batch the locked way. \`p_rows\`: issuing_write_postings' rows but the
-- balance.updated events, which are \`p_balance_events\` (written after the balances; a parameter of
-- their own, as taking them out of \`p_rows\` would copy the whole document). \`p_postings\`: each
-- posting in order as { source, amount, check_funds, posted, refusal, available } (\`available\`: its
-- source's available principal before it, as the process decided it). \`p_read\`: every (account,
-- book) the postings touch as { account, book, debits, credits, pending }, the totals the process
-- decided over (0 where it read no row). \`p_balances\`: the summed deltas of the postings that post.
-- The decision stands when every total moved only by debits and credits added (which never shrink)
-- and pending changed, each posting's available principal is what it was plus what its source's
-- moved, the funds check gives the same answers over that, and no total after the batch is over the
-- limit (a posting over it then was still over it now; none under it now is over it before its
-- turn, as totals only grow along the batch): a check per posting and per row, no running totals.
-- Answers each posting's available principal as read under the locks.
CREATE OR REPLACE FUNCTION issuing_post_decided(
    p_rows jsonb,
    p_balance_events jsonb,
    p_postings jsonb,
    p_read jsonb,
    p_balances jsonb,
    p_channel text
)
 RETURNS bigint[]
 LANGUAGE plpgsql
AS $function$
    DECLARE
      v_accounts text[];
      v_disagree boolean;
      v_available bigint[];
    BEGIN
      PERFORM issuing_write_postings(p_rows, p_channel);
      SELECT array_agg(DISTINCT r.account) INTO v_accounts FROM jsonb_to_recordset(p_read) AS r(account text);
      PERFORM 1 FROM issuing_balances WHERE financial_account_id = ANY (v_accounts)
        ORDER BY financial_account_id, book, slot FOR UPDATE;
      WITH moved AS (
        SELECT r.account, r.book,
               coalesce(n.debits_minor, 0) - r.debits AS debits, coalesce(n.credits_minor, 0) - r.credits AS credits,
               coalesce(n.pending_minor, 0) - r.pending AS pending,
               coalesce(n.debits_minor, 0) + coalesce(b.debits_minor, 0) > 9007199254740991
                 OR coalesce(n.credits_minor, 0) + coalesce(b.credits_minor, 0) > 9007199254740991 AS over
        FROM jsonb_to_recordset(p_read) AS r(account text, book text, debits numeric, credits numeric, pending numeric)
        LEFT JOIN (SELECT x.financial_account_id, x.book, sum(x.debits_minor) AS debits_minor,
                          sum(x.credits_minor) AS credits_minor, sum(x.pending_minor) AS pending_minor
                   FROM issuing_balances x WHERE x.financial_account_id = ANY (v_accounts)
                   GROUP BY x.financial_account_id, x.book) n
          ON n.financial_account_id = r.account AND n.book = r.book
        LEFT JOIN jsonb_to_recordset(p_balances) AS b(financial_account_id text, book text, debits_minor numeric, credits_minor numeric)
          ON b.financial_account_id = r.account AND b.book = r.book
      ), principal AS (
        -- What each account's principal moved by, looked up by key per posting: a join with
        -- \`moved\` is planned as a nested loop (its filtered CTE estimated at one row), a scan of
        -- every row per posting.
        SELECT jsonb_object_agg(m.account, m.credits - m.debits - m.pending) AS moved FROM moved m WHERE m.book = 'principal'
      ), verdict AS (
        SELECT p.ord, p.amount, p.check_funds, p.posted, p.refusal,
               p.available + coalesce((pr.moved ->> p.source)::numeric, 0) AS available
        FROM ROWS FROM (jsonb_to_recordset(p_postings) AS (source text, amount numeric, check_funds boolean, posted boolean,
                        refusal text, available numeric)) WITH ORDINALITY AS p(source, amount, check_funds, posted, refusal, available, ord)
        CROSS JOIN principal pr
      )
      SELECT (SELECT bool_or(m.debits < 0 OR m.credits < 0 OR m.over) FROM moved m)
             OR bool_or(CASE WHEN check_funds AND available < amount THEN refusal IS DISTINCT FROM 'insufficient_funds'
                             WHEN refusal = 'balance_limit_exceeded' THEN false
                             ELSE NOT posted OR refusal IS NOT NULL END),
             array_agg(CASE WHEN check_funds THEN available ELSE 0 END::bigint ORDER BY ord)
        INTO v_disagree, v_available
        FROM verdict;
      IF v_disagree THEN
        RAISE EXCEPTION 'the batch was decided otherwise under the balance locks' USING ERRCODE = 'IB409';
      END IF;
      PERFORM issuing_write_postings(jsonb_build_object('balances', p_balances, 'balance_events', p_balance_events), p_channel);
      RETURN v_available;
    END $function$;
`
  },
  {
    name: "issuing_post_transfer",
    text: `-- One transfer's every row in ONE statement (docs/ledger.md#what-a-posting-costs-on-postgresql):
-- the card still ACTIVE when the posting names one, the balance rows it adds into locked (in the
-- statement that also sums them, issuing_posting_slot choosing a settlement account's slot), refused (nothing written) when the source's principal cannot cover
-- the amount (funds checked) or a running total would pass 2^53 - 1; else the transaction (insert
-- or update), transfer, book transfer, entries and events, the balance deltas added, each wallet
-- account's balance.updated as the posting leaves it, the posting's own list counts in one upsert
-- while the counting triggers skip (issuing.posting_counted; the keys of migration 0750, status,
-- rail, type and book counted per value only: 10 rows for a book transfer; those of the transaction,
-- transfer and events again in their UTC month, day and hour, migration 0841: 34 rows; derived by
-- the process from the record's own fields and sent as its \`counts\`), and the fan-out.
--
-- \`p_posting\` is the posting record, every field by name, built in one place
-- (store-pg/src/PostingRecord.ts) for a single posting, a batch's (issuing_post_transfers) and a
-- card message's transfer (issuing_post_card_message) alike. A record without one of its fields
-- (a process of an earlier release sending another shape) is refused with SQLSTATE 22023 before
-- anything is written.
--
-- The posting's accounts are read by key, each from the record's own rows (a lateral lookup that
-- \`OFFSET 0\` keeps a lookup): joined as tables, the planner, which takes a jsonb_to_recordset for
-- 100 rows, read every account of a program of fewer and summed the balance rows of each
-- (test/PostingWork.test.ts; docs/operations.md#the-databases-work-per-transfer-postgresql).
CREATE OR REPLACE FUNCTION issuing_post_transfer(
    p_posting jsonb,
    p_channel text
)
 RETURNS TABLE(posted boolean, available bigint, refusal text)
 LANGUAGE plpgsql
AS $function$
    DECLARE
      v_program_id text := p_posting->>'program_id';
      v_source text := p_posting->>'source';
      v_target text := p_posting->>'target';
      v_amount bigint := (p_posting->>'amount')::bigint;
      v_currency text := p_posting->>'currency';
      v_now timestamptz := (p_posting->>'now')::timestamptz;
      v_active_card text := p_posting->>'active_card';
      v_transaction_write text := p_posting->>'transaction_write';
      v_transaction_id text := p_posting->>'transaction_id';
      v_transaction_status text := p_posting->>'transaction_status';
      v_card_id text := p_posting->>'card_id';
      v_transfer_id text := p_posting->>'transfer_id';
      v_rail text := p_posting->>'rail';
      v_transfer_status text := p_posting->>'transfer_status';
      v_book_transfer_id text := p_posting->>'book_transfer_id';
      v_events integer := jsonb_array_length(p_posting->'events');
      v_balance_events integer := jsonb_array_length(p_posting->'balance_events');
      v_available bigint; v_over boolean; v_card_state text; v_source_slot smallint; v_target_slot smallint; v_set text;
    BEGIN
      IF NOT p_posting ?& ARRAY['program_id', 'source', 'target', 'check_funds', 'amount', 'currency', 'now', 'active_card',
          'transaction_write', 'transaction_id', 'transaction_status', 'transaction_created_at', 'card_id', 'mcc',
          'merchant_name', 'transfer_id', 'rail', 'transfer_status', 'description', 'metadata', 'book_transfer_id', 'entries',
          'deltas', 'events', 'balance_events', 'counts'] THEN
        RAISE EXCEPTION 'issuing_post_transfer: not a posting record (store-pg/src/PostingRecord.ts)' USING ERRCODE = '22023';
      END IF;
      IF v_active_card IS NOT NULL THEN
        SELECT c.state INTO v_card_state FROM issuing_cards c WHERE c.id = v_active_card FOR SHARE;
        IF v_card_state IS DISTINCT FROM 'ACTIVE' THEN
          RETURN QUERY SELECT false, NULL::bigint,
            CASE WHEN v_card_state = 'FROZEN' THEN 'card_frozen' ELSE 'card_closed' END;
          RETURN;
        END IF;
      END IF;
      -- ONE statement locks the rows this posting adds into — a wallet's (slot 0), this backend's slot
      -- of a settlement account (issuing_posting_slot) — in the order every posting takes them
      -- (docs/ledger.md#posting-rules), and decides over each (account, book) summed over its slots:
      -- the locked rows as FOR UPDATE returns them (their newest versions, after any wait), a
      -- settlement account's other slots as committed (it is never funds-checked). Each account is
      -- read by key once; its kind then gives the slot the balance upsert below adds into.
      WITH accounts AS MATERIALIZED (
        SELECT a.id, issuing_posting_slot(a.kind) AS slot FROM issuing_financial_accounts a WHERE a.id IN (v_source, v_target)
      ), locked AS MATERIALIZED (
        SELECT l.financial_account_id AS account, l.book, l.slot, l.debits_minor, l.credits_minor, l.pending_minor
        FROM issuing_balances l
        WHERE l.financial_account_id IN (v_source, v_target) AND l.slot = (SELECT a.slot FROM accounts a WHERE a.id = l.financial_account_id)
        ORDER BY l.financial_account_id, l.book, l.slot FOR UPDATE OF l
      ), b AS (
        SELECT x.account, x.book, sum(x.debits_minor) AS debits_minor, sum(x.credits_minor) AS credits_minor,
               sum(x.pending_minor) AS pending_minor
        FROM (SELECT account, book, debits_minor, credits_minor, pending_minor FROM locked
              UNION ALL
              SELECT o.financial_account_id, o.book, o.debits_minor, o.credits_minor, o.pending_minor
              FROM issuing_balances o
              WHERE o.financial_account_id IN (v_source, v_target)
                AND o.slot <> (SELECT a.slot FROM accounts a WHERE a.id = o.financial_account_id)) x
        GROUP BY x.account, x.book
      )
      SELECT max(b.credits_minor - b.debits_minor - b.pending_minor) FILTER (WHERE b.account = v_source AND b.book = 'principal'),
             coalesce(bool_or(b.debits_minor + d.debits > 9007199254740991 OR b.credits_minor + d.credits > 9007199254740991), false),
             (SELECT a.slot FROM accounts a WHERE a.id = v_source), (SELECT a.slot FROM accounts a WHERE a.id = v_target)
        INTO v_available, v_over, v_source_slot, v_target_slot
        FROM b
        LEFT JOIN jsonb_to_recordset(p_posting->'deltas') AS d(account text, book text, debits bigint, credits bigint)
          ON d.account = b.account AND d.book = b.book;
      IF (p_posting->>'check_funds')::boolean THEN
        v_available := coalesce(v_available, 0);
        IF v_available < v_amount THEN
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
      -- Assigned rather than PERFORMed: a plain expression, evaluated without a query's executor.
      v_set := set_config('issuing.posting_counted',
        CASE WHEN v_transaction_write = 'insert' THEN ' transactions ' ELSE '' END || ' transfers book_transfers events ', true);
      WITH inserted_transaction AS (
        INSERT INTO issuing_transactions
          (id, program_id, status, amount_minor, currency, card_id, decline_reason, mcc, merchant_name, created_at, updated_at)
          SELECT v_transaction_id, v_program_id, v_transaction_status, v_amount, v_currency, v_card_id, NULL, p_posting->>'mcc',
                 p_posting->>'merchant_name', (p_posting->>'transaction_created_at')::timestamptz, v_now
          WHERE v_transaction_write = 'insert'
      ), updated_transaction AS (
        UPDATE issuing_transactions SET status = v_transaction_status, updated_at = v_now
          WHERE id = v_transaction_id AND v_transaction_write = 'update'
      ), inserted_transfer AS (
        INSERT INTO issuing_transfers
          (id, program_id, transaction_id, payment_rail, amount_minor, currency, from_financial_account_id,
           to_financial_account_id, status, description, metadata, created_at, updated_at)
          VALUES (v_transfer_id, v_program_id, v_transaction_id, v_rail, v_amount, v_currency, v_source, v_target,
                  v_transfer_status, p_posting->>'description', p_posting->>'metadata', v_now, v_now)
      ), inserted_book_transfer AS (
        INSERT INTO issuing_book_transfers (id, program_id, transfer_id, transaction_id, amount_minor, currency, posted_at)
          VALUES (v_book_transfer_id, v_program_id, v_transfer_id, v_transaction_id, v_amount, v_currency, v_now)
      ), inserted_entries AS (
        INSERT INTO issuing_book_entries (book_transfer_id, position, financial_account_id, book, entry_type, amount_minor, currency, posted_at)
          SELECT v_book_transfer_id, e.ord - 1, e.account, e.book, e.entry_type, e.amount, v_currency, v_now
          FROM ROWS FROM (jsonb_to_recordset(p_posting->'entries') AS (account text, book text, entry_type text, amount bigint))
            WITH ORDINALITY AS e(account, book, entry_type, amount, ord)
      ), inserted_events AS (
        INSERT INTO issuing_events (id, program_id, type, created_at, data)
          SELECT v.id, v_program_id, v.type, v_now, v.data
          FROM ROWS FROM (jsonb_to_recordset(p_posting->'events') AS (id text, type text, data text))
            WITH ORDINALITY AS v(id, type, data, ord)
          ORDER BY v.ord
      )
      INSERT INTO issuing_balances (financial_account_id, book, slot, currency, debits_minor, credits_minor, pending_minor, updated_at)
        SELECT d.account, d.book, CASE d.account WHEN v_source THEN v_source_slot WHEN v_target THEN v_target_slot END, v_currency,
               d.debits, d.credits, d.pending, v_now
        FROM jsonb_to_recordset(p_posting->'deltas') AS d(account text, book text, debits bigint, credits bigint, pending bigint)
        ORDER BY d.account, d.book
        ON CONFLICT (financial_account_id, book, slot) DO UPDATE SET
          debits_minor = issuing_balances.debits_minor + excluded.debits_minor,
          credits_minor = issuing_balances.credits_minor + excluded.credits_minor,
          pending_minor = issuing_balances.pending_minor + excluded.pending_minor,
          updated_at = excluded.updated_at;
      IF v_balance_events > 0 THEN
        INSERT INTO issuing_events (id, program_id, type, created_at, data)
          SELECT v.id, v_program_id, 'balance.updated', v_now,
                 issuing_account_json(fa.a, b.debits_minor, b.credits_minor, b.pending_minor, b.updated_at)
          FROM ROWS FROM (jsonb_to_recordset(p_posting->'balance_events') AS (id text, account text))
            WITH ORDINALITY AS v(id, account, ord)
          CROSS JOIN LATERAL (SELECT a FROM issuing_financial_accounts a WHERE a.id = v.account OFFSET 0) fa
          CROSS JOIN LATERAL (SELECT sum(x.debits_minor) AS debits_minor, sum(x.credits_minor) AS credits_minor,
                                     sum(x.pending_minor) AS pending_minor, max(x.updated_at) AS updated_at
                              FROM issuing_balances x WHERE x.financial_account_id = v.account AND x.book = 'principal') b
          ORDER BY v.ord;
      END IF;
      -- The counts the record's rows add, as the process derived them (PostingRecord.ts countsOf),
      -- taken in the order every counting statement takes its rows: transactions, transfers, book
      -- transfers, events, then (list, key).
      INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
        SELECT c.list, v_program_id, c.key, pg_backend_pid() % 16, c.n
        FROM jsonb_to_recordset(p_posting->'counts') AS c(list text, key text, n bigint)
        ORDER BY CASE split_part(c.list, '@', 1) WHEN 'transactions' THEN 1 WHEN 'transfers' THEN 2 WHEN 'book_transfers' THEN 4 ELSE 5 END,
                 c.list, c.key
        ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      v_set := set_config('issuing.posting_counted', '', true);
      IF v_events + v_balance_events > 0 THEN
        PERFORM issuing_webhook_fan_out_events(array_agg(v.id ORDER BY v.ord), array_fill(v_program_id, ARRAY[v_events + v_balance_events]),
            array_agg(v.type ORDER BY v.ord), array_fill(v_now, ARRAY[v_events + v_balance_events]), p_channel)
          FROM (SELECT e.id, e.type, e.ord FROM ROWS FROM (jsonb_to_recordset(p_posting->'events') AS (id text, type text))
                  WITH ORDINALITY AS e(id, type, ord)
                UNION ALL
                SELECT e.id, 'balance.updated', v_events + e.ord FROM ROWS FROM (jsonb_to_recordset(p_posting->'balance_events') AS (id text))
                  WITH ORDINALITY AS e(id, ord)) v;
      END IF;
      RETURN QUERY SELECT true, v_available, NULL::text;
    END $function$;
`
  },
  {
    name: "issuing_post_transfers",
    text: `-- Many postings in ONE statement (a batch's run that is not all new transfers): each posting record
-- of \`p_postings\` (store-pg/src/PostingRecord.ts) posted by issuing_post_transfer in order, one
-- answer row per posting (its position in \`ord\`); a refused posting writes nothing and the next
-- goes on.
CREATE OR REPLACE FUNCTION issuing_post_transfers(
    p_postings jsonb,
    p_channel text
)
 RETURNS TABLE(ord integer, posted boolean, available bigint, refusal text)
 LANGUAGE plpgsql
AS $function$
    DECLARE p jsonb; r record; i integer := 0;
    BEGIN
      FOR p IN SELECT e.value FROM jsonb_array_elements(p_postings) WITH ORDINALITY AS e(value, n) ORDER BY e.n LOOP
        i := i + 1;
        SELECT * INTO r FROM issuing_post_transfer(p, p_channel);
        ord := i; posted := r.posted; available := r.available; refusal := r.refusal;
        RETURN NEXT;
      END LOOP;
    END $function$;
`
  },
  {
    name: "issuing_posting_slot",
    text: `-- The balance-row slot a posting adds into for an account of \`p_kind\`: a wallet's one row (slot 0),
-- a settlement account's row of this backend's slot (docs/ledger.md#settlement-slots), so that
-- concurrent postings through one settlement account lock different rows. The one place the slot
-- rule is written (issuing_lock_posting_rows, issuing_post_transfer); a SQL function of one
-- expression, inlined into each caller's statement.
CREATE OR REPLACE FUNCTION issuing_posting_slot(
    p_kind text
)
 RETURNS smallint
 LANGUAGE sql
 STABLE
AS $function$
  SELECT CASE WHEN p_kind = 'settlement' THEN (pg_backend_pid() % 16)::smallint ELSE 0::smallint END
$function$;
`
  },
  {
    name: "issuing_refuse_account_removal",
    text: `-- The other half of issuing_check_accounts (migration 0990): a financial account that an entry or a
-- transfer names is never deleted nor given another id, as the foreign keys it replaces refused. It
-- first takes both tables in SHARE mode, so it waits for every transaction writing to them and none
-- can name the account until it ends: the rows it then reads are every row that will ever have
-- named it. Deleting an account is no operation of the platform; only a host's own SQL does it.
CREATE OR REPLACE FUNCTION issuing_refuse_account_removal()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      IF TG_OP = 'UPDATE' AND NEW.id = OLD.id THEN
        RETURN NEW;
      END IF;
      LOCK TABLE issuing_book_entries, issuing_transfers IN SHARE MODE;
      IF EXISTS (SELECT 1 FROM issuing_book_entries e WHERE e.financial_account_id = OLD.id)
         OR EXISTS (SELECT 1 FROM issuing_transfers t WHERE t.from_financial_account_id = OLD.id OR t.to_financial_account_id = OLD.id) THEN
        RAISE EXCEPTION 'financial account "%" is named by entries or transfers', OLD.id USING ERRCODE = 'foreign_key_violation';
      END IF;
      RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
    END $function$;
`
  },
  {
    name: "issuing_refuse_change",
    text: `-- Book transfers and their entries are immutable (docs/ledger.md): a correction is a new posting.
-- The BEFORE UPDATE OR DELETE trigger of both tables.
CREATE OR REPLACE FUNCTION issuing_refuse_change()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN RAISE EXCEPTION 'book transfers and entries are immutable'; END $function$;
`
  },
  {
    name: "issuing_settlement_total",
    text: `-- The trigger function of issuing_settlement_totals (migration 0560, docs/network.md#reconciliation):
-- a transfer of rail \`card\` adds its count and amount to its program's UTC day, currency and kind
-- — a return when it moves settlement → wallet, else a force post when its transaction authorized
-- nothing, else a clearing — on the backend's shard of 16, so concurrent postings of one program
-- rarely wait on one row; a report sums the shards.
CREATE OR REPLACE FUNCTION issuing_settlement_total()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      INSERT INTO issuing_settlement_totals AS s (program_id, day, currency, kind, shard, count, amount_minor)
        SELECT NEW.program_id, (NEW.created_at AT TIME ZONE 'UTC')::date, NEW.currency,
          CASE WHEN NEW.from_financial_account_id = t.financial_account_id
            THEN CASE WHEN t.authorized_minor = 0 THEN 'force_post' ELSE 'clearing' END
            ELSE 'return' END,
          pg_backend_pid() % 16, 1, NEW.amount_minor
        FROM issuing_transactions t WHERE t.id = NEW.transaction_id
        ON CONFLICT (program_id, day, currency, kind, shard)
          DO UPDATE SET count = s.count + 1, amount_minor = s.amount_minor + EXCLUDED.amount_minor;
      RETURN NULL;
    END $function$;
`
  },
  {
    name: "issuing_tag_events",
    text: `-- Writes the tags of the wallets each inserted event concerns (docs/webhooks.md#customers-and-tags),
-- from the event's own data at the time it is written: a wallet's own \`tag\`; \`wallet_id\` (accounts,
-- balances, cards); the accounts of a transfer; the card of a card transaction (or of the
-- transaction a later object names); the transfers of a transaction that has no card; for a
-- cardholder's own events, the wallets of that cardholder (docs/cardholders.md#events). A statement
-- trigger over the statement's new rows, AFTER it, so it sees every row that statement wrote (a
-- posting's transfer and its transaction's event are sibling CTEs): one call per inserting
-- statement, not one per event (docs/decisions.md#the-tag-trigger-once-a-statement). A statement
-- whose programs have no tagged wallet, and no wallet or test event among its rows, pays one probe
-- of the wallets' partial tag index per program, and its events' data is not parsed.
CREATE OR REPLACE FUNCTION issuing_tag_events()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      IF NOT EXISTS (SELECT 1 FROM new_rows r WHERE r.type = 'webhook.test' OR r.type LIKE 'wallet.%')
         AND NOT EXISTS (SELECT 1 FROM issuing_wallets w
                         WHERE w.program_id IN (SELECT r.program_id FROM new_rows r) AND w.tag IS NOT NULL) THEN
        RETURN NULL;
      END IF;
      INSERT INTO issuing_event_tags (event_id, tag, program_id, created_at)
        WITH e AS MATERIALIZED (
          SELECT r.id, r.program_id, r.type, r.created_at, r.data::jsonb AS d,
                 r.type = 'webhook.test' OR r.type LIKE 'wallet.%' AS own
          FROM new_rows r
        )
        SELECT e.id, e.d->>'tag', e.program_id, e.created_at FROM e WHERE e.own AND e.d->>'tag' IS NOT NULL
        UNION ALL
        SELECT e.id, t.tag, e.program_id, e.created_at
        FROM e CROSS JOIN LATERAL (
          SELECT DISTINCT w.tag FROM issuing_wallets w
          WHERE w.program_id = e.program_id AND w.tag IS NOT NULL AND w.id IN (
            SELECT e.d->>'wallet_id'
            UNION ALL
            SELECT a.wallet_id FROM issuing_financial_accounts a
              WHERE a.id IN (e.d->>'from_financial_account_id', e.d->>'to_financial_account_id')
            UNION ALL
            SELECT c.wallet_id FROM issuing_cards c
              WHERE c.id = e.d->>'card_id'
                 OR c.id = (SELECT t.card_id FROM issuing_transactions t
                            WHERE t.id = e.d->>'transaction_id' AND t.program_id = e.program_id)
            UNION ALL
            SELECT a.wallet_id FROM issuing_transfers x
              JOIN issuing_financial_accounts a ON a.id IN (x.from_financial_account_id, x.to_financial_account_id)
              WHERE e.type = 'transaction.updated' AND e.d->>'card_id' IS NULL AND x.transaction_id = e.d->>'id'
            UNION ALL
            SELECT h.id FROM issuing_wallets h
              WHERE e.type LIKE 'cardholder.%' AND h.program_id = e.program_id AND h.cardholder_id = e.d->>'id')
        ) t
        WHERE NOT e.own;
      RETURN NULL;
    END $function$;
`
  },
  {
    name: "issuing_webhook_fan_out",
    text: `-- The fan-out of one event: issuing_webhook_fan_out_events with one element, so the fan-out of a
-- lone event, of a posting and of a batch cannot drift apart.
CREATE OR REPLACE FUNCTION issuing_webhook_fan_out(
    p_event_id text,
    p_program_id text,
    p_event_type text,
    p_created_at timestamp with time zone,
    p_channel text
)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
    BEGIN
      RETURN issuing_webhook_fan_out_events(ARRAY[p_event_id], ARRAY[p_program_id], ARRAY[p_event_type], ARRAY[p_created_at], p_channel);
    END $function$;
`
  },
  {
    name: "issuing_webhook_fan_out_events",
    text: `-- THE webhook fan-out (docs/webhooks.md): one queued delivery per enabled subscription to each
-- event's type, for a tagged subscription only the events carrying its tag. With a NULL channel it
-- only marks the transaction (issuing.deliveries_queued), which the posting statements return, and
-- the process wakes the workers after the commit (docs/webhooks.md#wake-ups-on-postgresql); a NOTIFY
-- in the transaction held a cluster-wide lock through its commit's WAL flush.
CREATE OR REPLACE FUNCTION issuing_webhook_fan_out_events(
    p_event_ids text[],
    p_program_ids text[],
    p_event_types text[],
    p_created_at timestamp with time zone[],
    p_channel text
)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
    DECLARE n integer;
    BEGIN
      INSERT INTO issuing_webhook_deliveries
        (id, program_id, subscription_id, event_id, attempt_count, next_attempt_at, claim_token, created_at)
      SELECT e.id || ':' || et.subscription_id, et.program_id, et.subscription_id, e.id, 0, e.created_at, NULL, e.created_at
      FROM unnest(p_event_ids, p_program_ids, p_event_types, p_created_at) AS e(id, program_id, type, created_at)
      JOIN issuing_webhook_event_types et ON et.program_id = e.program_id AND et.event_type = e.type
      JOIN issuing_webhook_subscriptions s ON s.id = et.subscription_id
      WHERE s.disabled = false
        AND (s.tag IS NULL OR EXISTS (SELECT 1 FROM issuing_event_tags t WHERE t.event_id = e.id AND t.tag = s.tag));
      GET DIAGNOSTICS n = ROW_COUNT;
      IF n > 0 THEN
        IF p_channel IS NULL THEN PERFORM set_config('issuing.deliveries_queued', 'yes', true);
        ELSE PERFORM pg_notify(p_channel, 'due');
        END IF;
      END IF;
      RETURN n;
    END $function$;
`
  },
  {
    name: "issuing_write_postings",
    text: `-- The rows of postings decided in the process, written set-based (docs/ledger.md#batches): any of
-- transactions, transfers, book transfers, entries, balance deltas (summed per account and book,
-- into slot 0) and events, a table without rows not written at all. Counted in ONE upsert while the
-- counting triggers skip (the book transfers' only when every entry belongs to a book transfer of
-- the call). A balance.updated row may say what the postings written after its own add to its
-- account (\`later_*\`, coalesced postings): its data is then the account as ITS posting left it.
-- Returns the number of deliveries queued. A balance.updated's account and balance rows are read by
-- key from its own row (lateral lookups, as issuing_post_transfer's), never by a pass over the accounts.
CREATE OR REPLACE FUNCTION issuing_write_postings(
    p_rows jsonb,
    p_channel text
)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
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
      PERFORM set_config('issuing.posting_counted',
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
            SELECT r.id, r.program_id, 'balance.updated', r.created_at,
                   issuing_account_json(fa.a, b.debits_minor, b.credits_minor, b.pending_minor, b.updated_at)
            FROM jsonb_to_recordset(p_rows->'balance_events') AS r(id text, program_id text, account text, created_at timestamptz,
              later_debits bigint, later_credits bigint, later_pending bigint)
            CROSS JOIN LATERAL (SELECT a FROM issuing_financial_accounts a WHERE a.id = r.account OFFSET 0) fa
            CROSS JOIN LATERAL (SELECT sum(x.debits_minor) - coalesce(r.later_debits, 0) AS debits_minor,
                sum(x.credits_minor) - coalesce(r.later_credits, 0) AS credits_minor,
                sum(x.pending_minor) - coalesce(r.later_pending, 0) AS pending_minor,
                CASE WHEN r.later_debits IS NULL THEN max(x.updated_at) ELSE r.created_at END AS updated_at
              FROM issuing_balances x WHERE x.financial_account_id = r.account AND x.book = 'principal') b
            RETURNING id, program_id, type, created_at
        )
        SELECT array_agg(w.id), array_agg(w.program_id), array_agg(w.type), array_agg(w.created_at)
          INTO v_ids, v_programs, v_types, v_created
          FROM written w;
        IF v_ids IS NOT NULL THEN v_event_shard := issuing_count_shard('events'); END IF;
      END IF;
      -- Every count of the call, one row per (list, program, key), in the order the triggers took
      -- them (list by list as the statements ran, then program and key). The rows are summed per
      -- key and UTC hour before each sum is put under its periods (a batch's rows share a few hours
      -- at most): the periods, their text and the final grouping are then per key, not per row
      -- (docs/decisions.md "A PostgreSQL batch's time is its rows, not its JSON").
      INSERT INTO issuing_list_counts (list, program_id, key, shard, n)
        SELECT pl.list, g.program_id, g.key, CASE WHEN g.list = 'events' THEN v_event_shard ELSE pg_backend_pid() % 16 END, sum(g.n)
        FROM (SELECT min(c.rank) AS rank, c.list, c.program_id, c.key,
                     date_trunc('hour', c.at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS at, count(*) AS n
        FROM (
          SELECT 1 AS rank, 'transactions' AS list, r.program_id, '=' || r.status || '|' || cd.v AS key, r.created_at AS at
            FROM jsonb_to_recordset(CASE WHEN v_transactions THEN p_rows->'transactions' END)
              AS r(program_id text, status text, card_id text, created_at timestamptz)
            CROSS JOIN LATERAL (SELECT '' UNION ALL SELECT '=' || r.card_id WHERE r.card_id IS NOT NULL) cd(v)
          UNION ALL
          SELECT 2, 'transfers', r.program_id, '=' || r.status || '|=' || r.payment_rail || '|' || ac.v, r.created_at
            FROM jsonb_to_recordset(CASE WHEN v_transfers THEN p_rows->'transfers' END) AS r(program_id text, status text,
              payment_rail text, from_financial_account_id text, to_financial_account_id text, created_at timestamptz)
            CROSS JOIN LATERAL (SELECT '' UNION SELECT '=' || x FROM unnest(ARRAY[r.from_financial_account_id, r.to_financial_account_id]) x
                                WHERE x IS NOT NULL) ac(v)
          UNION ALL
          SELECT 4, 'book_transfers', b.program_id,
                 '=' || e.financial_account_id || '|=' || string_agg(DISTINCT e.book COLLATE "C", '+' ORDER BY e.book COLLATE "C"), NULL::timestamptz
            FROM jsonb_to_recordset(CASE WHEN v_entries AND v_own_entries THEN p_rows->'entries' END)
              AS e(book_transfer_id text, financial_account_id text, book text)
            JOIN jsonb_to_recordset(p_rows->'book_transfers') AS b(id text, program_id text) ON b.id = e.book_transfer_id
            GROUP BY b.program_id, e.book_transfer_id, e.financial_account_id
          UNION ALL
          SELECT 5, 'events', v.program_id, '=' || v.type, v.created_at
            FROM unnest(v_programs, v_types, v_created) AS v(program_id, type, created_at)
        ) c
        GROUP BY c.list, c.program_id, c.key, date_trunc('hour', c.at AT TIME ZONE 'UTC')) g
        CROSS JOIN LATERAL issuing_count_periods(g.list, g.at) pl(list)
        GROUP BY g.list, pl.list, g.program_id, g.key
        ORDER BY min(g.rank), pl.list, g.program_id, g.key
        ON CONFLICT (list, program_id, key, shard) DO UPDATE SET n = issuing_list_counts.n + excluded.n;
      PERFORM set_config('issuing.posting_counted', '', true);
      IF v_ids IS NOT NULL THEN
        n := issuing_webhook_fan_out_events(v_ids, v_programs, v_types, v_created, p_channel);
      END IF;
      RETURN n;
    END $function$;
`
  }
]
