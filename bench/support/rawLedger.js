// The rows of one book transfer written raw, as a hand-rolled ledger would: shared by the raw
// baselines of bench/transfers.js and the bare node:http server (bare-server.js).
import { v7 as uuidv7 } from "uuid"

/** The rows one book transfer writes, as literal-free parameter lists. */
export const rowsOf = (programId, from, to, amount) => {
  const now = new Date().toISOString()
  const transactionId = uuidv7()
  const transferId = uuidv7()
  const bookTransferId = uuidv7()
  const transfer = { id: transferId, amount }
  return { now, transactionId, transferId, bookTransferId, transfer, programId, from, to, amount }
}

export const RAW_SQL = {
  transaction: `INSERT INTO issuing_transactions (id, program_id, status, amount_minor, currency, card_id, decline_reason, mcc, merchant_name, created_at, updated_at)
                VALUES (?, ?, 'SETTLED', ?, 'USD', NULL, NULL, NULL, NULL, ?, ?)`,
  transfer: `INSERT INTO issuing_transfers (id, program_id, transaction_id, payment_rail, amount_minor, currency, from_financial_account_id, to_financial_account_id, status, description, created_at, updated_at)
             VALUES (?, ?, ?, 'book', ?, 'USD', ?, ?, 'SETTLED', NULL, ?, ?)`,
  bookTransfer: `INSERT INTO issuing_book_transfers (id, program_id, transfer_id, transaction_id, amount_minor, currency, posted_at) VALUES (?, ?, ?, ?, ?, 'USD', ?)`,
  entries: `INSERT INTO issuing_book_entries (book_transfer_id, position, financial_account_id, book, entry_type, amount_minor, currency, posted_at)
            VALUES (?, 0, ?, 'principal', 'DEBIT', ?, 'USD', ?), (?, 1, ?, 'cash', 'CREDIT', ?, 'USD', ?),
                   (?, 2, ?, 'cash', 'DEBIT', ?, 'USD', ?), (?, 3, ?, 'principal', 'CREDIT', ?, 'USD', ?)`,
  balances: `INSERT INTO issuing_balances (financial_account_id, book, currency, debits_minor, credits_minor, updated_at)
             VALUES (?, 'principal', 'USD', ?, 0, ?), (?, 'cash', 'USD', 0, ?, ?), (?, 'cash', 'USD', ?, 0, ?), (?, 'principal', 'USD', 0, ?, ?)
             ON CONFLICT (financial_account_id, book) DO UPDATE SET debits_minor = issuing_balances.debits_minor + excluded.debits_minor,
               credits_minor = issuing_balances.credits_minor + excluded.credits_minor, updated_at = excluded.updated_at`,
  // What a hand-rolled ledger validates: both accounts exist in the program, their kind and currency.
  accounts: `SELECT a.id, a.kind, a.currency, b.debits_minor, b.credits_minor FROM issuing_financial_accounts a
             JOIN issuing_balances b ON b.financial_account_id = a.id AND b.book = 'principal'
             WHERE a.program_id = ? AND a.id IN (?, ?)`,
  lock: `SELECT financial_account_id, book, debits_minor, credits_minor FROM issuing_balances WHERE financial_account_id IN (?, ?) ORDER BY financial_account_id, book`,
  event: `INSERT INTO issuing_events (id, program_id, type, created_at, data) VALUES (?, ?, ?, ?, ?)`,
  // The webhook fan-out of each event (the same INSERT … SELECT as the webhook store; no subscriptions here).
  fanOut: `INSERT INTO issuing_webhook_deliveries (id, program_id, subscription_id, event_id, attempt_count, next_attempt_at, claim_token, created_at)
           SELECT ? || ':' || et.subscription_id, et.program_id, et.subscription_id, ?, 0, ?, NULL, ?
           FROM issuing_webhook_event_types et JOIN issuing_webhook_subscriptions s ON s.id = et.subscription_id
           WHERE et.program_id = ? AND et.event_type = ? AND s.disabled = false`
}

export const rawParams = (r) => ({
  transaction: [r.transactionId, r.programId, r.amount, r.now, r.now],
  transfer: [r.transferId, r.programId, r.transactionId, r.amount, r.from, r.to, r.now, r.now],
  bookTransfer: [r.bookTransferId, r.programId, r.transferId, r.transactionId, r.amount, r.now],
  entries: [
    r.bookTransferId,
    r.from,
    r.amount,
    r.now,
    r.bookTransferId,
    r.from,
    r.amount,
    r.now,
    r.bookTransferId,
    r.to,
    r.amount,
    r.now,
    r.bookTransferId,
    r.to,
    r.amount,
    r.now
  ],
  balances: [r.from, r.amount, r.now, r.from, r.amount, r.now, r.to, r.amount, r.now, r.to, r.amount, r.now],
  accounts: [r.programId, r.from, r.to],
  lock: [r.from, r.to].sort(),
  events: ["transfer.created", "transaction.updated", "transfer.settled"].map((type) => [
    uuidv7(),
    r.programId,
    type,
    r.now,
    JSON.stringify(r.transfer)
  ]),
  fanOuts: [] // filled below from the events
})

export const withFanOuts = (p) => ({
  ...p,
  fanOuts: p.events.map(([id, programId, type, now]) => [id, id, now, now, programId, type])
})

const literal = (value) => (typeof value === "number" ? String(value) : value === null ? "NULL" : `'${String(value).replace(/'/g, "''")}'`)
export const inline = (text, params) => {
  let index = 0
  return text.replace(/\?/g, () => literal(params[index++]))
}

// PostgreSQL keys a balance row with its slot (docs/ledger.md#settlement-slots); a wallet's is slot 0, the default.
const POSTGRES_BALANCES = RAW_SQL.balances.replace(
  "ON CONFLICT (financial_account_id, book)",
  "ON CONFLICT (financial_account_id, book, slot)"
)

/** The whole transaction of one transfer as ONE simple query (one round trip on PostgreSQL). */
export const postgresTransferText = (p) =>
  [
    "BEGIN",
    inline(RAW_SQL.accounts, p.accounts),
    `${inline(RAW_SQL.lock, p.lock)} FOR UPDATE`,
    inline(RAW_SQL.transaction, p.transaction),
    inline(RAW_SQL.transfer, p.transfer),
    inline(RAW_SQL.bookTransfer, p.bookTransfer),
    inline(RAW_SQL.entries, p.entries),
    inline(POSTGRES_BALANCES, p.balances),
    ...p.events.map((event) => inline(RAW_SQL.event, event)),
    ...p.fanOuts.map((fanOut) => inline(RAW_SQL.fanOut, fanOut)),
    "COMMIT"
  ].join(";\n")

/** The SQLite transaction of one transfer as prepared statements (run it with `.immediate`). */
export const sqliteTransfer = (db) => {
  const statements = Object.fromEntries(Object.entries(RAW_SQL).map(([name, text]) => [name, db.prepare(text)]))
  return db.transaction((p) => {
    statements.accounts.all(...p.accounts)
    statements.lock.all(...p.lock)
    statements.transaction.run(...p.transaction)
    statements.transfer.run(...p.transfer)
    statements.bookTransfer.run(...p.bookTransfer)
    statements.entries.run(...p.entries)
    statements.balances.run(...p.balances)
    for (const event of p.events) statements.event.run(...event)
    for (const fanOut of p.fanOuts) statements.fanOut.run(...fanOut)
  })
}
