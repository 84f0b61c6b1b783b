-- One transfer's every row in ONE statement (docs/ledger.md#what-a-posting-costs-on-postgresql):
-- the card still ACTIVE when the posting names one, the balance rows it adds into locked (in the
-- statement that also sums them, issuing_posting_slot choosing a settlement account's slot), refused (nothing written) when the source's principal cannot cover
-- the amount (funds checked) or a running total would pass 2^53 - 1; else the transaction (insert
-- or update), transfer, book transfer, entries and events, the balance deltas added, each wallet
-- account's balance.updated as the posting leaves it, the posting's own list counts in one upsert
-- while the counting triggers skip (issuing.posting_counted; the keys of migration 0750, status,
-- rail, type and book counted per value only: 10 rows for a book transfer; those of the transaction,
-- transfer and events again in their UTC month, day and hour, migration 0841: 34 rows; derived by
-- the process from the record's own fields and sent as its `counts`), and the fan-out.
--
-- `p_posting` is the posting record, every field by name, built in one place
-- (store-pg/src/PostingRecord.ts) for a single posting, a batch's (issuing_post_transfers) and a
-- card message's transfer (issuing_post_card_message) alike. A record without one of its fields
-- (a process of an earlier release sending another shape) is refused with SQLSTATE 22023 before
-- anything is written.
--
-- The posting's accounts are read by key, each from the record's own rows (a lateral lookup that
-- `OFFSET 0` keeps a lookup): joined as tables, the planner, which takes a jsonb_to_recordset for
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
