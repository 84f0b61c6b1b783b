import { bounded, listTotal, maintained } from "../sql/ListCounts.js"
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import { metadataOf, metadataText } from "../platform/Metadata.js"
import { toInt, toIso } from "../platform/Rows.js"
import type { Fragment } from "@effect/sql/Statement"
import type { SqlError } from "@effect/sql/SqlError"
import type { InvalidRequest } from "../platform/Errors.js"
import type { OrderFields, PageWindow } from "../platform/Paging.js"
import { mergedPage } from "../sql/MergedRanges.js"
import { notInThisList, orderByClause, pageRows } from "../sql/OrderBy.js"
import {
  BOOK_TRANSFER_ORDER_FIELDS,
  type BookTransferOrderField,
  FINANCIAL_ACCOUNT_ORDER_FIELDS,
  FINANCIAL_ACCOUNT_UPDATE_ORDER_FIELDS,
  type FinancialAccountOrderField,
  TRANSACTION_ORDER_FIELDS,
  TRANSFER_ORDER_FIELDS,
  WALLET_ORDER_FIELDS
} from "./OrderFields.js"
import {
  LedgerPosting,
  LedgerStore,
  type LedgerStoreService,
  type NewAccount,
  type TransactionFilter,
  type TransferFilter
} from "./LedgerStore.js"
import { bookBalance } from "./PostingRules.js"
import {
  type AccountKind,
  type Book,
  type BookBalance,
  type BookEntry,
  type BookTransfer,
  BOOKS,
  type EntryType,
  type FinancialAccount,
  type Transaction,
  type TransactionStatus,
  type Transfer,
  type TransferRail,
  type TransferStatus,
  TRANSACTION_STATUSES,
  TRANSFER_RAILS,
  TRANSFER_STATUSES,
  type Wallet
} from "./Records.js"

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

const toWallet = (row: any): Wallet => ({
  id: row.id,
  object: "wallet",
  program_id: row.program_id,
  holder: { name: row.holder_name, email: row.holder_email ?? null },
  financial_account_id: row.financial_account_id,
  tag: row.tag ?? null,
  metadata: metadataOf(row.metadata),
  created_at: toIso(row.created_at),
  updated_at: toIso(row.updated_at)
})

const toTransaction = (row: any): Transaction => ({
  id: row.id,
  object: "transaction",
  program_id: row.program_id,
  status: row.status as TransactionStatus,
  amount: toInt(row.amount_minor),
  currency: row.currency,
  card_id: row.card_id ?? null,
  decline_reason: row.decline_reason ?? null,
  mcc: row.mcc ?? null,
  merchant_name: row.merchant_name ?? null,
  ...cardFields(row),
  created_at: toIso(row.created_at),
  updated_at: toIso(row.updated_at)
})

/** A JSON array column (text on both stores). */
const jsonArray = (value: unknown) => (typeof value === "string" ? JSON.parse(value) : (value ?? []))

/** The card transaction's lifecycle fields; null amounts for a transfer-driven transaction. */
const cardFields = (row: any) => {
  const card = row.card_id !== null && row.card_id !== undefined
  return {
    authorized_amount: card ? toInt(row.authorized_minor ?? row.amount_minor) : null,
    pending_amount: card ? toInt(row.pending_minor ?? 0) : null,
    settled_amount: card ? toInt(row.settled_minor ?? 0) : null,
    expires_at: row.expires_at === null || row.expires_at === undefined ? null : toIso(row.expires_at),
    card_events: jsonArray(row.card_events),
    request_history: jsonArray(row.request_history)
  }
}

/** The columns of a transaction row (both stores), as `issuing_post_card_message` and the inserts take them. */
export const transactionRow = (t: Transaction, financialAccountId: string | null) => ({
  id: t.id,
  program_id: t.program_id,
  amount_minor: t.amount,
  currency: t.currency,
  card_id: t.card_id,
  decline_reason: t.decline_reason,
  mcc: t.mcc,
  merchant_name: t.merchant_name,
  created_at: t.created_at,
  updated_at: t.updated_at,
  status: t.status,
  authorized_minor: t.authorized_amount,
  pending_minor: t.pending_amount ?? 0,
  settled_minor: t.settled_amount ?? 0,
  financial_account_id: financialAccountId,
  expires_at: t.expires_at,
  card_events: JSON.stringify(t.card_events),
  request_history: JSON.stringify(t.request_history)
})

const toTransfer = (row: any): Transfer => ({
  id: row.id,
  object: "transfer",
  program_id: row.program_id,
  transaction_id: row.transaction_id,
  payment_rail: row.payment_rail as TransferRail,
  amount: toInt(row.amount_minor),
  currency: row.currency,
  from_financial_account_id: row.from_financial_account_id,
  to_financial_account_id: row.to_financial_account_id,
  status: row.status as TransferStatus,
  description: row.description ?? null,
  metadata: metadataOf(row.metadata),
  created_at: toIso(row.created_at),
  updated_at: toIso(row.updated_at)
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

/** The SQL helpers every query group shares. */
const queries = (client: SqlClient.SqlClient) => {
  const sql = client.withoutTransforms()
  const forUpdate = (lock: boolean) =>
    lock ? sql.onDialectOrElse({ pg: () => sql.literal("FOR UPDATE"), orElse: () => sql.literal("") }) : sql.literal("")
  const where = (clauses: ReadonlyArray<ReturnType<typeof sql.literal> | false>) => {
    const present = clauses.filter((clause): clause is ReturnType<typeof sql.literal> => clause !== false)
    return sql.and(present)
  }
  const count = (rows: ReadonlyArray<any>) => toInt(rows[0]!.n)

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

  return { sql, forUpdate, where, count, insertBalances, insertAccountRow, findAccounts }
}

type Queries = ReturnType<typeof queries>

/** Accounts, their balance rows and the one read of a posting. */
const accountQueries = (q: Queries) => {
  const { findAccounts, insertAccountRow, insertBalances, sql, where } = q
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

/** Wallets. */
const walletQueries = (q: Queries) => {
  const { forUpdate, sql } = q
  const findWallet = (programId: string, walletId: string, lock: boolean) =>
    sql`SELECT * FROM issuing_wallets WHERE id = ${walletId} AND program_id = ${programId} ${forUpdate(lock)}`.pipe(
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toWallet))
    )
  return {
    insertWallet: (wallet) =>
      sql`INSERT INTO issuing_wallets
            (id, program_id, holder_name, holder_email, financial_account_id, tag, metadata, created_at, updated_at)
          VALUES (${wallet.id}, ${wallet.program_id}, ${wallet.holder.name}, ${wallet.holder.email},
                  ${wallet.financial_account_id}, ${wallet.tag}, ${metadataText(wallet.metadata)}, ${wallet.created_at},
                  ${wallet.updated_at})`.pipe(Effect.asVoid),

    findWallet: (programId, walletId) => findWallet(programId, walletId, false),
    lockWallet: (programId, walletId) => findWallet(programId, walletId, true),

    updateWallet: (wallet) =>
      sql`UPDATE issuing_wallets SET tag = ${wallet.tag}, metadata = ${metadataText(wallet.metadata)}, updated_at = ${wallet.updated_at}
          WHERE id = ${wallet.id} AND program_id = ${wallet.program_id}`.pipe(Effect.asVoid),

    // One tag's wallets: `tag = ?` implies the partial indexes' `tag IS NOT NULL` on both stores, so
    // the page is a range of issuing_wallets_by_tag (or _by_tag_update) in its order (migration 0480).
    listWallets: (programId, filter, window) =>
      Effect.all({
        rows: pageRows(sql, window, WALLET_ORDER_FIELDS, {
          select: sql.literal("*"),
          from: sql.literal("issuing_wallets"),
          where: filter.tag === undefined ? sql`program_id = ${programId}` : sql`program_id = ${programId} AND tag = ${filter.tag}`
        }).pipe(Effect.map((rows) => rows.map(toWallet))),
        total: listTotal(sql, maintained("wallets", programId, filter))
      })
  } satisfies Partial<LedgerStoreService>
}

/** Transactions and transfers: inserted by the posting, read and settled here. */
const transactionQueries = (q: Queries) => {
  const { count, forUpdate, sql, where } = q
  return {
    insertTransaction: (t) => sql`INSERT INTO issuing_transactions ${sql.insert(transactionRow(t, null))}`.pipe(Effect.asVoid),

    findTransaction: (programId, transactionId, lock) =>
      sql`SELECT * FROM issuing_transactions WHERE id = ${transactionId} AND program_id = ${programId} ${forUpdate(lock)}`.pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toTransaction))
      ),

    setTransactionStatus: (transactionId, status, at) =>
      sql`UPDATE issuing_transactions SET status = ${status}, updated_at = ${at} WHERE id = ${transactionId}`.pipe(Effect.asVoid),

    listTransactions: (programId, filter, window) => {
      const condition = where([
        sql`program_id = ${programId}`,
        filter.status !== undefined && sql`status = ${filter.status}`,
        filter.card_id !== undefined && sql`card_id = ${filter.card_id}`
      ])
      // Newest or oldest first without a card: a range of the program's index or its status's.
      // Otherwise ranges merged (mergedPage): a card's one, or one per status the filter allows.
      const merged =
        filter.card_id !== undefined
          ? cardTransactions(sql, programId, { ...filter, card_id: filter.card_id })
          : TRANSACTION_ORDER_FIELDS.columns[window.orderBy] !== "created_at"
            ? programTransactions(sql, programId, filter)
            : null
      return Effect.all({
        rows: ledgerPage(sql, window, TRANSACTION_ORDER_FIELDS, "issuing_transactions", condition, merged).pipe(
          Effect.map((rows) => rows.map(toTransaction))
        ),
        total: listTotal(sql, maintained("transactions", programId, filter))
      })
    },

    claimExpiredHolds: (now, limit) =>
      sql`SELECT * FROM issuing_transactions
          WHERE status = 'PENDING' AND expires_at IS NOT NULL AND expires_at <= ${now}
          ORDER BY expires_at, id LIMIT ${limit}
          ${sql.onDialectOrElse({ pg: () => sql.literal("FOR UPDATE SKIP LOCKED"), orElse: () => sql.literal("") })}`.pipe(
        Effect.map((rows) => rows.map(toTransaction))
      ),

    countPendingTransfers: (transactionId) =>
      sql`SELECT COUNT(*) AS n FROM issuing_transfers WHERE transaction_id = ${transactionId} AND status = 'PENDING'`.pipe(
        Effect.map(count)
      ),

    findTransfer: (programId, transferId, lock) =>
      sql`SELECT * FROM issuing_transfers WHERE id = ${transferId} AND program_id = ${programId} ${forUpdate(lock)}`.pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toTransfer))
      ),

    setTransferStatus: (transferId, status, at) =>
      sql`UPDATE issuing_transfers SET status = ${status}, updated_at = ${at} WHERE id = ${transferId}`.pipe(Effect.asVoid),

    listTransfers: (programId, filter, window) => {
      const condition = where([
        sql`program_id = ${programId}`,
        filter.status !== undefined && sql`status = ${filter.status}`,
        filter.payment_rail !== undefined && sql`payment_rail = ${filter.payment_rail}`,
        filter.transaction_id !== undefined && sql`transaction_id = ${filter.transaction_id}`,
        filter.financial_account_id !== undefined &&
          sql`(from_financial_account_id = ${filter.financial_account_id} OR to_financial_account_id = ${filter.financial_account_id})`
      ])
      // A transaction's transfers are a few (their own index); the program's newest or oldest first
      // a range of its index; every other list ranges merged (mergedPage): an account's two sides,
      // or one per (status, rail) its filters allow.
      const merged =
        filter.transaction_id !== undefined
          ? null
          : filter.financial_account_id !== undefined
            ? accountTransfers(sql, programId, { ...filter, financial_account_id: filter.financial_account_id })
            : filter.status !== undefined ||
                filter.payment_rail !== undefined ||
                TRANSFER_ORDER_FIELDS.columns[window.orderBy] !== "created_at"
              ? programTransfers(sql, programId, filter)
              : null
      return Effect.all({
        rows: ledgerPage(sql, window, TRANSFER_ORDER_FIELDS, "issuing_transfers", condition, merged).pipe(
          Effect.map((rows) => rows.map(toTransfer))
        ),
        total: listTotal(
          sql,
          filter.transaction_id !== undefined ? bounded("issuing_transfers", condition) : maintained("transfers", programId, filter)
        )
      })
    }
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

/**
 * A ledger list merged from index ranges (`mergedPage`, sql/MergedRanges.ts). The ranges need
 * no program condition where their first column (a card, an account) is of one program; the page's
 * rows and the `starting_after` row are read with the program, written out of the index choice.
 */
interface MergedList {
  readonly table: "issuing_transfers" | "issuing_transactions"
  readonly programId: string
  /** Each range's equalities, one index range each. */
  readonly ranges: ReadonlyArray<Fragment>
  /** The list's filter besides the program, for the `starting_after` row. */
  readonly member: Fragment | null
  /** Whether most ranges are usually empty: probed first, the empty ones left out (`mergedPage`). */
  readonly probe?: boolean
}

/** A ledger list's page: its ranges merged when it has them, else one range of `table` under `where`. */
const ledgerPage = <F extends string>(
  sql: SqlClient.SqlClient,
  window: PageWindow<NoInfer<F>>,
  order: OrderFields<F>,
  table: string,
  where: Parameters<typeof pageRows>[3]["where"],
  merged: MergedList | null
) =>
  merged !== null
    ? ledgerMergedPage(sql, window, order, merged)
    : pageRows(sql, window, order, { select: sql.literal("*"), from: sql.literal(table), where })

/** One page of a ledger `MergedList`. */
const ledgerMergedPage = <F extends string>(
  sql: SqlClient.SqlClient,
  window: PageWindow<NoInfer<F>>,
  order: OrderFields<F>,
  list: MergedList
) => {
  const ofProgram = sql`(program_id || '') = ${list.programId}`
  return mergedPage(sql, window, order, {
    table: list.table,
    ranges: list.ranges,
    pageRows: ofProgram,
    member: sql.and([ofProgram, ...(list.member === null ? [] : [list.member])]),
    probe: list.probe ?? false
  })
}

/**
 * A card's transactions in any order, with or without `status`: ranges of
 * `issuing_transactions_by_card_status[_amount|_update]` (card, status, order column, id), partial
 * indexes of the transactions that have a card (migration 0450): the status's one range, or one per
 * status (5) merged. A card's transactions are all of its program, so the ranges need no program
 * condition; the page's rows are read with the program (another program's card lists nothing).
 */
const cardTransactions = (
  sql: SqlClient.SqlClient,
  programId: string,
  filter: TransactionFilter & { readonly card_id: string }
): MergedList => ({
  table: "issuing_transactions",
  programId,
  ranges: (filter.status !== undefined ? [filter.status] : TRANSACTION_STATUSES).map(
    (status) => sql`card_id = ${filter.card_id} AND status = ${status}`
  ),
  member: sql.and([
    sql`(card_id || '') = ${filter.card_id}`,
    ...(filter.status !== undefined ? [sql`(status || '') = ${filter.status}`] : [])
  ])
})

/**
 * The program's transactions by amount or updated_at: ranges of
 * `issuing_transactions_by_status_amount` / `_by_status_update` (program, status, order column, id),
 * the filter's status or one per status (5; the closed union of Records.ts).
 */
const programTransactions = (sql: SqlClient.SqlClient, programId: string, filter: TransactionFilter): MergedList => ({
  table: "issuing_transactions",
  programId,
  ranges: (filter.status !== undefined ? [filter.status] : TRANSACTION_STATUSES).map(
    (status) => sql`program_id = ${programId} AND status = ${status}`
  ),
  member: filter.status !== undefined ? sql`(status || '') = ${filter.status}` : null
})

/**
 * An account's transfers in any order, with any of `status` and `payment_rail`: the ones it sends
 * and the ones it receives, per status and rail, are ranges of
 * `issuing_transfers_by_from_status_rail[_amount|_update]` / `_by_to_status_rail[…]` (account,
 * status, rail, order column, id; migration 0450), merged (`mergedPage`): one per side and per
 * status and rail the filters leave open — 2 with both, 4 with a rail, 10 with a status, 20 without
 * (2 statuses, 5 rails). Without a rail most of those are empty for an account, and every range
 * merged costs each row a deep page skips one more merge step (20 made SQLite's deep page of the
 * volume bench's busy wallet 3× its 4 before), so for a deep page they are probed first and only
 * the ranges holding transfers merged (page 1 merges all 20: an empty range is one seek either way). The
 * ranges need no program condition: a transfer's two accounts are of its program, so an account's
 * transfers are all of the account's program, and the page's rows are read with the program (an
 * account of another program lists nothing). They need no test that the other side is another
 * account either: a transfer's two accounts differ (PostingRules.transferEntries), so the ranges
 * never share a transfer.
 */
const accountTransfers = (
  sql: SqlClient.SqlClient,
  programId: string,
  filter: TransferFilter & { readonly financial_account_id: string }
): MergedList => {
  const account = filter.financial_account_id
  const statuses = filter.status !== undefined ? [filter.status] : TRANSFER_STATUSES
  const rails = filter.payment_rail !== undefined ? [filter.payment_rail] : TRANSFER_RAILS
  return {
    table: "issuing_transfers",
    programId,
    ranges: (["from_financial_account_id", "to_financial_account_id"] as const).flatMap((side) =>
      statuses.flatMap((status) =>
        rails.map((rail) => sql`${sql.literal(side)} = ${account} AND status = ${status} AND payment_rail = ${rail}`)
      )
    ),
    // An account uses a rail or two: without a rail filter, a deep page probes the 10 or 20 ranges
    // and leaves the empty ones out, so it merges what the account holds (4 for a wallet that only
    // makes book transfers) rather than 20 ranges.
    probe: filter.payment_rail === undefined,
    member: sql.and([
      sql`(from_financial_account_id = ${account} OR to_financial_account_id = ${account})`,
      ...(filter.status !== undefined ? [sql`(status || '') = ${filter.status}`] : []),
      ...(filter.payment_rail !== undefined ? [sql`(payment_rail || '') = ${filter.payment_rail}`] : [])
    ])
  }
}

/**
 * The program's transfers with `status`, `payment_rail` or both, or by amount or updated_at: ranges
 * of `issuing_transfers_by_status_rail[_amount|_update]` (program, status, rail, order column, id),
 * one per (status, rail) the filters allow — 1 with both, 5 with a status, 2 with a rail, 10 with
 * neither (migration 0400; the statuses and rails are the closed unions of Records.ts, which the
 * API decodes the filters with).
 */
const programTransfers = (sql: SqlClient.SqlClient, programId: string, filter: TransferFilter): MergedList => {
  const statuses = filter.status !== undefined ? [filter.status] : TRANSFER_STATUSES
  const rails = filter.payment_rail !== undefined ? [filter.payment_rail] : TRANSFER_RAILS
  return {
    table: "issuing_transfers",
    programId,
    ranges: statuses.flatMap((status) =>
      rails.map((rail) => sql`program_id = ${programId} AND status = ${status} AND payment_rail = ${rail}`)
    ),
    member: sql.and([
      ...(filter.status !== undefined ? [sql`(status || '') = ${filter.status}`] : []),
      ...(filter.payment_rail !== undefined ? [sql`(payment_rail || '') = ${filter.payment_rail}`] : [])
    ])
  }
}

/**
 * One page of an account's book transfers (docs/ledger.md#an-accounts-book-transfers), newest or
 * oldest first or by amount, O(page) whatever the number of its entries, a deep page O(its depth).
 * Every account a book transfer moves has exactly one entry in each book (the posting rule,
 * PostingRules.transferEntries: the source's principal debit and cash credit, the target's cash
 * debit and principal credit), so the account's book transfers, with `book=principal`, with
 * `book=cash` or without `book`, are one set: its principal entries. Those are indexed by
 * (account, posted_at, book transfer) and (account, amount, book transfer), partial indexes of the
 * principal book (migration 0360; each entry carries its book transfer's posted_at and amount), so
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
  const key = sql.literal(BOOK_TRANSFER_ORDER_FIELDS.columns[window.orderBy] === "bt.amount_minor" ? "amount_minor" : "posted_at")
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

/** Book transfers with their entries (append-only). */
const bookTransferQueries = (q: Queries) => {
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
          scoped ? bounded("issuing_book_transfers bt", condition) : maintained("book_transfers", programId, filter)
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

/**
 * The ledger port over SqlClient: one SQL text for both dialects (only row locking differs); the
 * posting itself is the store package's (LedgerPosting), each store's fastest way.
 */
export const SqlLedgerStoreLive: Layer.Layer<LedgerStore, never, SqlClient.SqlClient | LedgerPosting> = Layer.effect(
  LedgerStore,
  Effect.gen(function* () {
    const q = queries(yield* SqlClient.SqlClient)
    const posting = yield* LedgerPosting
    return {
      ...accountQueries(q),
      ...walletQueries(q),
      ...transactionQueries(q),
      postTransfer: posting.postTransfer,
      postTransfers: posting.postTransfers,
      postNewTransfers: posting.postNewTransfers,
      commitsNewTransfersItself: posting.commitsNewTransfersItself,
      lockAccounts: posting.lockAccounts,
      postCardMessage: posting.postCardMessage,
      releasePending: posting.releasePending,
      ...bookTransferQueries(q)
    }
  })
)
