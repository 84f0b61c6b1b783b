import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The ledger: financial accounts, wallets, balances per (account, book), transactions, transfers,
 * and the append-only book transfers and entries (triggers refuse UPDATE and DELETE on them).
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE issuing_financial_accounts (
    id text PRIMARY KEY,
    program_id text NOT NULL REFERENCES issuing_programs (id),
    wallet_id text,
    kind text NOT NULL CHECK (kind IN ('wallet', 'settlement')),
    currency text NOT NULL,
    created_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX issuing_financial_accounts_by_program ON issuing_financial_accounts (program_id, created_at, id)`
  yield* sql`CREATE UNIQUE INDEX issuing_financial_accounts_settlement
    ON issuing_financial_accounts (program_id, currency) WHERE kind = 'settlement'`
  yield* sql`CREATE TABLE issuing_balances (
    financial_account_id text NOT NULL REFERENCES issuing_financial_accounts (id),
    book text NOT NULL,
    currency text NOT NULL,
    debits_minor bigint NOT NULL CHECK (debits_minor >= 0),
    credits_minor bigint NOT NULL CHECK (credits_minor >= 0),
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (financial_account_id, book)
  )`
  yield* sql`CREATE TABLE issuing_wallets (
    id text PRIMARY KEY,
    program_id text NOT NULL REFERENCES issuing_programs (id),
    holder_name text NOT NULL,
    holder_email text,
    financial_account_id text NOT NULL UNIQUE REFERENCES issuing_financial_accounts (id),
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX issuing_wallets_by_program ON issuing_wallets (program_id, created_at, id)`
  yield* sql`CREATE TABLE issuing_transactions (
    id text PRIMARY KEY,
    program_id text NOT NULL REFERENCES issuing_programs (id),
    status text NOT NULL CHECK (status IN ('PENDING', 'SETTLED', 'APPROVED', 'DECLINED')),
    amount_minor bigint NOT NULL CHECK (amount_minor > 0),
    currency text NOT NULL,
    card_id text,
    decline_reason text,
    mcc text,
    merchant_name text,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX issuing_transactions_by_program ON issuing_transactions (program_id, created_at, id)`
  yield* sql`CREATE INDEX issuing_transactions_by_card ON issuing_transactions (card_id, created_at, id) WHERE card_id IS NOT NULL`
  yield* sql`CREATE TABLE issuing_transfers (
    id text PRIMARY KEY,
    program_id text NOT NULL REFERENCES issuing_programs (id),
    transaction_id text NOT NULL REFERENCES issuing_transactions (id),
    payment_rail text NOT NULL,
    amount_minor bigint NOT NULL CHECK (amount_minor > 0),
    currency text NOT NULL,
    from_financial_account_id text NOT NULL REFERENCES issuing_financial_accounts (id),
    to_financial_account_id text NOT NULL REFERENCES issuing_financial_accounts (id),
    status text NOT NULL CHECK (status IN ('PENDING', 'SETTLED')),
    description text,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX issuing_transfers_by_program ON issuing_transfers (program_id, created_at, id)`
  yield* sql`CREATE INDEX issuing_transfers_by_transaction ON issuing_transfers (transaction_id, status)`
  yield* sql`CREATE TABLE issuing_book_transfers (
    id text PRIMARY KEY,
    program_id text NOT NULL REFERENCES issuing_programs (id),
    transfer_id text NOT NULL UNIQUE REFERENCES issuing_transfers (id),
    transaction_id text NOT NULL REFERENCES issuing_transactions (id),
    amount_minor bigint NOT NULL CHECK (amount_minor > 0),
    currency text NOT NULL,
    posted_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX issuing_book_transfers_by_transaction ON issuing_book_transfers (transaction_id, posted_at, id)`
  yield* sql`CREATE INDEX issuing_book_transfers_by_program ON issuing_book_transfers (program_id, posted_at, id)`
  yield* sql`CREATE TABLE issuing_book_entries (
    book_transfer_id text NOT NULL REFERENCES issuing_book_transfers (id),
    position integer NOT NULL,
    financial_account_id text NOT NULL REFERENCES issuing_financial_accounts (id),
    book text NOT NULL,
    entry_type text NOT NULL CHECK (entry_type IN ('DEBIT', 'CREDIT')),
    amount_minor bigint NOT NULL CHECK (amount_minor > 0),
    currency text NOT NULL,
    PRIMARY KEY (book_transfer_id, position)
  )`
  yield* sql`CREATE INDEX issuing_book_entries_by_account ON issuing_book_entries (financial_account_id, book, book_transfer_id)`
  yield* sql`CREATE FUNCTION issuing_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'book transfers and entries are immutable'; END $$`
  for (const table of ["issuing_book_transfers", "issuing_book_entries"]) {
    yield* sql.unsafe(`CREATE TRIGGER ${table}_immutable BEFORE UPDATE OR DELETE ON ${table}
      FOR EACH ROW EXECUTE FUNCTION issuing_refuse_change()`)
  }
})
