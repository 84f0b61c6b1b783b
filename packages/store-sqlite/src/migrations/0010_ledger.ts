import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The ledger: financial accounts, wallets, balances per (account, book), transactions, transfers,
 * and the append-only book transfers and entries (triggers refuse UPDATE and DELETE on them).
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE issuing_financial_accounts (
    id TEXT PRIMARY KEY,
    program_id TEXT NOT NULL REFERENCES issuing_programs (id),
    wallet_id TEXT,
    kind TEXT NOT NULL CHECK (kind IN ('wallet', 'settlement')),
    currency TEXT NOT NULL,
    created_at TEXT NOT NULL
  )`
  yield* sql`CREATE INDEX issuing_financial_accounts_by_program ON issuing_financial_accounts (program_id, created_at, id)`
  yield* sql`CREATE UNIQUE INDEX issuing_financial_accounts_settlement
    ON issuing_financial_accounts (program_id, currency) WHERE kind = 'settlement'`
  yield* sql`CREATE TABLE issuing_balances (
    financial_account_id TEXT NOT NULL REFERENCES issuing_financial_accounts (id),
    book TEXT NOT NULL,
    currency TEXT NOT NULL,
    debits_minor INTEGER NOT NULL CHECK (debits_minor >= 0),
    credits_minor INTEGER NOT NULL CHECK (credits_minor >= 0),
    updated_at TEXT NOT NULL,
    PRIMARY KEY (financial_account_id, book)
  )`
  yield* sql`CREATE TABLE issuing_wallets (
    id TEXT PRIMARY KEY,
    program_id TEXT NOT NULL REFERENCES issuing_programs (id),
    holder_name TEXT NOT NULL,
    holder_email TEXT,
    financial_account_id TEXT NOT NULL UNIQUE REFERENCES issuing_financial_accounts (id),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  )`
  yield* sql`CREATE INDEX issuing_wallets_by_program ON issuing_wallets (program_id, created_at, id)`
  yield* sql`CREATE TABLE issuing_transactions (
    id TEXT PRIMARY KEY,
    program_id TEXT NOT NULL REFERENCES issuing_programs (id),
    status TEXT NOT NULL CHECK (status IN ('PENDING', 'SETTLED', 'APPROVED', 'DECLINED')),
    amount_minor INTEGER NOT NULL CHECK (amount_minor > 0),
    currency TEXT NOT NULL,
    card_id TEXT,
    decline_reason TEXT,
    mcc TEXT,
    merchant_name TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  )`
  yield* sql`CREATE INDEX issuing_transactions_by_program ON issuing_transactions (program_id, created_at, id)`
  yield* sql`CREATE INDEX issuing_transactions_by_card ON issuing_transactions (card_id, created_at, id) WHERE card_id IS NOT NULL`
  yield* sql`CREATE TABLE issuing_transfers (
    id TEXT PRIMARY KEY,
    program_id TEXT NOT NULL REFERENCES issuing_programs (id),
    transaction_id TEXT NOT NULL REFERENCES issuing_transactions (id),
    payment_rail TEXT NOT NULL,
    amount_minor INTEGER NOT NULL CHECK (amount_minor > 0),
    currency TEXT NOT NULL,
    from_financial_account_id TEXT NOT NULL REFERENCES issuing_financial_accounts (id),
    to_financial_account_id TEXT NOT NULL REFERENCES issuing_financial_accounts (id),
    status TEXT NOT NULL CHECK (status IN ('PENDING', 'SETTLED')),
    description TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  )`
  yield* sql`CREATE INDEX issuing_transfers_by_program ON issuing_transfers (program_id, created_at, id)`
  yield* sql`CREATE INDEX issuing_transfers_by_transaction ON issuing_transfers (transaction_id, status)`
  yield* sql`CREATE TABLE issuing_book_transfers (
    id TEXT PRIMARY KEY,
    program_id TEXT NOT NULL REFERENCES issuing_programs (id),
    transfer_id TEXT NOT NULL UNIQUE REFERENCES issuing_transfers (id),
    transaction_id TEXT NOT NULL REFERENCES issuing_transactions (id),
    amount_minor INTEGER NOT NULL CHECK (amount_minor > 0),
    currency TEXT NOT NULL,
    posted_at TEXT NOT NULL
  )`
  yield* sql`CREATE INDEX issuing_book_transfers_by_transaction ON issuing_book_transfers (transaction_id, posted_at, id)`
  yield* sql`CREATE INDEX issuing_book_transfers_by_program ON issuing_book_transfers (program_id, posted_at, id)`
  yield* sql`CREATE TABLE issuing_book_entries (
    book_transfer_id TEXT NOT NULL REFERENCES issuing_book_transfers (id),
    position INTEGER NOT NULL,
    financial_account_id TEXT NOT NULL REFERENCES issuing_financial_accounts (id),
    book TEXT NOT NULL,
    entry_type TEXT NOT NULL CHECK (entry_type IN ('DEBIT', 'CREDIT')),
    amount_minor INTEGER NOT NULL CHECK (amount_minor > 0),
    currency TEXT NOT NULL,
    PRIMARY KEY (book_transfer_id, position)
  )`
  yield* sql`CREATE INDEX issuing_book_entries_by_account ON issuing_book_entries (financial_account_id, book, book_transfer_id)`
  for (const table of ["issuing_book_transfers", "issuing_book_entries"]) {
    for (const operation of ["UPDATE", "DELETE"]) {
      yield* sql.unsafe(`CREATE TRIGGER ${table}_no_${operation.toLowerCase()} BEFORE ${operation} ON ${table}
        BEGIN SELECT RAISE(ABORT, 'book transfers and entries are immutable'); END`)
    }
  }
})
