import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * `CREATE OR REPLACE FUNCTION issuing_write_postings(...)`: 0310's, where a `balance.updated` row
 * may say what the postings written after its own add to its account's principal book
 * (`later_debits`, `later_credits`, `later_pending`): its data is then the account as ITS posting
 * left it — the balances as the whole write leaves them, less those later amounts — at its
 * posting's time. Coalesced postings (docs/ledger.md#coalesced-postings-on-postgresql) write one
 * `balance.updated` per posting and wallet account this way, as each posting alone would have; a
 * batch's rows carry no such amounts and keep one event per account with the account as the batch
 * leaves it (docs/ledger.md#batches).
 *
 * Numbered 0430, past every id already applied: the Migrator runs only ids above the latest one.
 * PostgreSQL only: SQLite does not coalesce postings (its posting is a synchronous call under group commit).
 */
const WRITE_POSTINGS_0430 = `CREATE OR REPLACE FUNCTION issuing_write_postings(p_rows jsonb, p_channel text)
    RETURNS integer LANGUAGE plpgsql AS $$
    DECLARE n integer;
    BEGIN
      INSERT INTO issuing_transactions
        (id, program_id, status, amount_minor, currency, card_id, decline_reason, mcc, merchant_name, created_at, updated_at)
        SELECT r.id, r.program_id, r.status, r.amount_minor, r.currency, r.card_id, NULL, r.mcc, r.merchant_name, r.created_at, r.updated_at
        FROM jsonb_to_recordset(p_rows->'transactions') AS r(id text, program_id text, status text, amount_minor bigint, currency text,
          card_id text, mcc text, merchant_name text, created_at timestamptz, updated_at timestamptz);
      INSERT INTO issuing_transfers
        (id, program_id, transaction_id, payment_rail, amount_minor, currency, from_financial_account_id,
         to_financial_account_id, status, description, metadata, created_at, updated_at)
        SELECT r.id, r.program_id, r.transaction_id, r.payment_rail, r.amount_minor, r.currency, r.from_financial_account_id,
          r.to_financial_account_id, r.status, r.description, coalesce(r.metadata, '{}'), r.created_at, r.created_at
        FROM jsonb_to_recordset(p_rows->'transfers') AS r(id text, program_id text, transaction_id text, payment_rail text,
          amount_minor bigint, currency text, from_financial_account_id text, to_financial_account_id text, status text,
          description text, metadata text, created_at timestamptz);
      INSERT INTO issuing_book_transfers (id, program_id, transfer_id, transaction_id, amount_minor, currency, posted_at)
        SELECT r.id, r.program_id, r.transfer_id, r.transaction_id, r.amount_minor, r.currency, r.posted_at
        FROM jsonb_to_recordset(p_rows->'book_transfers') AS r(id text, program_id text, transfer_id text, transaction_id text,
          amount_minor bigint, currency text, posted_at timestamptz);
      INSERT INTO issuing_book_entries (book_transfer_id, position, financial_account_id, book, entry_type, amount_minor, currency, posted_at)
        SELECT r.book_transfer_id, r.position, r.financial_account_id, r.book, r.entry_type, r.amount_minor, r.currency, r.posted_at
        FROM jsonb_to_recordset(p_rows->'entries') AS r(book_transfer_id text, position integer, financial_account_id text, book text,
          entry_type text, amount_minor bigint, currency text, posted_at timestamptz);
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
      INSERT INTO issuing_events (id, program_id, type, created_at, data)
        SELECT r.id, r.program_id, r.type, r.created_at, r.data
        FROM jsonb_to_recordset(p_rows->'events') AS r(id text, program_id text, type text, created_at timestamptz, data text);
      INSERT INTO issuing_events (id, program_id, type, created_at, data)
        SELECT r.id, r.program_id, 'balance.updated', r.created_at, json_build_object(
    'id', a.id, 'object', 'financial_account', 'program_id', a.program_id, 'wallet_id', a.wallet_id, 'kind', a.kind,
    'currency', a.currency,
    'balance', json_build_object('amount', b.credits_minor - b.debits_minor, 'currency', a.currency),
    'pending_balance', json_build_object('amount', b.pending_minor, 'currency', a.currency),
    'available_balance', json_build_object('amount', b.credits_minor - b.debits_minor - b.pending_minor, 'currency', a.currency),
    'created_at', to_char(a.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'updated_at', to_char(b.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text
        FROM jsonb_to_recordset(p_rows->'balance_events') AS r(id text, program_id text, account text, created_at timestamptz,
          later_debits bigint, later_credits bigint, later_pending bigint)
        JOIN issuing_financial_accounts a ON a.id = r.account
        CROSS JOIN LATERAL (SELECT sum(x.debits_minor) - coalesce(r.later_debits, 0) AS debits_minor,
      sum(x.credits_minor) - coalesce(r.later_credits, 0) AS credits_minor,
      sum(x.pending_minor) - coalesce(r.later_pending, 0) AS pending_minor,
      CASE WHEN r.later_debits IS NULL THEN max(x.updated_at) ELSE r.created_at END AS updated_at
    FROM issuing_balances x WHERE x.financial_account_id = a.id AND x.book = 'principal') b
        ORDER BY r.id;
      SELECT issuing_webhook_fan_out_events(array_agg(x.id), array_agg(x.program_id), array_agg(x.type), array_agg(x.created_at), p_channel)
        INTO n
        FROM (SELECT r.id, r.program_id, r.type, r.created_at
                FROM jsonb_to_recordset(p_rows->'events') AS r(id text, program_id text, type text, created_at timestamptz)
              UNION ALL
              SELECT r.id, r.program_id, 'balance.updated', r.created_at
                FROM jsonb_to_recordset(p_rows->'balance_events') AS r(id text, program_id text, created_at timestamptz)) x;
      RETURN coalesce(n, 0);
    END $$`

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(WRITE_POSTINGS_0430)
})
