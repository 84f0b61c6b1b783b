// The lean baseline of `npm run bench -- transfers`: the rows of one book transfer written into the
// leanest schema that still holds them — 7 tables with text ids, primary keys only (no foreign
// keys, no other indexes, no checks) — as a hand-written ledger at its limit would:
//   - PostgreSQL: ONE call of the plpgsql function `lean_post_transfer` per transfer, which locks
//     the two accounts' balance rows (both books) in id order, updates the 4 balances and inserts
//     the transaction, the transfer, the book transfer, its 4 entries and 3 events;
//   - SQLite: the same rows in one BEGIN IMMEDIATE transaction of prepared statements.
// No funds check, no idempotency, no webhook fan-out, no stored response: what any service
// writing these rows durably pays at least. Shared by bench/transfers.js and the bare node:http
// server (bareServer.js, started with `lean: true`).
import Database from "better-sqlite3"
import pg from "pg"
import { benchPool } from "./postgres.js"
import { v7 as uuidv7 } from "uuid"

const TABLES = [
  "CREATE TABLE lean_accounts (id text PRIMARY KEY, program_id text NOT NULL, currency text NOT NULL, created_at text NOT NULL)",
  "CREATE TABLE lean_balances (account_id text NOT NULL, book text NOT NULL, debits bigint NOT NULL, credits bigint NOT NULL, PRIMARY KEY (account_id, book))",
  "CREATE TABLE lean_transactions (id text PRIMARY KEY, program_id text NOT NULL, status text NOT NULL, amount bigint NOT NULL, currency text NOT NULL, created_at text NOT NULL)",
  `CREATE TABLE lean_transfers (id text PRIMARY KEY, program_id text NOT NULL, transaction_id text NOT NULL, payment_rail text NOT NULL,
     amount bigint NOT NULL, currency text NOT NULL, from_account_id text NOT NULL, to_account_id text NOT NULL, status text NOT NULL, created_at text NOT NULL)`,
  `CREATE TABLE lean_book_transfers (id text PRIMARY KEY, program_id text NOT NULL, transfer_id text NOT NULL, transaction_id text NOT NULL,
     amount bigint NOT NULL, currency text NOT NULL, posted_at text NOT NULL)`,
  `CREATE TABLE lean_entries (book_transfer_id text NOT NULL, position integer NOT NULL, account_id text NOT NULL, book text NOT NULL,
     entry_type text NOT NULL, amount bigint NOT NULL, currency text NOT NULL, PRIMARY KEY (book_transfer_id, position))`,
  "CREATE TABLE lean_events (id text PRIMARY KEY, program_id text NOT NULL, type text NOT NULL, created_at text NOT NULL, data text NOT NULL)"
]

// p_ids: transaction, transfer, book transfer, then the 3 events' ids.
const POSTGRES_FUNCTION = `
CREATE FUNCTION lean_post_transfer(p_program text, p_from text, p_to text, p_amount bigint, p_ids text[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  v_now text := to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');
  v_data text := json_build_object('id', p_ids[2], 'object', 'transfer', 'amount', p_amount)::text;
BEGIN
  PERFORM 1 FROM lean_balances WHERE account_id IN (p_from, p_to) ORDER BY account_id, book FOR UPDATE;
  UPDATE lean_balances SET debits = debits + p_amount
    WHERE (account_id = p_from AND book = 'principal') OR (account_id = p_to AND book = 'cash');
  UPDATE lean_balances SET credits = credits + p_amount
    WHERE (account_id = p_from AND book = 'cash') OR (account_id = p_to AND book = 'principal');
  INSERT INTO lean_transactions VALUES (p_ids[1], p_program, 'SETTLED', p_amount, 'USD', v_now);
  INSERT INTO lean_transfers VALUES (p_ids[2], p_program, p_ids[1], 'book', p_amount, 'USD', p_from, p_to, 'SETTLED', v_now);
  INSERT INTO lean_book_transfers VALUES (p_ids[3], p_program, p_ids[2], p_ids[1], p_amount, 'USD', v_now);
  INSERT INTO lean_entries VALUES
    (p_ids[3], 0, p_from, 'principal', 'DEBIT', p_amount, 'USD'), (p_ids[3], 1, p_from, 'cash', 'CREDIT', p_amount, 'USD'),
    (p_ids[3], 2, p_to, 'cash', 'DEBIT', p_amount, 'USD'), (p_ids[3], 3, p_to, 'principal', 'CREDIT', p_amount, 'USD');
  INSERT INTO lean_events VALUES
    (p_ids[4], p_program, 'transfer.created', v_now, v_data), (p_ids[5], p_program, 'transaction.updated', v_now, v_data),
    (p_ids[6], p_program, 'transfer.settled', v_now, v_data);
END $$`

const ids = () => Array.from({ length: 6 }, () => uuidv7())

/** Creates the lean schema and `count` accounts (both books' balance rows each); resolves with their ids. */
export const prepareLean = async (target, programId, count) => {
  const accounts = Array.from({ length: count }, () => uuidv7())
  const now = new Date().toISOString()
  if (target.kind === "sqlite") {
    const db = new Database(target.filename)
    db.pragma("journal_mode = WAL")
    for (const table of TABLES) db.exec(table)
    const account = db.prepare("INSERT INTO lean_accounts VALUES (?, ?, 'USD', ?)")
    const balance = db.prepare("INSERT INTO lean_balances VALUES (?, ?, 0, 0)")
    db.transaction(() => {
      for (const id of accounts) {
        account.run(id, programId, now)
        balance.run(id, "principal")
        balance.run(id, "cash")
      }
    })()
    db.close()
    return accounts
  }
  const client = new pg.Client({ connectionString: target.url })
  await client.connect()
  try {
    for (const table of TABLES) await client.query(table)
    await client.query(POSTGRES_FUNCTION)
    for (const id of accounts) {
      await client.query("INSERT INTO lean_accounts VALUES ($1, $2, 'USD', $3)", [id, programId, now])
      await client.query("INSERT INTO lean_balances VALUES ($1, 'principal', 0, 0), ($1, 'cash', 0, 0)", [id])
    }
  } finally {
    await client.end()
  }
  return accounts
}

/** The lean schema's SQLite file opened as the lean writers use it: WAL, every commit fsynced. */
export const leanSqlite = (filename) => {
  const db = new Database(filename)
  db.pragma("journal_mode = WAL")
  db.pragma("synchronous = FULL")
  return db
}

/**
 * The lean schema's statements of one book transfer on SQLite, prepared on `db`: the returned
 * `(programId, from, to, amount, ids, now)` writes its rows (`ids`: the transaction's, transfer's,
 * book transfer's and 3 events' ids), to be run inside the caller's transaction.
 */
export const leanSqlitePosting = (db) => {
  const debit = db.prepare("UPDATE lean_balances SET debits = debits + ? WHERE account_id = ? AND book = ?")
  const credit = db.prepare("UPDATE lean_balances SET credits = credits + ? WHERE account_id = ? AND book = ?")
  const transaction = db.prepare("INSERT INTO lean_transactions VALUES (?, ?, 'SETTLED', ?, 'USD', ?)")
  const transfer = db.prepare("INSERT INTO lean_transfers VALUES (?, ?, ?, 'book', ?, 'USD', ?, ?, 'SETTLED', ?)")
  const bookTransfer = db.prepare("INSERT INTO lean_book_transfers VALUES (?, ?, ?, ?, ?, 'USD', ?)")
  const entries = db.prepare(
    "INSERT INTO lean_entries VALUES (?, 0, ?, 'principal', 'DEBIT', ?, 'USD'), (?, 1, ?, 'cash', 'CREDIT', ?, 'USD'), (?, 2, ?, 'cash', 'DEBIT', ?, 'USD'), (?, 3, ?, 'principal', 'CREDIT', ?, 'USD')"
  )
  const events = db.prepare(
    "INSERT INTO lean_events VALUES (?, ?, 'transfer.created', ?, ?), (?, ?, 'transaction.updated', ?, ?), (?, ?, 'transfer.settled', ?, ?)"
  )
  return (programId, from, to, amount, [tx, tr, bt, e1, e2, e3], now) => {
    const data = JSON.stringify({ id: tr, object: "transfer", amount })
    debit.run(amount, from, "principal")
    credit.run(amount, from, "cash")
    debit.run(amount, to, "cash")
    credit.run(amount, to, "principal")
    transaction.run(tx, programId, amount, now)
    transfer.run(tr, programId, tx, amount, from, to, now)
    bookTransfer.run(bt, programId, tr, tx, amount, now)
    entries.run(bt, from, amount, bt, from, amount, bt, to, amount, bt, to, amount)
    events.run(e1, programId, now, data, e2, programId, now, data, e3, programId, now, data)
  }
}

/**
 * A writer over the lean schema: `{ write(programId, from, to, amount), close() }`; `write`
 * resolves when the transfer is durable. PostgreSQL: a pool of `connections`; SQLite: one
 * connection (WAL, synchronous = FULL, as the platform runs it).
 */
/** One lean posting on PostgreSQL through `pool` (any pg.Pool or pg.Client of a prepared database). */
export const leanPostgresWrite = (pool, programId, from, to, amount) =>
  pool.query("SELECT lean_post_transfer($1, $2, $3, $4, $5)", [programId, from, to, amount, ids()])

export const leanWriter = (target, connections) => {
  if (target.kind === "sqlite") {
    const db = leanSqlite(target.filename)
    const post = leanSqlitePosting(db)
    const one = db.transaction((programId, from, to, amount) => post(programId, from, to, amount, ids(), new Date().toISOString()))
    return {
      write: async (programId, from, to, amount) => one.immediate(programId, from, to, amount),
      close: async () => db.close()
    }
  }
  const pool = benchPool(target.url, connections)
  return {
    write: (programId, from, to, amount) =>
      pool.query("SELECT lean_post_transfer($1, $2, $3, $4, $5)", [programId, from, to, amount, ids()]),
    close: () => pool.end()
  }
}
