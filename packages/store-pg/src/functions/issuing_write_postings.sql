-- The rows of postings decided in the process, written set-based (docs/ledger.md#batches): any of
-- transactions, transfers, book transfers, entries, balance deltas (summed per account and book,
-- into slot 0) and events, a table without rows not written at all. Counted in ONE upsert while the
-- counting triggers skip (the book transfers' only when every entry belongs to a book transfer of
-- the call). A balance.updated row may say what the postings written after its own add to its
-- account (`later_*`, coalesced postings): its data is then the account as ITS posting left it.
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
