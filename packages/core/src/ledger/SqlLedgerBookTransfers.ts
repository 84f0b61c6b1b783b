import type { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import type { Fragment } from "@effect/sql/Statement"
import { Effect } from "effect"
import type { InvalidRequest } from "../platform/Errors.js"
import type { PageWindow } from "../platform/Paging.js"
import { toInt, toIso } from "../platform/Rows.js"
import { bounded, listTotal, maintained } from "../sql/ListCounts.js"
import { notInThisList, orderByClause, pageRows } from "../sql/OrderBy.js"
import type { LedgerStoreService } from "./LedgerStore.js"
import { BOOK_TRANSFER_ORDER_FIELDS, type BookTransferOrderField } from "./OrderFields.js"
import { type Book, type BookEntry, type BookTransfer, BOOKS, type EntryType } from "./Records.js"
import type { LedgerQueries } from "./SqlLedgerQueries.js"

/**
 * One page of an account's book transfers (docs/ledger.md#an-accounts-book-transfers), newest or
 * oldest first, O(page) whatever the number of its entries, a deep page O(its depth).
 * Every account a book transfer moves has exactly one entry in each book (the posting rule,
 * PostingRules.transferEntries: the source's principal debit and cash credit, the target's cash
 * debit and principal credit), so the account's book transfers, with `book=principal`, with
 * `book=cash` or without `book`, are one set: its principal entries. Those are indexed by
 * (account, posted_at, book transfer), a partial index of the principal book (migration 0360; each
 * entry carries its book transfer's posted_at), so
 * a page is one range of one index, read in order (OFFSET counted off the index alone), and then its
 * book transfers by primary key. A book no posting writes lists nothing. `starting_after` reads its
 * book transfer's order value by primary key — a 400 unless it has an entry of the account (in the
 * book) — and starts the range after it.
 */
const accountPage = (
  sql: SqlClient.SqlClient,
  programId: string,
  window: PageWindow<BookTransferOrderField>,
  list: { readonly accountId: string; readonly book: string | undefined }
): Effect.Effect<ReadonlyArray<any>, SqlError | InvalidRequest> => {
  // Book transfers order by time only (posted_at, created_at its alias): the entries' posted_at.
  const key = sql.literal("posted_at")
  const direction = sql.literal(window.descending ? "DESC" : "ASC")
  const known = list.book === undefined || (BOOKS as ReadonlyArray<string>).includes(list.book)
  // The principal book is written into the statement, not bound: a partial index serves only a
  // query whose condition implies its own.
  const ids = (after: Fragment) =>
    sql`SELECT ${key} AS k, book_transfer_id FROM issuing_book_entries
        WHERE financial_account_id = ${list.accountId} AND book = 'principal'${after}
        ORDER BY ${key} ${direction}, book_transfer_id ${direction} LIMIT ${window.limit} OFFSET ${window.offset}`
  // The page's ids first, then their book transfers by primary key (as one statement PostgreSQL
  // hash-joined the ids with a scan of the book transfers). The program condition is kept out of
  // the index choice (`|| ''`): with it SQLite walked the program's index, which also serves the
  // order, testing every book transfer of the program against the ids (130 ms at 150,000).
  const rows = (after: Fragment) =>
    Effect.flatMap(ids(after), (found) =>
      found.length === 0
        ? Effect.succeed([])
        : sql`SELECT bt.* FROM issuing_book_transfers bt
              WHERE bt.id IN ${sql.in(found.map((row: any) => row.book_transfer_id))} AND (bt.program_id || '') = ${programId}
              ORDER BY ${orderByClause(sql, window, BOOK_TRANSFER_ORDER_FIELDS)}`
    )
  const startingAfter = window.after
  if (startingAfter === undefined || startingAfter === null) return known ? rows(sql.literal("")) : Effect.succeed([])
  // The cursor's entries are read by the book transfer's primary key (at most four), the account
  // and the book written out of the index choice: with them as plain conditions SQLite searched the
  // account's entries for the book transfer, as many as the account has after it (69 ms at
  // 1,000,000 transfers).
  return Effect.flatMap(
    sql`SELECT bt.${key} AS k FROM issuing_book_transfers bt WHERE bt.id = ${startingAfter} AND bt.program_id = ${programId}
        AND EXISTS (SELECT 1 FROM issuing_book_entries e WHERE e.book_transfer_id = ${startingAfter}
                    AND (e.financial_account_id || '') = ${list.accountId}${list.book !== undefined ? sql` AND (e.book || '') = ${list.book}` : sql.literal("")})`,
    (found): Effect.Effect<ReadonlyArray<any>, SqlError | InvalidRequest> =>
      found.length === 0
        ? Effect.fail(notInThisList())
        : rows(sql` AND (${key}, book_transfer_id) ${sql.literal(window.descending ? "<" : ">")} (${found[0]!.k}, ${startingAfter})`)
  )
}

/**
 * The books an account's entries in one book transfer can have, as its count is kept
 * (`=account|=cash+principal`, migration 0750): every non-empty set of BOOKS, its names sorted by
 * code unit and joined with `+`. An account's total sums all of them; with `book`, those holding it.
 */
const BOOK_SETS: ReadonlyArray<string> = [...BOOKS]
  .sort()
  .reduce<ReadonlyArray<ReadonlyArray<string>>>((sets, book) => sets.concat(sets.map((set) => [...set, book])), [[]])
  .filter((set) => set.length > 0)
  .map((set) => set.join("+"))

/** Book transfers with their entries (append-only). */
export const bookTransferStatements = (q: LedgerQueries) => {
  const { sql, where } = q
  return {
    listBookTransfers: (programId, filter, window) => {
      // A transfer's or a transaction's book transfers are a few, found through their own index. The
      // program column is kept out of the index choice there (`|| ''`): its index also serves the
      // order, and a planner that walks it filters the program's every book transfer row by row.
      const scoped = filter.transaction_id !== undefined || filter.transfer_id !== undefined
      const program = sql.literal(scoped ? "(bt.program_id || '')" : "bt.program_id")
      // Whether a book transfer has an entry of the account (in the book). For a transaction's or a
      // transfer's list, the entries of its few book transfers, read once: SQLite ran a correlated
      // EXISTS under the LIMIT/OFFSET subquery of a deep page (pageRows) as a join, each book
      // transfer once per matching entry, so `page=2` skipped too few rows and repeated page 1's.
      const entryFilters = [
        filter.financial_account_id !== undefined && sql`e.financial_account_id = ${filter.financial_account_id}`,
        filter.book !== undefined && sql`e.book = ${filter.book}`
      ].filter((clause) => clause !== false)
      const entryCondition =
        entryFilters.length === 0
          ? false
          : scoped
            ? sql`bt.id IN (SELECT e.book_transfer_id FROM issuing_book_entries e
                 JOIN issuing_book_transfers s ON s.id = e.book_transfer_id
                 WHERE ${sql.and([
                   ...(filter.transaction_id !== undefined ? [sql`s.transaction_id = ${filter.transaction_id}`] : []),
                   ...(filter.transfer_id !== undefined ? [sql`s.transfer_id = ${filter.transfer_id}`] : []),
                   ...entryFilters
                 ])})`
            : sql`EXISTS (SELECT 1 FROM issuing_book_entries e WHERE e.book_transfer_id = bt.id AND ${sql.and(entryFilters)})`
      const condition = where([
        sql`${program} = ${programId}`,
        filter.transaction_id !== undefined && sql`bt.transaction_id = ${filter.transaction_id}`,
        filter.transfer_id !== undefined && sql`bt.transfer_id = ${filter.transfer_id}`,
        entryCondition
      ])
      const page =
        filter.financial_account_id !== undefined && !scoped
          ? accountPage(sql, programId, window, { accountId: filter.financial_account_id, book: filter.book })
          : pageRows(sql, window, BOOK_TRANSFER_ORDER_FIELDS, {
              select: sql.literal("bt.*"),
              from: sql.literal("issuing_book_transfers bt"),
              where: condition
            })
      return Effect.gen(function* () {
        const heads = yield* page
        // One book transfer per transfer, a few per transaction: those filters count through their index.
        const total = yield* listTotal(
          sql,
          scoped || filter.financial_account_id === undefined
            ? bounded("issuing_book_transfers bt", condition)
            : maintained("book_transfers", programId, filter, {
                book: filter.book === undefined ? BOOK_SETS : BOOK_SETS.filter((set) => set.split("+").includes(filter.book!))
              })
        )
        if (heads.length === 0) return { rows: [], total }
        const entryRows = yield* sql`SELECT * FROM issuing_book_entries WHERE book_transfer_id IN ${sql.in(heads.map((h: any) => h.id))}
                                     ORDER BY book_transfer_id, position`
        const entriesOf = new Map<string, Array<BookEntry>>()
        for (const row of entryRows as ReadonlyArray<any>) {
          const list = entriesOf.get(row.book_transfer_id) ?? []
          list.push({
            book: row.book as Book,
            financial_account_id: row.financial_account_id,
            entry_type: row.entry_type as EntryType,
            amount: { amount: toInt(row.amount_minor), currency: row.currency }
          })
          entriesOf.set(row.book_transfer_id, list)
        }
        const rows = heads.map((head: any): BookTransfer => {
          const entries = entriesOf.get(head.id) ?? []
          return {
            id: head.id,
            object: "book_transfer",
            transfer_id: head.transfer_id,
            transaction_id: head.transaction_id,
            amount: { amount: toInt(head.amount_minor), currency: head.currency },
            financial_account_ids: [...new Set(entries.map((entry) => entry.financial_account_id))],
            entries,
            posted_at: toIso(head.posted_at)
          }
        })
        return { rows, total }
      })
    }
  } satisfies Partial<LedgerStoreService>
}
