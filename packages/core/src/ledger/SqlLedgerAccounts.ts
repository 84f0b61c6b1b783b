import type { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option } from "effect"
import type { InvalidRequest } from "../platform/Errors.js"
import type { PageWindow } from "../platform/Paging.js"
import { toInt, toIso } from "../platform/Rows.js"
import { listTotal, maintained } from "../sql/ListCounts.js"
import { mergedPage } from "../sql/MergedRanges.js"
import { pageRows } from "../sql/OrderBy.js"
import type { LedgerStoreService, NewAccount } from "./LedgerStore.js"
import { FINANCIAL_ACCOUNT_ORDER_FIELDS, FINANCIAL_ACCOUNT_UPDATE_ORDER_FIELDS, type FinancialAccountOrderField } from "./OrderFields.js"
import { bookBalance } from "./PostingRules.js"
import { type AccountKind, type Book, type BookBalance, BOOKS, type FinancialAccount } from "./Records.js"
import type { LedgerQueries } from "./SqlLedgerQueries.js"

/** The principal balance summed over its slots (docs/ledger.md#settlement-slots): a wallet's one row, a settlement account's slots. */
const principalSum = (column: string) =>
  `(SELECT sum(s.${column}) FROM issuing_balances s WHERE s.financial_account_id = a.id AND s.book = 'principal')`
// `b` is the principal's slot 0 (every account has one): the order field updated_at reads it.
const ACCOUNT_COLUMNS = `a.id, a.program_id, a.wallet_id, a.kind, a.currency, a.created_at,
  (SELECT max(s.updated_at) FROM issuing_balances s WHERE s.financial_account_id = a.id AND s.book = 'principal')
    AS balance_updated_at,
  ${principalSum("debits_minor")} AS debits_minor, ${principalSum("credits_minor")} AS credits_minor,
  ${principalSum("pending_minor")} AS pending_minor`
const ACCOUNT_FROM = `issuing_financial_accounts a
  JOIN issuing_balances b ON b.financial_account_id = a.id AND b.book = 'principal' AND b.slot = 0`

const toAccount = (row: any): FinancialAccount => ({
  id: row.id,
  object: "financial_account",
  program_id: row.program_id,
  wallet_id: row.wallet_id ?? null,
  kind: row.kind as AccountKind,
  currency: row.currency,
  balance: { amount: toInt(row.credits_minor) - toInt(row.debits_minor), currency: row.currency },
  pending_balance: { amount: toInt(row.pending_minor), currency: row.currency },
  available_balance: { amount: toInt(row.credits_minor) - toInt(row.debits_minor) - toInt(row.pending_minor), currency: row.currency },
  created_at: toIso(row.created_at),
  updated_at: toIso(row.balance_updated_at)
})

const toBookBalance = (row: any): BookBalance => {
  const debits = toInt(row.debits_minor)
  const credits = toInt(row.credits_minor)
  const book = row.book as Book
  return {
    object: "book_balance",
    financial_account_id: row.financial_account_id,
    book,
    debits: { amount: debits, currency: row.currency },
    credits: { amount: credits, currency: row.currency },
    balance: { amount: bookBalance(book, debits, credits), currency: row.currency },
    updated_at: toIso(row.updated_at)
  }
}

/** Accounts, their balance rows and the one read of a posting. */
export const accountStatements = (q: LedgerQueries) => {
  const { sql, where } = q

  // The account's program on its balance rows serves the account list by updated_at (migration 0411).
  const insertBalances = (account: { readonly id: string; readonly program_id: string }, currency: string, at: string) =>
    sql`INSERT INTO issuing_balances ${sql.insert(
      BOOKS.map((book) => ({
        financial_account_id: account.id,
        program_id: account.program_id,
        book,
        currency,
        debits_minor: 0,
        credits_minor: 0,
        updated_at: at
      }))
    )}`

  const insertAccountRow = (account: NewAccount) =>
    sql`INSERT INTO issuing_financial_accounts (id, program_id, wallet_id, kind, currency, created_at)
        VALUES (${account.id}, ${account.program_id}, ${account.wallet_id}, ${account.kind}, ${account.currency},
                ${account.created_at})`

  const findAccounts = (programId: string, ids: ReadonlyArray<string>) =>
    sql`SELECT ${sql.literal(ACCOUNT_COLUMNS)} FROM ${sql.literal(ACCOUNT_FROM)}
        WHERE a.program_id = ${programId} AND a.id IN ${sql.in(ids)}`.pipe(Effect.map((rows) => rows.map(toAccount)))

  return {
    insertAccount: (account) =>
      Effect.zipRight(insertAccountRow(account), insertBalances(account, account.currency, account.created_at)).pipe(Effect.asVoid),

    insertSettlementAccountIfMissing: (account) =>
      sql`INSERT INTO issuing_financial_accounts (id, program_id, wallet_id, kind, currency, created_at)
          VALUES (${account.id}, ${account.program_id}, NULL, 'settlement', ${account.currency}, ${account.created_at})
          ON CONFLICT DO NOTHING RETURNING id`.pipe(
        Effect.flatMap((rows) =>
          rows.length === 0 ? Effect.succeed(false) : Effect.as(insertBalances(account, account.currency, account.created_at), true)
        )
      ),

    findSettlementAccount: (programId, currency) =>
      sql`SELECT ${sql.literal(ACCOUNT_COLUMNS)} FROM ${sql.literal(ACCOUNT_FROM)}
          WHERE a.program_id = ${programId} AND a.kind = 'settlement' AND a.currency = ${currency}`.pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toAccount))
      ),

    findAccount: (programId, accountId) => Effect.map(findAccounts(programId, [accountId]), (rows) => Option.fromNullable(rows[0])),

    findPostingAccounts: (programId, ids, settlementCurrency) =>
      (settlementCurrency === null
        ? sql`SELECT ${sql.literal(ACCOUNT_COLUMNS)} FROM ${sql.literal(ACCOUNT_FROM)}
              WHERE a.program_id = ${programId} AND a.id IN ${sql.in(ids)}`
        : // Two selects, each through its own index (the ids by primary key, the settlement account by
          // issuing_financial_accounts_settlement): as one OR over two or more ids, SQLite walked every
          // account of the program (docs/operations.md#volume).
          sql`SELECT ${sql.literal(ACCOUNT_COLUMNS)} FROM ${sql.literal(ACCOUNT_FROM)}
              WHERE a.program_id = ${programId} AND a.id IN ${sql.in(ids)}
              UNION
              SELECT ${sql.literal(ACCOUNT_COLUMNS)} FROM ${sql.literal(ACCOUNT_FROM)}
              WHERE a.program_id = ${programId} AND a.kind = 'settlement' AND a.currency = ${settlementCurrency}`
      ).pipe(Effect.map((rows) => rows.map(toAccount))),

    listAccounts: (programId, filter, window) => {
      // A wallet's account through issuing_financial_accounts_by_wallet: the program is kept out of
      // the index choice there (SQLite walked the program's index, which also serves the order).
      const program = sql.literal(filter.wallet_id !== undefined ? "(a.program_id || '')" : "a.program_id")
      // `kind` with `currency`: a program has at most one settlement account per currency
      // (issuing_financial_accounts_settlement), so the settlement one is read through that unique
      // index (the kind written into the statement: a partial index serves only a literal), and the
      // wallet ones are the currency's range, the kind applied along it past at most that one row.
      const kind =
        filter.kind === undefined
          ? false
          : filter.currency === undefined
            ? sql`a.kind = ${filter.kind}`
            : filter.kind === "settlement"
              ? sql.literal("a.kind = 'settlement'")
              : sql`(a.kind || '') = ${filter.kind}`
      const condition = where([
        sql`${program} = ${programId}`,
        kind,
        filter.wallet_id !== undefined && sql`a.wallet_id = ${filter.wallet_id}`,
        filter.currency !== undefined && sql`a.currency = ${filter.currency}`
      ])
      // By updated_at: ranges of the principal balance rows' index, (program_id, currency,
      // updated_at, financial_account_id), which the posting's own balance update keeps (migrations
      // 0411, 0450), merged per currency (accountsByUpdate). Not for a wallet's one account, nor for
      // the settlement accounts (at most one per currency: the kind's range, sorted), which the
      // ranges would seek among every wallet's.
      const byUpdate =
        FINANCIAL_ACCOUNT_ORDER_FIELDS.columns[window.orderBy] === "b.updated_at" &&
        filter.wallet_id === undefined &&
        filter.kind !== "settlement"
      const rows = byUpdate
        ? accountsByUpdate(sql, programId, filter, window)
        : pageRows(sql, window, FINANCIAL_ACCOUNT_ORDER_FIELDS, {
            select: sql.literal(ACCOUNT_COLUMNS),
            from: sql.literal(ACCOUNT_FROM),
            where: condition
          })
      return Effect.all({
        rows: rows.pipe(Effect.map((rows) => rows.map(toAccount))),
        total: listTotal(sql, maintained("financial_accounts", programId, filter))
      })
    },

    balancesOf: (accountId) =>
      sql`SELECT financial_account_id, book, min(currency) AS currency, sum(debits_minor) AS debits_minor,
                 sum(credits_minor) AS credits_minor, max(updated_at) AS updated_at
          FROM issuing_balances WHERE financial_account_id = ${accountId} GROUP BY financial_account_id, book ORDER BY book`.pipe(
        Effect.map((rows) => rows.map(toBookBalance).sort((a, b) => BOOKS.indexOf(a.book) - BOOKS.indexOf(b.book)))
      )
  } satisfies Partial<LedgerStoreService>
}

/**
 * The program's accounts by updated_at (a wallet's with `kind=wallet`), with or without `currency`:
 * the principal slot-0 balance rows are indexed by (program_id, currency, updated_at,
 * financial_account_id) (`issuing_balances_principal_by_currency_update`, migration 0450), so a
 * currency's accounts are one range of it, and the program's the merge of one range per currency it
 * holds — the currencies read first by skipping along that index, one seek each (a loose index
 * scan), then the ranges merged (`mergedPage`) from the index alone and only the page's accounts
 * read. Without `kind` the ranges are of the balance rows alone; `kind=wallet` skips the one
 * settlement account a currency may have, its id read through issuing_financial_accounts_settlement.
 * A currency appearing between the two statements is simply not on that page yet (its account was
 * created after the currencies were read).
 */
const accountsByUpdate = (
  sql: SqlClient.SqlClient,
  programId: string,
  filter: { readonly kind?: AccountKind | undefined; readonly currency?: string | undefined },
  window: PageWindow<FinancialAccountOrderField>
): Effect.Effect<ReadonlyArray<any>, SqlError | InvalidRequest> => {
  const principal = sql.literal("b.book = 'principal' AND b.slot = 0")
  const ofKind =
    filter.kind === "wallet"
      ? (currency: string) => sql` AND b.financial_account_id NOT IN (SELECT s.id FROM issuing_financial_accounts s
                                  WHERE s.program_id = ${programId} AND s.kind = 'settlement' AND s.currency = ${currency})`
      : () => sql.literal("")
  const range = (currency: string) => sql`b.program_id = ${programId} AND b.currency = ${currency} AND ${principal}${ofKind(currency)}`
  const currencies =
    filter.currency !== undefined
      ? Effect.succeed([filter.currency])
      : sql<{ currency: string | null }>`WITH RECURSIVE c (currency) AS (
            SELECT (SELECT min(b.currency) FROM issuing_balances b WHERE b.program_id = ${programId} AND ${principal})
            UNION ALL
            SELECT (SELECT min(b.currency) FROM issuing_balances b
                    WHERE b.program_id = ${programId} AND b.currency > c.currency AND ${principal})
            FROM c WHERE c.currency IS NOT NULL)
          SELECT currency FROM c WHERE currency IS NOT NULL`.pipe(Effect.map((rows) => rows.map((row) => row.currency!)))
  return Effect.flatMap(currencies, (currencies) =>
    currencies.length === 0
      ? // No balance row: the program has no account (a starting_after of another program's: 400).
        pageRows(sql, window, FINANCIAL_ACCOUNT_UPDATE_ORDER_FIELDS, {
          select: sql.literal(ACCOUNT_COLUMNS),
          from: sql.literal(ACCOUNT_FROM),
          where: sql`b.program_id = ${programId}`
        })
      : mergedPage(sql, window, FINANCIAL_ACCOUNT_UPDATE_ORDER_FIELDS, {
          table: "issuing_balances b",
          ranges: currencies.map(range),
          pageRows: null,
          member: sql.or(currencies.map((currency) => sql`(${range(currency)})`)),
          page: { select: ACCOUNT_COLUMNS, from: ACCOUNT_FROM }
        })
  )
}
