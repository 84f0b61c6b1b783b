import { fanOutText } from "./MultiRowSql.js"
import type { SyncConnection } from "./SyncSql.js"

/**
 * A `balance.updated` event: the account as it stands now (the financial_account of the API,
 * ledger/Records.ts), composed from its rows inside the write. The one definition of that object
 * in this store, for every writer of the event (SqlitePosting.ts, NewTransfers.ts); PostgreSQL's is
 * its `issuing_account_json` function, and test/ledger/balance-events.test.ts decodes both stores'
 * with the TypeScript schema and compares them with GET /v1/financial-accounts/{id}.
 */
const accountJson = (b: { readonly debits: string; readonly credits: string; readonly pending: string; readonly updatedAt: string }) =>
  `json_object(
    'id', a.id, 'object', 'financial_account', 'program_id', a.program_id, 'wallet_id', a.wallet_id, 'kind', a.kind,
    'currency', a.currency,
    'balance', json_object('amount', ${b.credits} - ${b.debits}, 'currency', a.currency),
    'pending_balance', json_object('amount', ${b.pending}, 'currency', a.currency),
    'available_balance', json_object('amount', ${b.credits} - ${b.debits} - ${b.pending}, 'currency', a.currency),
    'created_at', a.created_at, 'updated_at', ${b.updatedAt})`

/** The account as its principal balance row `b` stands. */
const ACCOUNT_JSON = accountJson({
  debits: "b.debits_minor",
  credits: "b.credits_minor",
  pending: "b.pending_minor",
  updatedAt: "b.updated_at"
})

/** One account's `balance.updated` (parameters: the event's id, its time, the account). */
export const INSERT_BALANCE_EVENT = `INSERT INTO issuing_events (id, program_id, type, created_at, data)
  SELECT ?, a.program_id, 'balance.updated', ?, ${ACCOUNT_JSON}
  FROM issuing_financial_accounts a JOIN issuing_balances b ON b.financial_account_id = a.id AND b.book = 'principal'
  WHERE a.id = ?`

/**
 * Many accounts' `balance.updated` in ONE statement (a batch's, docs/ledger.md#batches): its one
 * parameter is a JSON array of `[id, created_at, account]`, written in that order, each looked up
 * by key (json_each is the outer loop: CROSS JOIN keeps SQLite from reordering it).
 */
export const INSERT_BALANCE_EVENTS = `INSERT INTO issuing_events (id, program_id, type, created_at, data)
  SELECT e.value ->> 0, a.program_id, 'balance.updated', e.value ->> 1, ${ACCOUNT_JSON}
  FROM json_each(?) e CROSS JOIN issuing_financial_accounts a CROSS JOIN issuing_balances b
  WHERE a.id = e.value ->> 2 AND b.financial_account_id = a.id AND b.book = 'principal'
  ORDER BY e.key`

/**
 * Each lone posting's own `balance.updated` when lone postings are written together
 * (docs/ledger.md#coalesced-postings-on-sqlite), in ONE statement: the account as THAT posting left
 * it — its principal row as the whole write leaves it, less what the postings written after it add
 * (`later_*`, `postingRows`' "per posting" rows) — at that posting's time, as it would have been
 * written alone. Its one parameter is a JSON array of
 * `[id, created_at, account, later_debits, later_credits, later_pending]` (`eachBalanceEventParam`).
 */
export const INSERT_EACH_BALANCE_EVENT = `INSERT INTO issuing_events (id, program_id, type, created_at, data)
  SELECT e.value ->> 0, a.program_id, 'balance.updated', e.value ->> 1, ${accountJson({
    debits: "(b.debits_minor - (e.value ->> 3))",
    credits: "(b.credits_minor - (e.value ->> 4))",
    pending: "(b.pending_minor - (e.value ->> 5))",
    updatedAt: "(e.value ->> 1)"
  })}
  FROM json_each(?) e CROSS JOIN issuing_financial_accounts a CROSS JOIN issuing_balances b
  WHERE a.id = e.value ->> 2 AND b.financial_account_id = a.id AND b.book = 'principal'
  ORDER BY e.key`

/** INSERT_EACH_BALANCE_EVENT's parameter (later amounts not given: none). */
export const eachBalanceEventParam = (
  events: ReadonlyArray<{
    readonly id: string
    readonly created_at: string
    readonly account: string
    readonly later_debits?: number
    readonly later_credits?: number
    readonly later_pending?: number
  }>
) => JSON.stringify(events.map((e) => [e.id, e.created_at, e.account, e.later_debits ?? 0, e.later_credits ?? 0, e.later_pending ?? 0]))

/** INSERT_BALANCE_EVENTS' parameter. */
export const balanceEventsParam = (events: ReadonlyArray<{ readonly id: string; readonly created_at: string; readonly account: string }>) =>
  JSON.stringify(events.map((e) => [e.id, e.created_at, e.account]))

/**
 * Writes `balance.updated` for each account, as it stands now, and its deliveries: the events
 * written (an account without a principal row gets none) and the deliveries queued.
 */
export const writeBalanceEvents = (
  db: SyncConnection,
  programId: string,
  at: string,
  events: ReadonlyArray<{ readonly id: string; readonly financial_account_id: string }>
): { readonly written: number; readonly queued: number } => {
  if (events.length === 0) return { written: 0, queued: 0 }
  let written = 0
  for (const event of events) written += db.prepare(INSERT_BALANCE_EVENT).run(event.id, at, event.financial_account_id).changes
  const rows = events.map((e) => ({ id: e.id, program_id: programId, type: "balance.updated" as const, created_at: at }))
  const queued = db.prepare(fanOutText(rows.length)).run(...rows.flatMap((e) => [e.id, e.program_id, e.type, e.created_at])).changes
  return { written, queued }
}
