import { countPeriods, type PeriodList } from "./ListCounts.js"

/**
 * The list counts a posting's rows add (docs/decisions.md#what-a-transfers-counts-write): the keys
 * the counting triggers write per row, derived once here for the writers that count their own rows
 * while those triggers skip — SQLite's batches and lone transfers (store-sqlite PostingCounts.ts)
 * and PostgreSQL's posting record (store-pg PostingRecord.ts `countsOf`).
 */

/** A row of `issuing_list_counts` to add `n` to. */
export interface CountRow {
  readonly list: string
  readonly program_id: string
  readonly key: string
  readonly shard: number
  n: number
}

/** The rows a posting writes, as much of each as its counts read. */
export interface CountedRows {
  readonly transactions: ReadonlyArray<{
    readonly program_id: string
    readonly status: string
    readonly card_id: string | null
    readonly created_at: string
  }>
  readonly transfers: ReadonlyArray<{
    readonly program_id: string
    readonly status: string
    readonly payment_rail: string
    readonly from_financial_account_id: string
    readonly to_financial_account_id: string
    readonly created_at: string
  }>
  readonly book_transfers: ReadonlyArray<{ readonly id: string; readonly program_id: string }>
  readonly entries: ReadonlyArray<{ readonly book_transfer_id: string; readonly financial_account_id: string; readonly book: string }>
  readonly events: ReadonlyArray<{ readonly program_id: string; readonly type: string; readonly created_at: string }>
}

/**
 * The list counts of `rows`, one row per (list, program, key), summed: the keys the insert
 * triggers of migration 0750 write per row (a transfer under its status and rail, and again per
 * account; a transaction under its status, and per card; an event under its type; a book transfer
 * once per account, under the set of that account's books), and those of a transfer, transaction
 * or event again in its month, day and hour (migration 0841).
 */
export const countRows = (rows: CountedRows): Array<CountRow> => {
  const counts = new Map<string, CountRow>()
  const add = (list: string, program_id: string, key: string) => {
    const id = `${list} ${program_id} ${key}`
    const row = counts.get(id)
    if (row === undefined) counts.set(id, { list, program_id, key, shard: 0, n: 1 })
    else row.n += 1
  }
  // A list counted per period as well (migration 0841): the same key in the row's month, day and hour.
  const count = (list: string, program_id: string, key: string, createdAt?: string) => {
    add(list, program_id, key)
    if (createdAt !== undefined) for (const period of countPeriods(list as PeriodList, createdAt)) add(period, program_id, key)
  }
  for (const t of rows.transactions) {
    count("transactions", t.program_id, `=${t.status}|`, t.created_at)
    if (t.card_id !== null) count("transactions", t.program_id, `=${t.status}|=${t.card_id}`, t.created_at)
  }
  for (const t of rows.transfers) {
    const prefix = `=${t.status}|=${t.payment_rail}|`
    for (const account of new Set(["", `=${t.from_financial_account_id}`, `=${t.to_financial_account_id}`])) {
      count("transfers", t.program_id, prefix + account, t.created_at)
    }
  }
  const books = new Map<string, { program_id: string; account: string; books: Set<string> }>()
  const programOf = new Map(rows.book_transfers.map((b) => [b.id, b.program_id]))
  for (const e of rows.entries) {
    const id = `${e.book_transfer_id} ${e.financial_account_id}`
    const found = books.get(id)
    if (found === undefined)
      books.set(id, { program_id: programOf.get(e.book_transfer_id)!, account: e.financial_account_id, books: new Set([e.book]) })
    else found.books.add(e.book)
  }
  // group_concat(book, '+' ORDER BY book): SQLite's binary order, which JavaScript's sort of these ASCII names is.
  for (const b of books.values()) count("book_transfers", b.program_id, `=${b.account}|=${[...b.books].sort().join("+")}`)
  for (const e of rows.events) count("events", e.program_id, `=${e.type}`, e.created_at)
  return [...counts.values()]
}
