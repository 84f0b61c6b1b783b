import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import * as Migrator from "@effect/sql/Migrator"
import * as PgStore from "@issuing/store-pg"
import {
  cardSpendTriggerSteps,
  countingWritesCheck,
  expectedListCounts,
  checkCardSpendFixture,
  checkSpendTotalsFixture,
  spendTotalsTriggerSteps,
  insertCardSpendFixture,
  maintainedListCounts
} from "@issuing/core/testing"
import { Effect, Schedule } from "effect"
import pg from "pg"
import { createTestDatabase } from "../../../test/support/databases.js"
import { migrations } from "../src/migrations/index.js"
import { countsOf, type PostingRecord } from "../src/PostingRecord.js"

/**
 * Before/after checks of each migration (docs/architecture.md#migrations). One database is
 * migrated one migration at a time; around a migration with checks, `before` runs on the database
 * just short of it (asserting what the migration relies on, seeding the rows it transforms) and
 * `after` right after it (asserting what it promised: transformed rows, and each function it
 * (re)defines exercised). After every step from the ledger on, the ledger's invariants hold.
 * A migration that only adds tables, columns or indexes says "schema only": the checked-in
 * schema (packages/store-pg/schema/current.sql, schema.test.ts) covers it.
 */

/** What runs around one migration, against the database its checks share with every other step. */
interface MigrationCheck {
  /** On the database migrated up to just before the migration. */
  readonly before?: (database: CheckedDatabase) => Effect.Effect<void, unknown, SqlClient.SqlClient>
  /** Right after the migration. */
  readonly after: (database: CheckedDatabase) => Effect.Effect<void, unknown, SqlClient.SqlClient>
}

interface CheckedDatabase {
  /** For what needs a connection of its own (LISTEN). */
  readonly url: string
}

// ─── fixtures shared by the steps ─────────────────────────────────────────────────────────────

const NOW = "2026-01-01T00:00:00.000Z"
const PROGRAM = "program_1"
const SETTLEMENT = "fa_settlement"
const ALICE = "fa_alice"
const BOB = "fa_bob"
/** A wallet account whose postings skip the funds check, to push a balance towards 2^53 - 1. */
const VAULT = "fa_vault"
/** Where the vault's postings go: an account nothing else touches. */
const SINK = "fa_sink"
/** Accounts without balance rows until migration 0220's check posts to them. */
const CAROL = "fa_carol"
const DAVE = "fa_dave"
const MAX_SAFE = 9_007_199_254_740_991
/** The NOTIFY channel of the checks' postings (before 0110, a NULL channel could not queue deliveries). */
const CHANNEL = "issuing_migration_check"

let sequence = 0
/** A fresh id; unique across the whole run, since every step shares one database. */
const nextId = (prefix: string) => `${prefix}_${++sequence}`

/** One transfer of the posting rules: source principal DEBIT, source cash CREDIT, target cash DEBIT, target principal CREDIT. */
interface Transfer {
  readonly transactionId: string
  readonly transferId: string
  readonly bookTransferId: string
  readonly source: string
  readonly target: string
  readonly amount: number
  readonly checkFunds: boolean
  readonly eventIds: ReadonlyArray<string>
}

const transfer = (source: string, target: string, amount: number, options: { checkFunds?: boolean; events?: number } = {}): Transfer => ({
  transactionId: nextId("txn"),
  transferId: nextId("tr"),
  bookTransferId: nextId("bt"),
  source,
  target,
  amount,
  checkFunds: options.checkFunds ?? true,
  eventIds: Array.from({ length: options.events ?? 0 }, () => nextId("evt"))
})

const entriesOf = (t: Transfer) =>
  [
    { account: t.source, book: "principal", type: "DEBIT", debits: t.amount, credits: 0 },
    { account: t.source, book: "cash", type: "CREDIT", debits: 0, credits: t.amount },
    { account: t.target, book: "cash", type: "DEBIT", debits: t.amount, credits: 0 },
    { account: t.target, book: "principal", type: "CREDIT", debits: 0, credits: t.amount }
  ] as const

/** A named argument of a posting function: name, value and its SQL type. */
type Argument = readonly [name: string, value: unknown, type: string]

/**
 * `issuing_post_transfer`'s arguments for `t` as migration 0011 defined it. Later versions add
 * arguments (0040: the transaction's write and creation time; 0080: the active card), given in `extra`.
 */
const postingArguments = (t: Transfer, extra: ReadonlyArray<Argument> = []): ReadonlyArray<Argument> => {
  const entries = entriesOf(t)
  return [
    ["p_program_id", PROGRAM, "text"],
    ["p_source", t.source, "text"],
    ["p_target", t.target, "text"],
    ["p_check_funds", t.checkFunds, "boolean"],
    ["p_amount", t.amount, "bigint"],
    ["p_currency", "USD", "text"],
    ["p_now", NOW, "timestamptz"],
    ["p_transaction_id", t.transactionId, "text"],
    ["p_transaction_status", "SETTLED", "text"],
    ["p_card_id", null, "text"],
    ["p_mcc", null, "text"],
    ["p_merchant_name", null, "text"],
    ["p_transfer_id", t.transferId, "text"],
    ["p_rail", "book", "text"],
    ["p_transfer_status", "SETTLED", "text"],
    ["p_description", null, "text"],
    ["p_book_transfer_id", t.bookTransferId, "text"],
    ["p_entry_accounts", entries.map((e) => e.account), "text[]"],
    ["p_entry_books", entries.map((e) => e.book), "text[]"],
    ["p_entry_types", entries.map((e) => e.type), "text[]"],
    ["p_entry_amounts", entries.map(() => t.amount), "bigint[]"],
    ["p_delta_accounts", entries.map((e) => e.account), "text[]"],
    ["p_delta_books", entries.map((e) => e.book), "text[]"],
    ["p_delta_debits", entries.map((e) => e.debits), "bigint[]"],
    ["p_delta_credits", entries.map((e) => e.credits), "bigint[]"],
    ["p_event_ids", t.eventIds, "text[]"],
    ["p_event_types", t.eventIds.map(() => "transfer.created"), "text[]"],
    ["p_event_data", t.eventIds.map(() => "{}"), "text[]"],
    ["p_channel", CHANNEL, "text"],
    ...extra
  ]
}

/** The arguments 0040 added: a new transaction, created now. */
const newTransaction: ReadonlyArray<Argument> = [
  ["p_transaction_write", "insert", "text"],
  ["p_transaction_created_at", NOW, "timestamptz"]
]

/** The arguments after 0011's of `issuing_post_transfer` as 0270 (and every later version) takes them. */
const ARGUMENTS_0270: ReadonlyArray<Argument> = [
  ...newTransaction,
  ["p_active_card", null, "text"],
  ["p_delta_pending", [0, 0, 0, 0], "bigint[]"],
  ["p_balance_event_ids", [], "text[]"],
  ["p_balance_event_accounts", [], "text[]"],
  ["p_metadata", "{}", "text"]
]

interface PostingResult {
  readonly posted: boolean
  readonly available: string | null
  readonly refusal?: string | null
}

/** Calls `issuing_post_transfer` with named arguments, so each version's call names what it passes. */
const postTransfer = (args: ReadonlyArray<Argument>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe<PostingResult>(
      `SELECT * FROM issuing_post_transfer(${args.map(([name, , type], i) => `${name} => $${i + 1}::${type}`).join(", ")})`,
      args.map(([, value]) => value)
    )
  ).pipe(Effect.map((rows) => rows[0]!))

/** One element of `issuing_post_transfers`' jsonb array: the same arguments, named without `p_`. */
const postingJson = (args: ReadonlyArray<Argument>) =>
  Object.fromEntries(args.filter(([name]) => name !== "p_channel").map(([name, value]) => [name.slice(2), value]))

/** The rows `issuing_write_postings` (0090) takes for new transfers, balance deltas summed per (account, book). */
const rowsOf = (transfers: ReadonlyArray<Transfer>) => {
  const balances = new Map<string, { financial_account_id: string; book: string; debits_minor: number; credits_minor: number }>()
  for (const e of transfers.flatMap(entriesOf)) {
    const key = `${e.account}/${e.book}`
    const row = balances.get(key) ?? { financial_account_id: e.account, book: e.book, debits_minor: 0, credits_minor: 0 }
    balances.set(key, { ...row, debits_minor: row.debits_minor + e.debits, credits_minor: row.credits_minor + e.credits })
  }
  return {
    transactions: transfers.map((t) => ({
      id: t.transactionId,
      program_id: PROGRAM,
      status: "SETTLED",
      amount_minor: t.amount,
      currency: "USD",
      card_id: null,
      mcc: null,
      merchant_name: null,
      created_at: NOW,
      updated_at: NOW
    })),
    transfers: transfers.map((t) => ({
      id: t.transferId,
      program_id: PROGRAM,
      transaction_id: t.transactionId,
      payment_rail: "book",
      amount_minor: t.amount,
      currency: "USD",
      from_financial_account_id: t.source,
      to_financial_account_id: t.target,
      status: "SETTLED",
      description: null,
      created_at: NOW
    })),
    book_transfers: transfers.map((t) => ({
      id: t.bookTransferId,
      program_id: PROGRAM,
      transfer_id: t.transferId,
      transaction_id: t.transactionId,
      amount_minor: t.amount,
      currency: "USD",
      posted_at: NOW
    })),
    entries: transfers.flatMap((t) =>
      entriesOf(t).map((e, position) => ({
        book_transfer_id: t.bookTransferId,
        position,
        financial_account_id: e.account,
        book: e.book,
        entry_type: e.type,
        amount_minor: t.amount,
        currency: "USD",
        // Read from 0310 on (ignored before).
        posted_at: NOW
      }))
    ),
    balances: [...balances.values()].map((row) => ({ ...row, currency: "USD", updated_at: NOW })),
    events: transfers.flatMap((t) =>
      t.eventIds.map((id) => ({ id, program_id: PROGRAM, type: "transfer.created", created_at: NOW, data: "{}" }))
    )
  }
}

/** One number from a query's first row. */
const count = (query: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<{ n: string }>(query)).pipe(Effect.map((rows) => Number(rows[0]!.n)))

/**
 * The plan of the book-entry counting trigger's statement (`issuing_count_book_entries`, its
 * `INSERT … SELECT` without the insert) over a batch's new entries, the transition table `new_rows`
 * stood in for by a CTE of 8 entries: what migration 0390 changed. The lookup of an entry's other
 * entries is a correlated subplan (read by key per new entry) or, pulled up, an anti join over the
 * whole entries table.
 */
const bookEntryCountPlan = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const [fn] = yield* sql<{ body: string }>`SELECT prosrc AS body FROM pg_proc WHERE proname = 'issuing_count_book_entries'`
  const select = fn!.body.slice(fn!.body.indexOf("SELECT"), fn!.body.indexOf("ON CONFLICT"))
  const rows = yield* sql.unsafe<{ "QUERY PLAN": string }>(
    `EXPLAIN (COSTS OFF) WITH new_rows AS MATERIALIZED (SELECT * FROM issuing_book_entries LIMIT 8) ${select}`
  )
  return rows.map((row) => row["QUERY PLAN"].trim()).join(" | ")
})

/** A principal balance (credits - debits), 0 without a row. */
const principal = (account: string) =>
  count(
    `SELECT coalesce(sum(credits_minor - debits_minor), 0) AS n FROM issuing_balances WHERE financial_account_id = '${account}' AND book = 'principal'`
  )

/** A card transaction of CAROL's active card as `issuing_post_card_message` takes it: a hold, or settled at once. */
const cardTransaction = (id: string, amount: number, kind: "hold" | "settled") => ({
  id,
  program_id: PROGRAM,
  status: kind === "hold" ? "PENDING" : "SETTLED",
  amount_minor: amount,
  currency: "USD",
  card_id: "card_ACTIVE",
  mcc: "5411",
  created_at: NOW,
  updated_at: NOW,
  authorized_minor: amount,
  pending_minor: kind === "hold" ? amount : 0,
  settled_minor: kind === "hold" ? 0 : amount,
  financial_account_id: CAROL,
  card_events: "[]",
  request_history: "[]"
})

/** An account's pending amount (its principal book, summed over its slots). */
const pendingOf = (account: string) =>
  count(
    `SELECT coalesce(sum(pending_minor), 0) AS n FROM issuing_balances WHERE financial_account_id = '${account}' AND book = 'principal'`
  )

/** How many transfers, book transfers and entries there are: what a refused posting must leave as it was. */
const ledgerRowCounts = count(
  `SELECT (SELECT count(*) FROM issuing_transactions) * 1000000 + (SELECT count(*) FROM issuing_transfers) * 1000
     + (SELECT count(*) FROM issuing_book_entries) AS n`
)

/** The PostgreSQL message of a statement's failure. */
const failureOf = <A, R>(statement: Effect.Effect<A, SqlError, R>) =>
  Effect.map(Effect.flip(statement), (error) => {
    const cause = error.cause as { message?: string; code?: string } | undefined
    return { message: cause?.message ?? error.message, code: cause?.code }
  })

/** The identity arguments of each `issuing_post_transfer`: the one a migration's DROP FUNCTION must name. */
const postTransferSignatures = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) =>
    sql<{ args: string }>`SELECT pg_get_function_identity_arguments(oid) AS args FROM pg_proc WHERE proname = 'issuing_post_transfer'`
).pipe(Effect.map((rows) => rows.map((row) => row.args)))

/**
 * The ledger's invariants, whatever wrote it: every book transfer's debits equal its credits, every
 * (account, book)'s balance rows (its slots, from 0300) hold the sums of its entries (and no entries lack a row), and every
 * transfer has exactly one book transfer. Each violation is one line.
 */
const ledgerViolations = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) =>
    sql<{ violation: string }>`
    SELECT 'book transfer ' || book_transfer_id || ' is not balanced' AS violation FROM issuing_book_entries
      GROUP BY book_transfer_id
      HAVING sum(amount_minor) FILTER (WHERE entry_type = 'DEBIT') IS DISTINCT FROM sum(amount_minor) FILTER (WHERE entry_type = 'CREDIT')
    UNION ALL
    SELECT 'balance ' || coalesce(b.financial_account_id, e.account) || '/' || coalesce(b.book, e.book) || ' is not the sum of its entries'
      FROM (SELECT financial_account_id, book, sum(debits_minor) AS debits_minor, sum(credits_minor) AS credits_minor
            FROM issuing_balances GROUP BY financial_account_id, book) b
      FULL JOIN (SELECT financial_account_id AS account, book,
                        sum(amount_minor) FILTER (WHERE entry_type = 'DEBIT') AS debits,
                        sum(amount_minor) FILTER (WHERE entry_type = 'CREDIT') AS credits
                 FROM issuing_book_entries GROUP BY financial_account_id, book) e
        ON e.account = b.financial_account_id AND e.book = b.book
      WHERE coalesce(b.debits_minor, 0) <> coalesce(e.debits, 0) OR coalesce(b.credits_minor, 0) <> coalesce(e.credits, 0)
    UNION ALL
    SELECT 'transfer ' || t.id || ' has ' || count(bt.id) || ' book transfers' FROM issuing_transfers t
      LEFT JOIN issuing_book_transfers bt ON bt.transfer_id = t.id GROUP BY t.id HAVING count(bt.id) <> 1`
).pipe(Effect.map((rows) => rows.map((row) => row.violation)))

// ─── the checks, by migration ─────────────────────────────────────────────────────────────────

/**
 * Every migration, in order, with its checks or "schema only". A new migration must be added here
 * (a test below fails otherwise): with `before`/`after` when it changes data or functions.
 */
const checks: Record<keyof typeof migrations, MigrationCheck | "schema only"> = {
  "0001_access": "schema only",
  "0002_idempotency": "schema only",
  "0003_events": "schema only",
  "0010_ledger": {
    // The ledger's rows belong to a program.
    before: () =>
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        Effect.all([
          sql`INSERT INTO issuing_organizations (id, name, created_at) VALUES ('org_1', 'Org', ${NOW})`,
          sql`INSERT INTO issuing_programs (id, organization_id, name, bin, created_at, updated_at)
              VALUES (${PROGRAM}, 'org_1', 'Program', '400000', ${NOW}, ${NOW})`
        ])
      ),
    // Book transfers and entries are immutable: the trigger function refuses UPDATE and DELETE.
    after: () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        for (const [id, kind, wallet] of [
          [SETTLEMENT, "settlement", null],
          [ALICE, "wallet", "wallet_alice"],
          [BOB, "wallet", "wallet_bob"],
          [VAULT, "wallet", "wallet_vault"],
          [SINK, "wallet", "wallet_sink"]
        ] as const) {
          yield* sql`INSERT INTO issuing_financial_accounts (id, program_id, wallet_id, kind, currency, created_at)
                     VALUES (${id}, ${PROGRAM}, ${wallet}, ${kind}, 'USD', ${NOW})`
        }
        // A first deposit, written row by row as the first release's TypeScript did.
        const t = transfer(SETTLEMENT, ALICE, 10_000)
        yield* sql`INSERT INTO issuing_transactions (id, program_id, status, amount_minor, currency, created_at, updated_at)
                   VALUES (${t.transactionId}, ${PROGRAM}, 'SETTLED', ${t.amount}, 'USD', ${NOW}, ${NOW})`
        yield* sql`INSERT INTO issuing_transfers (id, program_id, transaction_id, payment_rail, amount_minor, currency,
                     from_financial_account_id, to_financial_account_id, status, created_at, updated_at)
                   VALUES (${t.transferId}, ${PROGRAM}, ${t.transactionId}, 'book', ${t.amount}, 'USD', ${t.source}, ${t.target},
                     'SETTLED', ${NOW}, ${NOW})`
        yield* sql`INSERT INTO issuing_book_transfers (id, program_id, transfer_id, transaction_id, amount_minor, currency, posted_at)
                   VALUES (${t.bookTransferId}, ${PROGRAM}, ${t.transferId}, ${t.transactionId}, ${t.amount}, 'USD', ${NOW})`
        for (const [position, e] of entriesOf(t).entries()) {
          yield* sql`INSERT INTO issuing_book_entries (book_transfer_id, position, financial_account_id, book, entry_type, amount_minor, currency)
                     VALUES (${t.bookTransferId}, ${position}, ${e.account}, ${e.book}, ${e.type}, ${t.amount}, 'USD')`
          yield* sql`INSERT INTO issuing_balances (financial_account_id, book, currency, debits_minor, credits_minor, updated_at)
                     VALUES (${e.account}, ${e.book}, 'USD', ${e.debits}, ${e.credits}, ${NOW})`
        }
        for (const statement of [
          sql`UPDATE issuing_book_entries SET amount_minor = 1 WHERE book_transfer_id = ${t.bookTransferId}`,
          sql`DELETE FROM issuing_book_entries WHERE book_transfer_id = ${t.bookTransferId}`,
          sql`UPDATE issuing_book_transfers SET amount_minor = 1 WHERE id = ${t.bookTransferId}`,
          sql`DELETE FROM issuing_book_transfers WHERE id = ${t.bookTransferId}`
        ]) {
          expect((yield* failureOf(statement)).message).toContain("immutable")
        }
      })
  },
  "0011_ledger_posting": {
    // The first posting function: posts with the funds check, refuses short of funds writing nothing.
    // (Its fan-out needs 0030's tables: the events of postings are checked from 0030 on.)
    after: () =>
      Effect.gen(function* () {
        expect(yield* postTransfer(postingArguments(transfer(ALICE, BOB, 2_500)))).toEqual({ posted: true, available: "10000" })
        const rows = yield* ledgerRowCounts
        expect(yield* postTransfer(postingArguments(transfer(ALICE, BOB, 7_501)))).toEqual({ posted: false, available: "7500" })
        expect(yield* ledgerRowCounts).toBe(rows)
        expect([yield* principal(ALICE), yield* principal(BOB)]).toEqual([7_500, 2_500])
      })
  },
  "0020_cards": "schema only",
  "0030_webhooks": {
    // 0011's fan-out finds its tables now: one delivery per ENABLED subscription to the event's type.
    after: () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        for (const [id, disabled] of [
          ["whs_on", false],
          ["whs_off", true]
        ] as const) {
          yield* sql`INSERT INTO issuing_webhook_subscriptions (id, program_id, url, description, event_types, disabled, secret_sealed,
                       created_at, updated_at)
                     VALUES (${id}, ${PROGRAM}, 'https://example.com/hook', '', '["transfer.created"]', ${disabled}, 'sealed', ${NOW}, ${NOW})`
          yield* sql`INSERT INTO issuing_webhook_event_types (program_id, event_type, subscription_id)
                     VALUES (${PROGRAM}, 'transfer.created', ${id})`
        }
        const t = transfer(BOB, ALICE, 500, { events: 1 })
        expect((yield* postTransfer(postingArguments(t))).posted).toBe(true)
        expect(yield* sql<{ id: string }>`SELECT id FROM issuing_webhook_deliveries WHERE event_id = ${t.eventIds[0]!}`).toEqual([
          { id: `${t.eventIds[0]}:whs_on` }
        ])
      })
  },
  "0040_ledger_post_transfer": {
    // Its DROP FUNCTION names 0011's signature exactly.
    before: () =>
      Effect.map(postTransferSignatures, (signatures) => {
        expect(signatures).toHaveLength(1)
        expect(signatures[0]).not.toContain("p_transaction_write")
      }),
    // One posting function, for new and existing transactions, refusing short of funds and past
    // 2^53 - 1 without writing; and issuing_post_transfers posting each in order.
    after: () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const signatures = yield* postTransferSignatures
        expect(signatures).toHaveLength(1)
        expect(signatures[0]).toContain("p_transaction_write text")

        const pending = transfer(ALICE, BOB, 1_000)
        expect(yield* postTransfer(postingArguments(pending, newTransaction))).toEqual({
          posted: true,
          available: "8000",
          refusal: null
        })
        // A second transfer attached to that transaction updates its status.
        const attached = { ...transfer(BOB, ALICE, 1_000), transactionId: pending.transactionId }
        const update: ReadonlyArray<Argument> = [
          ["p_transaction_write", "update", "text"],
          ["p_transaction_created_at", NOW, "timestamptz"]
        ]
        expect((yield* postTransfer(postingArguments(attached, update))).posted).toBe(true)
        expect(yield* sql`SELECT count(*)::integer AS n FROM issuing_transfers WHERE transaction_id = ${pending.transactionId}`).toEqual([
          { n: 2 }
        ])

        const rows = yield* ledgerRowCounts
        expect(yield* postTransfer(postingArguments(transfer(ALICE, BOB, 1_000_000), newTransaction))).toEqual({
          posted: false,
          available: "8000",
          refusal: "insufficient_funds"
        })
        // The vault skips the funds check; its debits reach 2^53 - 1, and one more is refused.
        expect((yield* postTransfer(postingArguments(transfer(VAULT, SINK, MAX_SAFE, { checkFunds: false }), newTransaction))).posted).toBe(
          true
        )
        const afterVault = yield* ledgerRowCounts
        expect(afterVault).toBeGreaterThan(rows)
        expect(yield* postTransfer(postingArguments(transfer(VAULT, ALICE, 1, { checkFunds: false }), newTransaction))).toEqual({
          posted: false,
          available: null,
          refusal: "balance_limit_exceeded"
        })
        expect(yield* ledgerRowCounts).toBe(afterVault)

        const batch = [transfer(ALICE, BOB, 3_000), transfer(ALICE, BOB, 6_000), transfer(ALICE, BOB, 5_000)]
        const results = yield* sql<{ ord: number; posted: boolean; refusal: string | null }>`
          SELECT ord, posted, refusal FROM issuing_post_transfers(
            ${JSON.stringify(batch.map((t) => postingJson(postingArguments(t, newTransaction))))}::jsonb, ${CHANNEL})`
        expect(results).toEqual([
          { ord: 1, posted: true, refusal: null },
          { ord: 2, posted: false, refusal: "insufficient_funds" },
          { ord: 3, posted: true, refusal: null }
        ])
        expect(yield* principal(ALICE)).toBe(0)
      })
  },
  "0050_card_display": {
    // Seeds a key of each role and an audit record from before the columns existed.
    before: () =>
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        Effect.all([
          ...(["admin", "developer", "viewer"] as const).map(
            (role) => sql`INSERT INTO issuing_api_keys (id, organization_id, name, role, pan_reveal, secret_hash, created_at)
                          VALUES (${`key_${role}`}, 'org_1', ${role}, ${role}, false, ${`hash_${role}`}, ${NOW})`
          ),
          sql`INSERT INTO issuing_card_audit_records (id, program_id, api_key_id, card_id, action, request_id, created_at)
              VALUES ('audit_1', ${PROGRAM}, 'key_admin', NULL, 'search_by_pan', 'req_1', ${NOW})`
        ])
      ),
    // Existing admin and developer keys may display cards, viewers may not; old records have no IP.
    after: () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        expect(yield* sql`SELECT role, card_display FROM issuing_api_keys ORDER BY role`).toEqual([
          { role: "admin", card_display: true },
          { role: "developer", card_display: true },
          { role: "viewer", card_display: false }
        ])
        expect(yield* sql`SELECT client_ip FROM issuing_card_audit_records`).toEqual([{ client_ip: null }])
      })
  },
  "0060_changes": {
    // The change feed's one version row, at 0; no second row.
    after: () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        expect(yield* sql`SELECT id, version::integer AS version FROM issuing_changes`).toEqual([{ id: 1, version: 0 }])
        expect((yield* failureOf(sql`INSERT INTO issuing_changes (id, version) VALUES (2, 0)`)).code).toBe("23514")
      })
  },
  "0070_oauth": "schema only",
  "0080_card_authorization_posting": {
    before: () =>
      Effect.map(postTransferSignatures, (signatures) => {
        expect(signatures).toHaveLength(1)
        expect(signatures[0]).toContain("p_transaction_write text")
        expect(signatures[0]).not.toContain("p_active_card")
      }),
    // A card authorization posts only while its card is ACTIVE, and writes nothing otherwise.
    after: () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        expect(yield* postTransferSignatures).toEqual([expect.stringContaining("p_active_card text")])
        for (const state of ["ACTIVE", "FROZEN", "CLOSED"]) {
          yield* sql`INSERT INTO issuing_cards (id, program_id, wallet_id, financial_account_id, type, state, last_four, exp_month, exp_year,
                       pan_sealed, cvv_sealed, pan_fingerprint, vault_key_id, allowed_mcc_codes, blocked_mcc_codes, created_at, updated_at)
                     VALUES (${`card_${state}`}, ${PROGRAM}, 'wallet_bob', ${BOB}, 'VIRTUAL', ${state}, '4242', 1, 2030,
                       'sealed', 'sealed', ${`fp_${state}`}, 'key', '[]', '[]', ${NOW}, ${NOW})`
        }
        const withCard = (card: string | null): ReadonlyArray<Argument> => [...newTransaction, ["p_active_card", card, "text"]]
        const rows = yield* ledgerRowCounts
        for (const [card, refusal] of [
          ["card_FROZEN", "card_frozen"],
          ["card_CLOSED", "card_closed"],
          ["card_unknown", "card_closed"]
        ] as const) {
          expect(yield* postTransfer(postingArguments(transfer(BOB, SETTLEMENT, 100), withCard(card)))).toEqual({
            posted: false,
            available: null,
            refusal
          })
        }
        expect(yield* ledgerRowCounts).toBe(rows)
        expect((yield* postTransfer(postingArguments(transfer(BOB, SETTLEMENT, 100), withCard("card_ACTIVE")))).posted).toBe(true)
        expect((yield* postTransfer(postingArguments(transfer(BOB, SETTLEMENT, 100), withCard(null)))).posted).toBe(true)
        // issuing_post_transfers passes each posting's active_card.
        const batch = [
          postingJson(postingArguments(transfer(BOB, SETTLEMENT, 100), withCard("card_FROZEN"))),
          postingJson(postingArguments(transfer(BOB, SETTLEMENT, 100), withCard("card_ACTIVE")))
        ]
        expect(yield* sql`SELECT ord, posted, refusal FROM issuing_post_transfers(${JSON.stringify(batch)}::jsonb, ${CHANNEL})`).toEqual([
          { ord: 1, posted: false, refusal: "card_frozen" },
          { ord: 2, posted: true, refusal: null }
        ])
      })
  },
  "0090_batch_posting": {
    // A batch's rows in one call, balance deltas summed; the fan-out of a lone event and of a
    // batch are the same function.
    after: () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const bob = yield* principal(BOB)
        const batch = [transfer(BOB, ALICE, 40, { events: 1 }), transfer(BOB, ALICE, 60, { events: 2 })]
        expect(yield* sql`SELECT issuing_write_postings(${JSON.stringify(rowsOf(batch))}::jsonb, ${CHANNEL}) AS n`).toEqual([{ n: 3 }])
        expect(yield* principal(BOB)).toBe(bob - 100)
        expect(
          yield* sql`SELECT count(*)::integer AS n FROM issuing_webhook_deliveries
                     WHERE event_id IN ${sql.in(batch.flatMap((t) => t.eventIds))} AND subscription_id = 'whs_on'`
        ).toEqual([{ n: 3 }])
        yield* sql`INSERT INTO issuing_events (id, program_id, type, created_at, data) VALUES ('evt_lone', ${PROGRAM}, 'transfer.created', ${NOW}, '{}')`
        expect(yield* sql`SELECT issuing_webhook_fan_out('evt_lone', ${PROGRAM}, 'transfer.created', ${NOW}, ${CHANNEL}) AS n`).toEqual([
          { n: 1 }
        ])
      })
  },
  "0100_decided_batch_posting": {
    // Writes a batch decided outside the locks when the balances still agree; raises IB409 and
    // writes nothing when they moved.
    after: () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const alice = yield* principal(ALICE)
        const decided = (ts: ReadonlyArray<Transfer>, posted: ReadonlyArray<boolean>) =>
          ts.map((t, i) => ({
            source: t.source,
            amount: t.amount,
            check_funds: t.checkFunds,
            posted: posted[i],
            refusal: posted[i] ? null : "insufficient_funds",
            deltas: entriesOf(t).map((e) => ({ account: e.account, book: e.book, debits: e.debits, credits: e.credits }))
          }))
        const postDecided = (ts: ReadonlyArray<Transfer>, posted: ReadonlyArray<boolean>) => {
          const { balances, ...rows } = rowsOf(ts.filter((_, i) => posted[i]))
          return sql<{ available: ReadonlyArray<string> }>`SELECT issuing_post_decided(${JSON.stringify(rows)}::jsonb,
            ${JSON.stringify(decided(ts, posted))}::jsonb, ${JSON.stringify(balances)}::jsonb, ${CHANNEL}) AS available`
        }
        const fits = [transfer(ALICE, BOB, 30), transfer(ALICE, BOB, alice), transfer(ALICE, BOB, 20)]
        expect(yield* postDecided(fits, [true, false, true])).toEqual([
          { available: [String(alice), String(alice - 30), String(alice - 30)] }
        ])
        expect(yield* principal(ALICE)).toBe(alice - 50)
        // Decided over totals that no longer hold: the whole statement is undone.
        const rows = yield* ledgerRowCounts
        expect((yield* failureOf(postDecided([transfer(ALICE, BOB, alice)], [true]))).code).toBe("IB409")
        expect(yield* ledgerRowCounts).toBe(rows)
        expect(yield* principal(ALICE)).toBe(alice - 50)
      })
  },
  "0110_wake_after_commit": {
    // With a NULL channel the fan-out marks its transaction instead of notifying; with a channel
    // (a node of the previous version) it still notifies.
    after: ({ url }) =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`INSERT INTO issuing_events (id, program_id, type, created_at, data) VALUES ('evt_marked', ${PROGRAM}, 'transfer.created', ${NOW}, '{}'), ('evt_notified', ${PROGRAM}, 'transfer.created', ${NOW}, '{}')`
        const marked = yield* sql.withTransaction(
          sql`SELECT issuing_webhook_fan_out('evt_marked', ${PROGRAM}, 'transfer.created', ${NOW}, NULL) AS n,
                     current_setting('issuing.deliveries_queued', true) AS queued`
        )
        expect(marked).toEqual([{ n: 1, queued: "yes" }])
        const listener = new pg.Client({ connectionString: url })
        yield* Effect.acquireRelease(
          Effect.promise(() => listener.connect()),
          () => Effect.promise(() => listener.end())
        )
        yield* Effect.promise(() => listener.query(`LISTEN ${CHANNEL}`))
        const notified = new Promise<string | undefined>((resolve) => listener.once("notification", (message) => resolve(message.payload)))
        yield* sql`SELECT issuing_webhook_fan_out('evt_notified', ${PROGRAM}, 'transfer.created', ${NOW}, ${CHANNEL})`
        expect(yield* Effect.promise(() => notified).pipe(Effect.timeout("5 seconds"))).toBe("due")
      }).pipe(Effect.scoped)
  },
  "0120_inbound_funding": {
    // A second, later admin key of org_1 beside its seeded first one, and another organization's admin key.
    before: () =>
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        Effect.all([
          sql`INSERT INTO issuing_api_keys (id, organization_id, name, role, pan_reveal, secret_hash, created_at)
              VALUES ('key_admin_later', 'org_1', 'later', 'admin', false, 'hash_admin_later', '2026-02-01T00:00:00.000Z')`,
          sql`INSERT INTO issuing_organizations (id, name, created_at) VALUES ('org_2', 'Other', ${NOW})`,
          sql`INSERT INTO issuing_api_keys (id, organization_id, name, role, pan_reveal, secret_hash, created_at)
              VALUES ('key_other_org', 'org_2', 'other', 'admin', false, 'hash_other_org', ${NOW})`
        ])
      ),
    // Only each organization's first admin key holds the right.
    after: () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        expect(yield* sql`SELECT id FROM issuing_api_keys WHERE inbound_funding ORDER BY id`).toEqual([
          { id: "key_admin" },
          { id: "key_other_org" }
        ])
      })
  },
  "0130_grant_consenting_key": "schema only",
  "0140_interactions_by_client": "schema only",
  "0200_list_indexes": "schema only",
  "0210_list_counts": {
    // Rows no earlier step wrote (an attempt, an audit record, a pending transfer), beside all the
    // transfers, events, cards and book transfers the earlier steps' postings left.
    before: () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`INSERT INTO issuing_webhook_attempts (id, program_id, event_id, subscription_id, status, response_code, response_body,
                     attempted_at, created_at, updated_at)
                   VALUES ('att_1', ${PROGRAM}, 'evt_marked', 'whs_on', 'failed', 500, '', ${NOW}, ${NOW}, ${NOW})`
        yield* sql`INSERT INTO issuing_card_audit_records (id, program_id, api_key_id, card_id, action, request_id, created_at)
                   VALUES ('audit_counted', ${PROGRAM}, NULL, 'card_ACTIVE', 'reveal', 'req_1', ${NOW})`
        const pending = transfer(ALICE, BOB, 10)
        expect((yield* postTransfer(postingArguments(pending, [...newTransaction, ["p_active_card", null, "text"]]))).posted).toBe(true)
        yield* sql`UPDATE issuing_transfers SET status = 'PENDING' WHERE id = ${pending.transferId}`
      }),
    // The backfill equals a count of the rows; then the triggers keep it through the posting
    // functions (a refused posting counts nothing), a settle, a card's state and a delete.
    after: () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const counts = yield* maintainedListCounts
        expect(counts).toEqual(yield* expectedListCounts)
        const all = (list: string) => counts.find((c) => c.list === list && c.key.replaceAll("|", "") === "")?.n
        expect(all("transfers")).toBe(yield* count("SELECT count(*) AS n FROM issuing_transfers"))
        expect(all("transfers")).toBeGreaterThan(10)
        expect(all("webhook_attempts")).toBe(1)
        const withCard: ReadonlyArray<Argument> = [...newTransaction, ["p_active_card", null, "text"]]
        expect((yield* postTransfer(postingArguments(transfer(BOB, ALICE, 5, { events: 1 }), withCard))).posted).toBe(true)
        const batch = [
          postingJson(postingArguments(transfer(BOB, ALICE, 5, { events: 1 }), withCard)),
          postingJson(postingArguments(transfer(ALICE, BOB, 10 ** 12), withCard))
        ]
        expect(yield* sql`SELECT ord, posted FROM issuing_post_transfers(${JSON.stringify(batch)}::jsonb, ${CHANNEL})`).toEqual([
          { ord: 1, posted: true },
          { ord: 2, posted: false }
        ])
        yield* sql`UPDATE issuing_transfers SET status = 'SETTLED' WHERE status = 'PENDING'`
        yield* sql`UPDATE issuing_cards SET state = 'FROZEN' WHERE id = 'card_ACTIVE'`
        yield* sql`DELETE FROM issuing_webhook_attempts WHERE id = 'att_1'`
        expect(yield* maintainedListCounts).toEqual(yield* expectedListCounts)
        // A write counts on its connection's shard (pg_backend_pid() % 16; shard 0 for one in 16 connections).
        const [written] = yield* sql.withTransaction(
          Effect.zipRight(
            sql`UPDATE issuing_cards SET state = 'ACTIVE' WHERE id = 'card_ACTIVE'`,
            sql<{ n: string }>`SELECT count(*) AS n FROM issuing_list_counts
                               WHERE list = 'cards' AND key = '|=ACTIVE' AND shard = pg_backend_pid() % 16`
          )
        )
        expect(Number(written!.n)).toBe(1)
        expect(yield* maintainedListCounts).toEqual(yield* expectedListCounts)
      })
  },
  "0220_lean_post_transfer": {
    // The same function in fewer statements: every result of 0080's, the rows, events and
    // deliveries it wrote, the wake marking with a NULL channel, and nothing written on a refusal.
    after: () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        expect(yield* postTransferSignatures).toEqual([expect.stringContaining("p_active_card text")])
        for (const account of [CAROL, DAVE]) {
          yield* sql`INSERT INTO issuing_financial_accounts (id, program_id, wallet_id, kind, currency, created_at)
                     VALUES (${account}, ${PROGRAM}, ${`wallet_${account}`}, 'wallet', 'USD', ${NOW})`
        }
        const current = (card: string | null, write: "insert" | "update" = "insert"): ReadonlyArray<Argument> => [
          ["p_transaction_write", write, "text"],
          ["p_transaction_created_at", NOW, "timestamptz"],
          ["p_active_card", card, "text"]
        ]
        const withoutChannel = (args: ReadonlyArray<Argument>) =>
          args.map((arg): Argument => (arg[0] === "p_channel" ? ["p_channel", null, "text"] : arg))
        // Funding without the funds check, two events, a NULL channel: balance rows made, events
        // and their deliveries written, the transaction marked for the wake after commit.
        const funding = transfer(SETTLEMENT, CAROL, 1_000, { checkFunds: false, events: 2 })
        const [funded, queued] = yield* sql.withTransaction(
          Effect.all([
            postTransfer(withoutChannel(postingArguments(funding, current(null)))),
            sql<{ queued: string | null }>`SELECT current_setting('issuing.deliveries_queued', true) AS queued`
          ])
        )
        expect(funded).toEqual({ posted: true, available: null, refusal: null })
        expect(queued).toEqual([{ queued: "yes" }])
        expect(yield* sql`SELECT id, type, data FROM issuing_events WHERE id IN ${sql.in(funding.eventIds)} ORDER BY id`).toEqual(
          funding.eventIds.map((id) => ({ id, type: "transfer.created", data: "{}" }))
        )
        expect(
          yield* sql`SELECT event_id FROM issuing_webhook_deliveries WHERE event_id IN ${sql.in(funding.eventIds)} ORDER BY event_id`
        ).toEqual(funding.eventIds.map((id) => ({ event_id: id })))
        expect(
          yield* sql`SELECT position, financial_account_id, book, entry_type, amount_minor::integer AS amount FROM issuing_book_entries
                     WHERE book_transfer_id = ${funding.bookTransferId} ORDER BY position`
        ).toEqual(
          entriesOf(funding).map((e, position) => ({
            position,
            financial_account_id: e.account,
            book: e.book,
            entry_type: e.type,
            amount: 1_000
          }))
        )
        expect([yield* principal(CAROL), yield* principal(DAVE)]).toEqual([1_000, 0])
        // With the funds check: the available principal read under the locks.
        const first = transfer(CAROL, DAVE, 400)
        expect(yield* postTransfer(postingArguments(first, current(null)))).toEqual({ posted: true, available: "1000", refusal: null })
        // A transfer attached to that transaction updates its status instead of inserting it.
        const attached = { ...transfer(DAVE, CAROL, 100), transactionId: first.transactionId }
        expect((yield* postTransfer(postingArguments(attached, current(null, "update")))).posted).toBe(true)
        expect(
          yield* sql`SELECT (SELECT count(*)::integer FROM issuing_transactions WHERE id = ${first.transactionId}) AS transactions,
                            (SELECT count(*)::integer FROM issuing_transfers WHERE transaction_id = ${first.transactionId}) AS transfers`
        ).toEqual([{ transactions: 1, transfers: 2 }])
        // Refusals write nothing: short of funds, past 2^53 - 1 (the vault's debits are there), a frozen card.
        const rows = yield* ledgerRowCounts
        const events = yield* count("SELECT count(*) AS n FROM issuing_events")
        expect(yield* postTransfer(postingArguments(transfer(CAROL, DAVE, 701, { events: 1 }), current(null)))).toEqual({
          posted: false,
          available: "700",
          refusal: "insufficient_funds"
        })
        expect(yield* postTransfer(postingArguments(transfer(VAULT, CAROL, 1, { checkFunds: false, events: 1 }), current(null)))).toEqual({
          posted: false,
          available: null,
          refusal: "balance_limit_exceeded"
        })
        expect(yield* postTransfer(postingArguments(transfer(CAROL, DAVE, 1, { events: 1 }), current("card_FROZEN")))).toEqual({
          posted: false,
          available: null,
          refusal: "card_frozen"
        })
        expect([yield* ledgerRowCounts, yield* count("SELECT count(*) AS n FROM issuing_events")]).toEqual([rows, events])
        expect([yield* principal(CAROL), yield* principal(DAVE)]).toEqual([700, 300])
      })
  },
  "0230_card_holds": {
    // A card authorization of before, approved and posted at once.
    before: () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`INSERT INTO issuing_transactions (id, program_id, status, amount_minor, currency, card_id, mcc, created_at, updated_at)
                   VALUES ('txn_card_old', ${PROGRAM}, 'APPROVED', 70, 'USD', 'card_ACTIVE', '5411', ${NOW}, ${NOW})`
        yield* sql`INSERT INTO issuing_transfers (id, program_id, transaction_id, payment_rail, amount_minor, currency,
                     from_financial_account_id, to_financial_account_id, status, created_at, updated_at)
                   VALUES ('tr_card_old', ${PROGRAM}, 'txn_card_old', 'card', 70, 'USD', ${CAROL}, ${SETTLEMENT}, 'SETTLED', ${NOW}, ${NOW})`
        yield* sql`INSERT INTO issuing_book_transfers (id, program_id, transfer_id, transaction_id, amount_minor, currency, posted_at)
                   VALUES ('bt_card_old', ${PROGRAM}, 'tr_card_old', 'txn_card_old', 70, 'USD', ${NOW})`
        yield* sql`INSERT INTO issuing_book_entries (book_transfer_id, position, financial_account_id, book, entry_type, amount_minor, currency)
                   VALUES ('bt_card_old', 0, ${CAROL}, 'principal', 'DEBIT', 70, 'USD'), ('bt_card_old', 1, ${CAROL}, 'cash', 'CREDIT', 70, 'USD'),
                          ('bt_card_old', 2, ${SETTLEMENT}, 'cash', 'DEBIT', 70, 'USD'),
                          ('bt_card_old', 3, ${SETTLEMENT}, 'principal', 'CREDIT', 70, 'USD')`
        yield* sql`UPDATE issuing_balances SET debits_minor = debits_minor + 70 WHERE financial_account_id = ${CAROL} AND book = 'principal'`
        yield* sql`UPDATE issuing_balances SET credits_minor = credits_minor + 70 WHERE financial_account_id = ${CAROL} AND book = 'cash'`
        yield* sql`UPDATE issuing_balances SET debits_minor = debits_minor + 70 WHERE financial_account_id = ${SETTLEMENT} AND book = 'cash'`
        yield* sql`UPDATE issuing_balances SET credits_minor = credits_minor + 70
                   WHERE financial_account_id = ${SETTLEMENT} AND book = 'principal'`
      }),
    // The old authorization is a single-message one now; the posting function takes the pending
    // deltas; a hold through issuing_post_card_message makes funds unavailable without entries,
    // writes the balance.updated of the account as it then stands, and a hold beyond what is
    // available writes nothing.
    after: () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        expect(
          yield* sql`SELECT status, authorized_minor::integer AS authorized, settled_minor::integer AS settled, financial_account_id,
                            card_events::jsonb->0->>'id' AS event_id, card_events::jsonb->0->>'type' AS event_type
                     FROM issuing_transactions WHERE id = 'txn_card_old'`
        ).toEqual([
          {
            status: "SETTLED",
            authorized: 70,
            settled: 70,
            financial_account_id: CAROL,
            event_id: "tr_card_old",
            event_type: "FINANCIAL_AUTHORIZATION"
          }
        ])
        expect(yield* maintainedListCounts).toEqual(yield* expectedListCounts)
        expect(yield* postTransferSignatures).toEqual([expect.stringContaining("p_delta_pending bigint[]")])
        const available = yield* principal(CAROL)
        const hold = (id: string, amount: number, balanceEvent: string | null) =>
          sql<{ posted: boolean; available: string | null; refusal: string | null }>`SELECT posted, available, refusal
            FROM issuing_post_card_message(${JSON.stringify(cardTransaction(id, amount, "hold"))}::jsonb, 'insert', ${CAROL}, ${amount}, ${amount}, NULL, ${NOW},
            ARRAY[${`evt_${id}`}]::text[], ARRAY['transaction.updated']::text[], ARRAY['{}']::text[], ${balanceEvent}, ${CHANNEL})`
        expect(yield* hold("txn_hold", 30, "evt_balance_hold")).toEqual([{ posted: true, available: String(available), refusal: null }])
        expect(
          yield* sql`SELECT pending_minor::integer AS pending FROM issuing_balances WHERE financial_account_id = ${CAROL} AND book = 'principal'`
        ).toEqual([{ pending: 30 }])
        const data = (yield* sql<{ data: string }>`SELECT data FROM issuing_events WHERE id = 'evt_balance_hold'`)[0]!.data
        expect(JSON.parse(data)).toMatchObject({
          id: CAROL,
          object: "financial_account",
          balance: { amount: available, currency: "USD" },
          pending_balance: { amount: 30, currency: "USD" },
          available_balance: { amount: available - 30, currency: "USD" }
        })
        const rows = yield* ledgerRowCounts
        expect(yield* hold("txn_hold_2", available - 29, null)).toEqual([
          { posted: false, available: String(available - 30), refusal: "insufficient_funds" }
        ])
        expect(yield* ledgerRowCounts).toEqual(rows)
        expect(yield* maintainedListCounts).toEqual(yield* expectedListCounts)
      })
  },
  "0240_authorization_endpoints": "schema only",
  "0250_rate_buckets": "schema only",
  "0260_idempotency_claim_token": "schema only",
  "0270_metadata": {
    // Rows of each table that gains the column, written before it existed.
    before: () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`INSERT INTO issuing_wallets (id, program_id, holder_name, holder_email, financial_account_id, created_at, updated_at)
                   VALUES ('wallet_fa_carol', ${PROGRAM}, 'Carol', NULL, ${CAROL}, ${NOW}, ${NOW})`
        for (const table of METADATA_TABLES) expect(yield* count(`SELECT count(*) AS n FROM ${table}`), table).toBeGreaterThan(0)
      }),
    // Every earlier row reads {}; each posting function writes the transfer's metadata (an
    // absent one as {}), and a refused posting still writes nothing.
    after: () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        for (const table of METADATA_TABLES) {
          expect(yield* count(`SELECT count(*) AS n FROM ${table} WHERE metadata <> '{}'`), table).toBe(0)
        }
        expect(yield* postTransferSignatures).toEqual([expect.stringMatching(/p_balance_event_accounts text\[\], p_metadata text$/)])
        const current = (metadata: string): ReadonlyArray<Argument> => [
          ...newTransaction,
          ["p_active_card", null, "text"],
          ["p_delta_pending", [0, 0, 0, 0], "bigint[]"],
          ["p_balance_event_ids", [], "text[]"],
          ["p_balance_event_accounts", [], "text[]"],
          ["p_metadata", metadata, "text"]
        ]
        const metadataOf = (t: Transfer) =>
          Effect.map(sql<{ metadata: string }>`SELECT metadata FROM issuing_transfers WHERE id = ${t.transferId}`, (rows) =>
            rows.map((row) => row.metadata)
          )
        const one = transfer(CAROL, DAVE, 1)
        expect((yield* postTransfer(postingArguments(one, current('{"order":"o_1"}')))).posted).toBe(true)
        expect(yield* metadataOf(one)).toEqual(['{"order":"o_1"}'])
        const [withMetadata, without] = [transfer(CAROL, DAVE, 1), transfer(DAVE, CAROL, 1)]
        const run = [
          postingJson(postingArguments(withMetadata, current('{"k":"v"}'))),
          postingJson(
            postingArguments(
              without,
              current("{}").filter(([name]) => name !== "p_metadata")
            )
          )
        ]
        expect(yield* sql`SELECT ord, posted FROM issuing_post_transfers(${JSON.stringify(run)}::jsonb, ${CHANNEL})`).toEqual([
          { ord: 1, posted: true },
          { ord: 2, posted: true }
        ])
        expect([yield* metadataOf(withMetadata), yield* metadataOf(without)]).toEqual([['{"k":"v"}'], ["{}"]])
        const [batched, plain] = [transfer(CAROL, DAVE, 1), transfer(DAVE, CAROL, 1)]
        const rows = rowsOf([batched, plain])
        const transfers = rows.transfers.map((row, i) => (i === 0 ? { ...row, metadata: '{"batch":"b_1"}' } : row))
        expect(yield* sql`SELECT issuing_write_postings(${JSON.stringify({ ...rows, transfers })}::jsonb, ${CHANNEL}) AS n`).toEqual([
          { n: 0 }
        ])
        expect([yield* metadataOf(batched), yield* metadataOf(plain)]).toEqual([['{"batch":"b_1"}'], ["{}"]])
        const before = yield* ledgerRowCounts
        expect((yield* postTransfer(postingArguments(transfer(CAROL, DAVE, 10 ** 12), current('{"k":"v"}')))).refusal).toBe(
          "insufficient_funds"
        )
        expect(yield* ledgerRowCounts).toEqual(before)
        expect(yield* maintainedListCounts).toEqual(yield* expectedListCounts)
      })
  },
  "0280_webhook_portal": "schema only",
  "0300_settlement_slots": {
    // The balances as every earlier step left them, the settlement account's among them.
    before: () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        balancesBeforeSlots = yield* sql`SELECT financial_account_id, book, currency, debits_minor, credits_minor, pending_minor,
                                                updated_at FROM issuing_balances ORDER BY financial_account_id, book`
        expect(balancesBeforeSlots.some((row: any) => row.financial_account_id === SETTLEMENT && row.credits_minor !== "0")).toBe(true)
      }),
    // Every row moved into slot 0 exactly; a posting adds into its backend's slot of the
    // settlement account and slot 0 of a wallet's; a batch adds into slot 0; balance.updated and
    // the decided batch read the sums.
    after: () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        expect(
          yield* sql`SELECT financial_account_id, book, currency, debits_minor, credits_minor, pending_minor, updated_at
                     FROM issuing_balances WHERE slot = 0 ORDER BY financial_account_id, book`
        ).toEqual(balancesBeforeSlots)
        expect(yield* count("SELECT count(*) AS n FROM issuing_balances WHERE slot <> 0")).toBe(0)
        const settlementSum = sql<{ credits: string; debits: string }>`SELECT sum(credits_minor)::text AS credits,
            sum(debits_minor)::text AS debits FROM issuing_balances WHERE financial_account_id = ${SETTLEMENT} AND book = 'principal'`
        const [start] = yield* settlementSum
        // Postings on two connections at once, each in its own transaction: each backend's slot.
        const funding = [transfer(SETTLEMENT, CAROL, 7, { checkFunds: false }), transfer(SETTLEMENT, DAVE, 11, { checkFunds: false })]
        const [pids] = yield* Effect.all([
          Effect.all(
            funding.map((t) =>
              sql.withTransaction(
                Effect.zipLeft(
                  Effect.map(sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`, (rows) => rows[0]!.pid),
                  postTransfer(postingArguments(t, ARGUMENTS_0270))
                )
              )
            ),
            { concurrency: 2 }
          )
        ])
        const slots = yield* sql<{ slot: number; debits_minor: string }>`SELECT slot, debits_minor FROM issuing_balances
          WHERE financial_account_id = ${SETTLEMENT} AND book = 'principal' AND slot <> 0 ORDER BY slot`
        const expected = new Map<number, number>()
        pids.forEach((pid, i) => {
          const slot = pid % 16
          if (slot !== 0) expected.set(slot, (expected.get(slot) ?? 0) + [7, 11][i]!)
        })
        expect(slots.map((row) => [row.slot, Number(row.debits_minor)])).toEqual([...expected].sort(([a], [b]) => a - b))
        expect(yield* count(`SELECT count(*) AS n FROM issuing_balances WHERE slot <> 0 AND financial_account_id <> '${SETTLEMENT}'`)).toBe(
          0
        )
        // A batch into slot 0; its balance.updated of a wallet from the summed row.
        const batched = transfer(SETTLEMENT, CAROL, 5, { checkFunds: false })
        const rows = rowsOf([batched])
        expect(yield* sql`SELECT issuing_write_postings(${JSON.stringify(rows)}::jsonb, ${CHANNEL}) AS n`).toEqual([{ n: 0 }])
        const [end] = yield* settlementSum
        expect(Number(end!.debits) - Number(start!.debits)).toBe(7 + 11 + 5)
        expect(end!.credits).toBe(start!.credits)
        // Refused over the sum: a wallet's funds (its one row) still checked.
        const before = yield* ledgerRowCounts
        expect((yield* postTransfer(postingArguments(transfer(CAROL, DAVE, 10 ** 12), ARGUMENTS_0270))).refusal).toBe("insufficient_funds")
        expect(yield* ledgerRowCounts).toEqual(before)
      })
  },
  "0310_entries_posted_at": {
    before: () =>
      Effect.gen(function* () {
        entriesBefore0310 = yield* count("SELECT count(*) AS n FROM issuing_book_entries")
        expect(entriesBefore0310).toBeGreaterThan(0)
      }),
    // Every entry written before carries its book transfer's posted_at; the posting function and the
    // batch write it; the by-account index is in the list's order; entries are still immutable.
    after: () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const mismatched = `SELECT count(*) AS n FROM issuing_book_entries e JOIN issuing_book_transfers bt ON bt.id = e.book_transfer_id
                            WHERE e.posted_at IS DISTINCT FROM bt.posted_at`
        expect(yield* count("SELECT count(*) AS n FROM issuing_book_entries")).toBe(entriesBefore0310)
        expect(yield* count(mismatched)).toBe(0)
        const single = transfer(SETTLEMENT, CAROL, 3, { checkFunds: false })
        expect((yield* postTransfer(postingArguments(single, ARGUMENTS_0270))).posted).toBe(true)
        const batched = transfer(SETTLEMENT, DAVE, 4, { checkFunds: false })
        yield* sql`SELECT issuing_write_postings(${JSON.stringify(rowsOf([batched]))}::jsonb, ${CHANNEL}) AS n`
        for (const t of [single, batched]) {
          expect(
            yield* count(`SELECT count(*) AS n FROM issuing_book_entries WHERE book_transfer_id = '${t.bookTransferId}'
                            AND posted_at = '${NOW}'::timestamptz`)
          ).toBe(4)
        }
        expect(yield* count("SELECT count(*) AS n FROM issuing_book_entries")).toBe(entriesBefore0310 + 8)
        expect(yield* count(mismatched)).toBe(0)
        const [index] = yield* sql<{
          definition: string
        }>`SELECT pg_get_indexdef('issuing_book_entries_by_account'::regclass) AS definition`
        expect(index!.definition).toContain("(financial_account_id, book, posted_at, book_transfer_id)")
        expect((yield* failureOf(sql`UPDATE issuing_book_entries SET posted_at = now()`)).message).toMatch(/immutable|append-only|refuse/i)
      })
  },
  "0320_posting_counts": {
    before: () =>
      Effect.gen(function* () {
        expect(yield* maintainedListCounts).toEqual(yield* expectedListCounts)
      }),
    // The posting function counts its own rows in one upsert (its lists' INSERT triggers skipping
    // them): a new transaction with a card, events and balance.updated; a joined transaction
    // settled (its UPDATE still counted by the trigger); a refusal (nothing); postings of
    // issuing_post_transfers; a batch and a plain INSERT after a posting in the same transaction,
    // counted by the triggers again. Every count equals a count of the rows, each key once.
    after: () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        expect(yield* maintainedListCounts).toEqual(yield* expectedListCounts)
        const replaced = (args: ReadonlyArray<Argument>, values: Record<string, unknown>) =>
          args.map((arg): Argument => (arg[0] in values ? [arg[0], values[arg[0]], arg[2]] : arg))
        const current = (write: "insert" | "update", balanceEvents: ReadonlyArray<[string, string]> = []): ReadonlyArray<Argument> => [
          ["p_transaction_write", write, "text"],
          ["p_transaction_created_at", NOW, "timestamptz"],
          ["p_active_card", null, "text"],
          ["p_delta_pending", [0, 0, 0, 0], "bigint[]"],
          ["p_balance_event_ids", balanceEvents.map(([id]) => id), "text[]"],
          ["p_balance_event_accounts", balanceEvents.map(([, account]) => account), "text[]"],
          ["p_metadata", "{}", "text"]
        ]
        const held = transfer(SETTLEMENT, CAROL, 8, { checkFunds: false, events: 2 })
        const heldArgs = replaced(postingArguments(held, current("insert", [[nextId("evt"), CAROL]])), {
          p_card_id: "card_ACTIVE",
          p_transaction_status: "PENDING",
          p_transfer_status: "PENDING",
          p_rail: "card"
        })
        expect((yield* postTransfer(heldArgs)).posted).toBe(true)
        expect(yield* maintainedListCounts).toEqual(yield* expectedListCounts)
        // The transaction joined and settled: its count moves from PENDING to SETTLED.
        const joined = { ...transfer(CAROL, SETTLEMENT, 3, { events: 1 }), transactionId: held.transactionId }
        expect((yield* postTransfer(replaced(postingArguments(joined, current("update")), { p_card_id: "card_ACTIVE" }))).posted).toBe(true)
        expect(yield* maintainedListCounts).toEqual(yield* expectedListCounts)
        const before = yield* ledgerRowCounts
        const countsBefore = yield* maintainedListCounts
        expect((yield* postTransfer(postingArguments(transfer(CAROL, DAVE, 10 ** 12, { events: 1 }), current("insert")))).refusal).toBe(
          "insufficient_funds"
        )
        expect(yield* ledgerRowCounts).toEqual(before)
        expect(yield* maintainedListCounts).toEqual(countsBefore)
        const batch = [
          postingJson(postingArguments(transfer(CAROL, DAVE, 1, { events: 1 }), current("insert", [[nextId("evt"), DAVE]]))),
          postingJson(postingArguments(transfer(DAVE, CAROL, 10 ** 12), current("insert"))),
          postingJson(postingArguments(transfer(SETTLEMENT, DAVE, 2, { checkFunds: false }), current("insert")))
        ]
        expect(yield* sql`SELECT ord, posted FROM issuing_post_transfers(${JSON.stringify(batch)}::jsonb, ${CHANNEL})`).toEqual([
          { ord: 1, posted: true },
          { ord: 2, posted: false },
          { ord: 3, posted: true }
        ])
        expect(yield* maintainedListCounts).toEqual(yield* expectedListCounts)
        const [setting] = yield* sql.withTransaction(
          Effect.gen(function* () {
            yield* postTransfer(postingArguments(transfer(SETTLEMENT, CAROL, 4, { checkFunds: false, events: 1 }), current("insert")))
            yield* sql`SELECT issuing_write_postings(${JSON.stringify(rowsOf([transfer(SETTLEMENT, DAVE, 5, { checkFunds: false, events: 1 })]))}::jsonb, ${CHANNEL}) AS n`
            yield* sql`INSERT INTO issuing_events (id, program_id, type, created_at, data)
                       VALUES (${nextId("evt")}, ${PROGRAM}, 'card.updated', ${NOW}, '{}')`
            return yield* sql<{ counted: string | null }>`SELECT current_setting('issuing.posting_counted', true) AS counted`
          })
        )
        expect(setting!.counted ?? "").toBe("")
        expect(yield* maintainedListCounts).toEqual(yield* expectedListCounts)
      })
  },
  "0330_transfer_list_indexes": {
    // Built over the transfers already there, valid, on the columns the lists range over.
    after: () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const indexes = yield* sql<{ name: string; definition: string; valid: boolean }>`SELECT c.relname AS name,
            pg_get_indexdef(c.oid) AS definition, i.indisvalid AS valid
          FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
          WHERE c.relname IN ('issuing_transfers_by_from', 'issuing_transfers_by_to', 'issuing_transfers_by_rail') ORDER BY c.relname`
        expect(indexes.map((row) => [row.name, row.valid, row.definition.replace(/^.*USING btree /, "")])).toEqual([
          ["issuing_transfers_by_from", true, "(from_financial_account_id, created_at, id)"],
          ["issuing_transfers_by_rail", true, "(program_id, payment_rail, created_at, id)"],
          ["issuing_transfers_by_to", true, "(to_financial_account_id, created_at, id)"]
        ])
        expect(yield* count("SELECT count(*) AS n FROM issuing_transfers")).toBeGreaterThan(0)
      })
  },
  "0340_account_list_indexes": "schema only",
  "0360_account_entry_indexes": "schema only",
  "0370_free_count_shards": {
    before: () =>
      Effect.gen(function* () {
        expect(yield* maintainedListCounts).toEqual(yield* expectedListCounts)
      }),
    // A writer whose own shard another open transaction is counting into takes the next free one
    // instead of waiting for that transaction (without the migration it waits on the shared key
    // `` of the program's events and fails on its lock_timeout); a transaction keeps its shard; with
    // every shard's lock taken the backend's own shard is used. The counts stay exact.
    after: ({ url }) =>
      Effect.gen(function* () {
        /** A connection whose backend's own shard is `home` when given (pids are not ours to choose: connect until one has it). */
        const connect = (home?: number) =>
          Effect.acquireRelease(
            Effect.promise(async () => {
              for (let tries = 0; tries < 200; tries++) {
                const client = new pg.Client({ connectionString: url })
                await client.connect()
                const pid = (await client.query("SELECT pg_backend_pid() AS pid")).rows[0].pid as number
                if (home === undefined || pid % 16 === home) return { client, home: pid % 16 }
                await client.end()
              }
              throw new Error(`no backend with home shard ${home} in 200 connections`)
            }),
            ({ client }) => Effect.promise(() => client.end())
          )
        const query = (client: pg.Client, text: string, values: ReadonlyArray<unknown> = []) =>
          Effect.promise(() => client.query(text, [...values]))
        const insertEvent = (client: pg.Client, type: string) =>
          query(client, "INSERT INTO issuing_events (id, program_id, type, created_at, data) VALUES ($1, $2, $3, $4, '{}')", [
            nextId("evt"),
            PROGRAM,
            type,
            NOW
          ])
        const insertAttempt = (client: pg.Client, subscription: string) =>
          query(
            client,
            `INSERT INTO issuing_webhook_attempts (id, program_id, event_id, subscription_id, status, response_code, response_body,
               attempted_at, created_at, updated_at) VALUES ($1, $2, 'evt_marked', $3, 'SUCCESS', 200, '', $4, $4, $4)`,
            [nextId("att"), PROGRAM, subscription, NOW]
          )
        const shardsOf = (list: string, key: string) =>
          Effect.map(
            SqlClient.SqlClient,
            (sql) => sql<{ shard: number }>`SELECT shard FROM issuing_list_counts
                WHERE list = ${list} AND program_id = ${PROGRAM} AND key = ${key} ORDER BY shard`
          ).pipe(
            Effect.flatten,
            Effect.map((rows) => rows.map((row) => row.shard))
          )

        const holder = yield* connect()
        yield* query(holder.client, "BEGIN")
        yield* insertEvent(holder.client, "type_0370_held")
        yield* insertEvent(holder.client, "type_0370_held")
        yield* insertAttempt(holder.client, "whs_0370_held")
        const other = yield* connect(holder.home)
        yield* query(other.client, "SET lock_timeout = '5s'")
        yield* insertEvent(other.client, "type_0370_other")
        yield* insertAttempt(other.client, "whs_0370_other")
        const next = (holder.home + 1) % 16
        expect(yield* shardsOf("events", "=type_0370_other")).toEqual([next])
        expect(yield* shardsOf("webhook_attempts", "=whs_0370_other|")).toEqual([next])
        yield* query(holder.client, "COMMIT")
        expect(yield* shardsOf("events", "=type_0370_held")).toEqual([holder.home])
        expect(yield* shardsOf("webhook_attempts", "=whs_0370_held|")).toEqual([holder.home])

        // Every shard of the events taken by a session's advisory locks: the backend's own shard.
        yield* query(holder.client, "SELECT pg_advisory_lock(hashtext('issuing_list_counts.events'), s) FROM generate_series(0, 15) s")
        yield* insertEvent(other.client, "type_0370_crowded")
        expect(yield* shardsOf("events", "=type_0370_crowded")).toEqual([other.home])
        yield* query(holder.client, "SELECT pg_advisory_unlock_all()")

        expect(yield* maintainedListCounts).toEqual(yield* expectedListCounts)
      }).pipe(Effect.scoped)
  },
  "0380_card_spend": {
    // Card transactions of before (insertCardSpendFixture: two cards either side of a UTC midnight).
    before: () => insertCardSpendFixture(PROGRAM),
    // Backfilled: per card and UTC day, and all time; then every kind of write keeps it exact (the
    // triggers run at commit: a write and the sum are each their own transaction, or one holds several).
    after: () =>
      Effect.gen(function* () {
        yield* checkCardSpendFixture
        const sql = yield* SqlClient.SqlClient
        expect(
          yield* sql`SELECT tgname AS name, tgdeferrable AS deferrable, tginitdeferred AS deferred FROM pg_trigger
                     WHERE tgrelid = 'issuing_transactions'::regclass AND tgname LIKE 'issuing_card_spend_%' ORDER BY tgname`
        ).toEqual(["delete", "insert", "update"].map((name) => ({ name: `issuing_card_spend_${name}`, deferrable: true, deferred: true })))
        yield* cardSpendTriggerSteps(PROGRAM)
      })
  },
  "0390_book_entry_count_lookups": {
    // 0210's lookup is pulled up into an anti join over every entry of the table (the check below
    // that 0390 changed it is one that fails without it).
    before: () =>
      Effect.gen(function* () {
        expect(yield* maintainedListCounts).toEqual(yield* expectedListCounts)
        const plan = yield* bookEntryCountPlan
        expect(plan, plan).toMatch(/Anti Join .*Seq Scan on issuing_book_entries e/)
      }),
    // Only the plan changed: the subquery stays correlated (read by key, not a hash of every entry),
    // and a batch's multi-row insert of entries still counts each account's and book's book
    // transfers once.
    after: () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const [fn] = yield* sql<{ body: string }>`SELECT prosrc AS body FROM pg_proc WHERE proname = 'issuing_count_book_entries'`
        expect(fn!.body).toContain("OFFSET 0")
        const plan = yield* bookEntryCountPlan
        expect(plan, plan).not.toMatch(/Anti Join/)
        expect(plan, plan).toMatch(/SubPlan \d+ \| .*issuing_book_entries e/)
        const batch = [transfer(SETTLEMENT, CAROL, 3, { checkFunds: false }), transfer(SETTLEMENT, DAVE, 4, { checkFunds: false })]
        yield* sql`SELECT issuing_write_postings(${JSON.stringify(rowsOf(batch))}::jsonb, ${CHANNEL}) AS n`
        const ids = batch.map((t) => `'${t.bookTransferId}'`).join(", ")
        expect(yield* count(`SELECT count(*) AS n FROM issuing_book_entries WHERE book_transfer_id IN (${ids})`)).toBe(8)
        expect(yield* maintainedListCounts).toEqual(yield* expectedListCounts)
      })
  },
  "0400_list_combination_indexes": "schema only",
  "0410_card_and_attempt_list_indexes": "schema only",
  "0411_account_update_order": {
    // Balance rows of before: every account's, and settlement slots other than 0.
    before: () =>
      Effect.gen(function* () {
        expect(
          yield* count("SELECT count(DISTINCT financial_account_id) AS n FROM issuing_balances WHERE slot = 0")
        ).toBeGreaterThanOrEqual(4)
        expect(yield* count("SELECT count(*) AS n FROM issuing_balances WHERE slot <> 0")).toBeGreaterThan(0)
      }),
    // Every slot-0 row has its account's program (the slots a posting adds, outside the index, none);
    // the program's principal slot-0 rows are its accounts, each once, read through the new index
    // in updated_at order; a posting moves its two accounts to the front of that order.
    after: () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        expect(
          yield* count(`SELECT count(*) AS n FROM issuing_balances b JOIN issuing_financial_accounts a ON a.id = b.financial_account_id
                        WHERE b.slot = 0 AND b.program_id IS DISTINCT FROM a.program_id`)
        ).toBe(0)
        expect(yield* count("SELECT count(*) AS n FROM issuing_balances WHERE slot <> 0 AND program_id IS NOT NULL")).toBe(0)
        const byUpdate = sql<{ financial_account_id: string }>`SELECT financial_account_id FROM issuing_balances
                             WHERE program_id = ${PROGRAM} AND book = 'principal' AND slot = 0
                             ORDER BY updated_at DESC, financial_account_id DESC`
        const listed = (yield* byUpdate).map((row) => row.financial_account_id)
        const accounts = yield* sql<{ id: string }>`SELECT a.id FROM issuing_financial_accounts a
            WHERE a.program_id = ${PROGRAM} AND EXISTS (SELECT 1 FROM issuing_balances b WHERE b.financial_account_id = a.id) ORDER BY a.id`
        expect([...listed].sort()).toEqual(accounts.map((row) => row.id))
        // The table had HOT updates, so the new index is marked `indcheckxmin`: a snapshot whose
        // xmin predates the index's creation cannot use it. Other test databases on the same server
        // hold back the cluster's xmin while they run, so the plan is asked again until theirs end.
        const plan = yield* sql
          .withTransaction(
            Effect.gen(function* () {
              yield* sql`SET LOCAL enable_seqscan = off`
              yield* sql`SET LOCAL enable_sort = off`
              return yield* sql<{ "QUERY PLAN": string }>`EXPLAIN (COSTS OFF) SELECT financial_account_id FROM issuing_balances
                WHERE program_id = ${PROGRAM} AND book = 'principal' AND slot = 0 ORDER BY updated_at DESC, financial_account_id DESC`
            })
          )
          .pipe(
            Effect.map((rows) => rows.map((row) => row["QUERY PLAN"]).join(" | ")),
            Effect.flatMap((text) => (text.startsWith("Sort") ? Effect.fail(text) : Effect.succeed(text))),
            Effect.retry({ schedule: Schedule.spaced("200 millis"), times: 100 }),
            // Still a sort after 20 s: the expectation below says so with the plan.
            Effect.catchIf(
              (error): error is string => typeof error === "string",
              (text) => Effect.succeed(text)
            )
          )
        expect(plan).toMatch(/^Index (Only )?Scan Backward using issuing_balances_principal_by_update/)
        const later = rowsOf([transfer(SETTLEMENT, CAROL, 3, { checkFunds: false })])
        const moved = { ...later, balances: later.balances.map((row) => ({ ...row, updated_at: "2026-02-01T00:00:00.000Z" })) }
        yield* sql`SELECT issuing_write_postings(${JSON.stringify(moved)}::jsonb, ${CHANNEL}) AS n`
        expect((yield* byUpdate).map((row) => row.financial_account_id)).toEqual([
          SETTLEMENT,
          CAROL,
          ...listed.filter((id) => id !== SETTLEMENT && id !== CAROL)
        ])
      })
  },
  "0412_live_grants_index": "schema only",
  // A balance.updated row that says what later postings add to its account shows the account
  // before them, at its own time; one that does not (a batch's) shows it as the write leaves it.
  "0430_coalesced_balance_events": {
    before: () => Effect.void,
    after: () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const first = transfer(CAROL, DAVE, 2, { checkFunds: false })
        const second = transfer(CAROL, DAVE, 5, { checkFunds: false })
        const [early, late, batch] = [nextId("evt"), nextId("evt"), nextId("evt")]
        const at = (ms: number) => new Date(Date.parse(NOW) + ms).toISOString()
        const balanceEvents = [
          { id: early, program_id: PROGRAM, account: DAVE, created_at: at(1), later_debits: 0, later_credits: 5, later_pending: 0 },
          { id: late, program_id: PROGRAM, account: DAVE, created_at: at(2), later_debits: 0, later_credits: 0, later_pending: 0 },
          { id: batch, program_id: PROGRAM, account: CAROL, created_at: at(2) }
        ]
        yield* sql`SELECT issuing_write_postings(${JSON.stringify({ ...rowsOf([first, second]), balance_events: balanceEvents })}::jsonb, ${CHANNEL}) AS n`
        const shown = yield* sql<{
          id: string
          data: string
        }>`SELECT id, data FROM issuing_events WHERE id IN (${early}, ${late}, ${batch})`
        const dataOf = (id: string) => JSON.parse(shown.find((row) => row.id === id)!.data)
        const [dave, carol] = [yield* principal(DAVE), yield* principal(CAROL)]
        expect(dataOf(early)).toMatchObject({ id: DAVE, balance: { amount: dave - 5 }, updated_at: at(1) })
        expect(dataOf(late)).toMatchObject({ id: DAVE, balance: { amount: dave }, updated_at: at(2) })
        expect(dataOf(batch)).toMatchObject({ id: CAROL, balance: { amount: carol } })
      })
  },
  // A batch counts its own rows in one upsert: the counts it adds are exactly what the triggers
  // add for the same rows inserted by plain statements (which still count), and entries of a book
  // transfer written earlier are left to the triggers.
  "0440_leaner_postings": {
    before: () => Effect.void,
    after: () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const counts = sql<{ list: string; key: string; n: string }>`SELECT list, key, sum(n)::text AS n FROM issuing_list_counts
          WHERE program_id = ${PROGRAM} AND list IN ('transactions', 'transfers', 'book_transfers', 'events') GROUP BY list, key`
        /** What `write` adds to the program's counts, key by key. */
        const added = <E, R>(write: Effect.Effect<unknown, E, R>) =>
          Effect.gen(function* () {
            const before = new Map((yield* counts).map((row) => [`${row.list} ${row.key}`, Number(row.n)]))
            yield* write
            return Object.fromEntries(
              (yield* counts)
                .map((row) => [`${row.list} ${row.key}`, Number(row.n) - (before.get(`${row.list} ${row.key}`) ?? 0)] as const)
                .filter(([, n]) => n !== 0)
                .sort(([a], [b]) => (a < b ? -1 : 1))
            )
          })
        // Two transfers sharing an account, one with a card and one pending on another rail, events
        // of two types and balance.updated rows: the same shapes each time, fresh ids.
        const batchRows = () => {
          const rows = rowsOf([
            transfer(CAROL, DAVE, 1, { checkFunds: false, events: 2 }),
            transfer(DAVE, SETTLEMENT, 1, { checkFunds: false, events: 1 })
          ])
          return {
            ...rows,
            transactions: rows.transactions.map((t, i) => (i === 0 ? { ...t, card_id: "card_0440" } : { ...t, status: "PENDING" })),
            transfers: rows.transfers.map((t, i) => (i === 0 ? t : { ...t, payment_rail: "ach_same_day", status: "PENDING" })),
            events: rows.events.map((e, i) => (i === 0 ? { ...e, type: "transaction.updated" } : e)),
            balance_events: [CAROL, DAVE].map((account) => ({ id: nextId("evt"), program_id: PROGRAM, account, created_at: NOW }))
          }
        }
        const written = yield* added(sql`SELECT issuing_write_postings(${JSON.stringify(batchRows())}::jsonb, ${CHANNEL}) AS n`)
        const rows = batchRows()
        const triggered = yield* added(
          sql.withTransaction(
            Effect.gen(function* () {
              const json = (value: unknown) => JSON.stringify(value)
              yield* sql`INSERT INTO issuing_transactions (id, program_id, status, amount_minor, currency, card_id, created_at, updated_at)
                SELECT id, program_id, status, amount_minor, currency, card_id, created_at, updated_at
                FROM jsonb_populate_recordset(NULL::issuing_transactions, ${json(rows.transactions)}::jsonb)`
              yield* sql`INSERT INTO issuing_transfers (id, program_id, transaction_id, payment_rail, amount_minor, currency,
                  from_financial_account_id, to_financial_account_id, status, created_at, updated_at)
                SELECT id, program_id, transaction_id, payment_rail, amount_minor, currency, from_financial_account_id,
                  to_financial_account_id, status, created_at, created_at
                FROM jsonb_populate_recordset(NULL::issuing_transfers, ${json(rows.transfers)}::jsonb)`
              yield* sql`INSERT INTO issuing_book_transfers SELECT * FROM jsonb_populate_recordset(NULL::issuing_book_transfers, ${json(rows.book_transfers)}::jsonb)`
              yield* sql`INSERT INTO issuing_book_entries SELECT * FROM jsonb_populate_recordset(NULL::issuing_book_entries, ${json(rows.entries)}::jsonb)`
              yield* sql`INSERT INTO issuing_events SELECT * FROM jsonb_populate_recordset(NULL::issuing_events, ${json(rows.events)}::jsonb)`
              yield* sql`INSERT INTO issuing_events (id, program_id, type, created_at, data)
                SELECT id, program_id, 'balance.updated', created_at, '{}' FROM jsonb_populate_recordset(NULL::issuing_events, ${json(rows.balance_events)}::jsonb)`
              // The balances, which count nothing (the ledger's invariants hold after every step).
              yield* sql`SELECT issuing_write_postings(${json({ balances: rows.balances })}::jsonb, ${CHANNEL}) AS n`
            })
          )
        )
        expect(written).toEqual(triggered)
        expect(written).toMatchObject({ "transfers ||": 2, "transactions |=card_0440": 1, "events =balance.updated": 2 })
        // Entries of a book transfer an earlier call wrote: the triggers count them.
        const { balances, book_transfers, entries, transactions, transfers } = batchRows()
        const early = yield* added(
          sql`SELECT issuing_write_postings(${JSON.stringify({ transactions, transfers, book_transfers })}::jsonb, ${CHANNEL}) AS n`
        )
        const late = yield* added(sql`SELECT issuing_write_postings(${JSON.stringify({ entries, balances })}::jsonb, ${CHANNEL}) AS n`)
        const bookTransferCounts = (counted: Record<string, number>) =>
          Object.fromEntries(Object.entries(counted).filter(([key]) => key.startsWith("book_transfers ")))
        expect(late).toEqual({ ...bookTransferCounts(triggered), "book_transfers |": undefined })
        expect({ ...bookTransferCounts(early), ...late }).toEqual(bookTransferCounts(triggered))
        // An empty call writes nothing and counts nothing.
        expect(yield* added(sql`SELECT issuing_write_postings('{}'::jsonb, ${CHANNEL}) AS n`)).toEqual({})
      })
  },
  "0450_walks_as_ranges": "schema only",
  "0460_vacuum_as_tables_grow": "schema only",
  // A card message and its transfer in one call: a single-message approval posts both (the
  // transfer's rows locked first, its balance.updated after it), a refusal for funds writes
  // nothing, a hold without a transfer is as before, and a plain posting still adds into its
  // backend's slot of the settlement account.
  "0470_card_message_one_call": {
    after: () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const message = (id: string, amount: number, transfer: Transfer | null, balanceEvent: string | null) =>
          sql<PostingResult>`SELECT posted, available, refusal FROM issuing_post_card_message(${JSON.stringify(
            cardTransaction(id, amount, transfer === null ? "hold" : "settled")
          )}::jsonb, 'insert', ${CAROL}, ${transfer === null ? amount : 0}, ${amount}, NULL, ${NOW},
            ARRAY[${nextId("evt")}]::text[], ARRAY['transaction.updated']::text[], ARRAY['{}']::text[],
            ${transfer === null ? balanceEvent : null}, ${CHANNEL},
            ${
              transfer === null
                ? null
                : JSON.stringify(
                    postingJson(
                      postingArguments({ ...transfer, transactionId: id, checkFunds: false }, [
                        ["p_transaction_write", "none", "text"],
                        ["p_transaction_created_at", NOW, "timestamptz"],
                        ["p_active_card", null, "text"],
                        ["p_delta_pending", [0, 0, 0, 0], "bigint[]"],
                        ["p_balance_event_ids", balanceEvent === null ? [] : [balanceEvent], "text[]"],
                        ["p_balance_event_accounts", balanceEvent === null ? [] : [CAROL], "text[]"],
                        ["p_metadata", "{}", "text"]
                      ])
                    )
                  )
            }::jsonb)`
        const [carol, settlement] = [yield* principal(CAROL), yield* principal(SETTLEMENT)]
        const approval = transfer(CAROL, SETTLEMENT, 25)
        expect(yield* message("txn_0470_approved", 25, approval, "evt_0470_balance")).toEqual([
          { posted: true, available: String(carol - (yield* pendingOf(CAROL))), refusal: null }
        ])
        expect([yield* principal(CAROL), yield* principal(SETTLEMENT)]).toEqual([carol - 25, settlement + 25])
        expect(
          yield* sql`SELECT t.status, tr.from_financial_account_id AS source, tr.amount_minor::integer AS amount
                     FROM issuing_transactions t JOIN issuing_transfers tr ON tr.transaction_id = t.id WHERE t.id = 'txn_0470_approved'`
        ).toEqual([{ status: "SETTLED", source: CAROL, amount: 25 }])
        const data = (yield* sql<{ data: string }>`SELECT data FROM issuing_events WHERE id = 'evt_0470_balance'`)[0]!.data
        expect(JSON.parse(data)).toMatchObject({ id: CAROL, balance: { amount: carol - 25 } })
        // Refused for funds: nothing of the message or its transfer is written.
        const rows = yield* ledgerRowCounts
        const events = yield* count("SELECT count(*) AS n FROM issuing_events")
        const [refused] = yield* message("txn_0470_refused", 10 ** 12, transfer(CAROL, SETTLEMENT, 10 ** 12), null)
        expect(refused).toMatchObject({ posted: false, refusal: "insufficient_funds" })
        expect([yield* ledgerRowCounts, yield* count("SELECT count(*) AS n FROM issuing_events")]).toEqual([rows, events])
        // A hold moves no money: no transfer, the pending amount moved.
        const pending = yield* pendingOf(CAROL)
        expect((yield* message("txn_0470_hold", 5, null, null))[0]).toMatchObject({ posted: true, refusal: null })
        expect(yield* pendingOf(CAROL)).toBe(pending + 5)
        // A plain posting into the settlement account: this backend's slot, as before.
        const slots = Effect.map(
          sql<{ slot: number; credits: string }>`SELECT slot, credits_minor::text AS credits FROM issuing_balances
            WHERE financial_account_id = ${SETTLEMENT} AND book = 'principal'`,
          (rows) => new Map(rows.map((row) => [row.slot, Number(row.credits)]))
        )
        const before = yield* slots
        const [pid, posted] = yield* sql.withTransaction(
          Effect.all([
            Effect.map(sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`, (rows) => rows[0]!.pid),
            postTransfer(postingArguments(transfer(DAVE, SETTLEMENT, 3, { checkFunds: false }), ARGUMENTS_0270))
          ])
        )
        expect(posted.posted).toBe(true)
        const after = yield* slots
        expect([...after].filter(([slot, credits]) => credits !== (before.get(slot) ?? 0))).toEqual([
          [pid % 16, (before.get(pid % 16) ?? 0) + 3]
        ])
        expect(yield* maintainedListCounts).toEqual(yield* expectedListCounts)
      })
  },
  // Wallets are counted by tag too (key `=tag` beside ''): a tagged insert counts both, a re-tag
  // moves one from the old tag's key to the new one's, an update that keeps the tag moves nothing,
  // a delete takes it back; the counts stay what the rows call for. Every tag is cleared after.
  "0480_wallet_tags": {
    after: () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const tagged = Effect.map(
          sql<{ key: string; n: string }>`SELECT key, SUM(n)::text AS n FROM issuing_list_counts
            WHERE list = 'wallets' AND program_id = ${PROGRAM} AND key <> '' GROUP BY key HAVING SUM(n) <> 0 ORDER BY key`,
          (rows) => Object.fromEntries(rows.map((row) => [row.key, Number(row.n)]))
        )
        const all = yield* count(`SELECT count(*) AS n FROM issuing_wallets WHERE program_id = '${PROGRAM}'`)
        yield* sql`INSERT INTO issuing_financial_accounts (id, program_id, wallet_id, kind, currency, created_at)
                   VALUES ('fa_0480', ${PROGRAM}, 'wallet_0480', 'wallet', 'USD', ${NOW})`
        yield* sql`INSERT INTO issuing_wallets (id, program_id, holder_name, holder_email, financial_account_id, tag, created_at, updated_at)
                   VALUES ('wallet_0480', ${PROGRAM}, 'Erin', NULL, 'fa_0480', 'gold', ${NOW}, ${NOW})`
        yield* sql`UPDATE issuing_wallets SET tag = 'gold' WHERE id = 'wallet_fa_carol'`
        expect(yield* tagged).toEqual({ "=gold": 2 })
        yield* sql`UPDATE issuing_wallets SET tag = 'silver' WHERE id = 'wallet_0480'`
        expect(yield* tagged).toEqual({ "=gold": 1, "=silver": 1 })
        yield* sql`UPDATE issuing_wallets SET tag = tag, updated_at = ${NOW} WHERE tag IS NOT NULL`
        expect(yield* tagged).toEqual({ "=gold": 1, "=silver": 1 })
        expect(yield* maintainedListCounts).toEqual(yield* expectedListCounts)
        yield* sql`DELETE FROM issuing_wallets WHERE id = 'wallet_0480'`
        yield* sql`DELETE FROM issuing_financial_accounts WHERE id = 'fa_0480'`
        yield* sql`UPDATE issuing_wallets SET tag = NULL WHERE tag IS NOT NULL`
        expect(yield* tagged).toEqual({})
        expect(yield* count(`SELECT count(*) AS n FROM issuing_wallets WHERE program_id = '${PROGRAM}'`)).toBe(all)
        expect(yield* maintainedListCounts).toEqual(yield* expectedListCounts)
      })
  },
  // Events carry the tags of the wallets they concern, written with them by a trigger, and the
  // fan-out gives a tagged subscription only its tag's events. The posting's transaction.updated
  // of a transaction without a card is tagged from its transfer, written by the same statement.
  "0490_event_tags": {
    after: () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE issuing_wallets SET tag = 'cust_carol' WHERE id = 'wallet_fa_carol'`
        const subscribe = (id: string, tag: string | null) =>
          Effect.all([
            sql`INSERT INTO issuing_webhook_subscriptions (id, program_id, url, description, event_types, disabled, secret_sealed,
                  tag, created_at, updated_at)
                VALUES (${id}, ${PROGRAM}, 'https://example.com/hook', '', '["transfer.created","transaction.updated"]', false,
                  'sealed', ${tag}, ${NOW}, ${NOW})`,
            sql`INSERT INTO issuing_webhook_event_types (program_id, event_type, subscription_id)
                VALUES (${PROGRAM}, 'transfer.created', ${id}), (${PROGRAM}, 'transaction.updated', ${id})`
          ])
        yield* subscribe("sub_0490_carol", "cust_carol")
        yield* subscribe("sub_0490_other", "cust_other")
        const t = transfer(CAROL, SETTLEMENT, 4, { checkFunds: false, events: 2 })
        const events = {
          p_event_types: ["transfer.created", "transaction.updated"],
          p_event_data: [
            JSON.stringify({ id: t.transferId, from_financial_account_id: CAROL, to_financial_account_id: SETTLEMENT }),
            JSON.stringify({ id: t.transactionId, card_id: null })
          ]
        } as Record<string, unknown>
        const args = postingArguments(t, ARGUMENTS_0270).map(
          ([name, value, type]): Argument => [name, name in events ? events[name] : value, type]
        )
        expect((yield* postTransfer(args)).posted).toBe(true)
        const tagsOf = (id: string) =>
          Effect.map(sql<{ tag: string }>`SELECT tag FROM issuing_event_tags WHERE event_id = ${id} ORDER BY tag`, (rows) =>
            rows.map((row) => row.tag)
          )
        expect(yield* tagsOf(t.eventIds[0]!)).toEqual(["cust_carol"])
        expect(yield* tagsOf(t.eventIds[1]!)).toEqual(["cust_carol"])
        const queuedFor = (subscription: string) =>
          Effect.map(
            sql<{ event_id: string }>`SELECT event_id FROM issuing_webhook_deliveries
              WHERE subscription_id = ${subscription} ORDER BY event_id`,
            (rows) => rows.map((row) => row.event_id)
          )
        expect(yield* queuedFor("sub_0490_carol")).toEqual([...t.eventIds].sort())
        expect(yield* queuedFor("sub_0490_other")).toEqual([])
        // An untagged event (a settlement-only posting) reaches untagged subscriptions only.
        const plain = transfer(DAVE, SETTLEMENT, 1, { checkFunds: false, events: 1 })
        expect((yield* postTransfer(postingArguments(plain, ARGUMENTS_0270))).posted).toBe(true)
        expect(yield* tagsOf(plain.eventIds[0]!)).toEqual([])
        expect(yield* queuedFor("sub_0490_carol")).toEqual([...t.eventIds].sort())
        yield* sql`DELETE FROM issuing_webhook_deliveries WHERE subscription_id IN ('sub_0490_carol', 'sub_0490_other')`
        yield* sql`DELETE FROM issuing_webhook_event_types WHERE subscription_id IN ('sub_0490_carol', 'sub_0490_other')`
        yield* sql`DELETE FROM issuing_webhook_subscriptions WHERE id IN ('sub_0490_carol', 'sub_0490_other')`
        yield* sql`UPDATE issuing_wallets SET tag = NULL WHERE id = 'wallet_fa_carol'`
        expect(yield* ledgerViolations).toEqual([])
      })
  },
  "0500_network_right": {
    // The keys 0120 seeded are still there: only each organization's first admin key holds the right.
    after: () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        expect(yield* sql`SELECT id FROM issuing_api_keys WHERE network ORDER BY id`).toEqual([
          { id: "key_admin" },
          { id: "key_other_org" }
        ])
      })
  },
  "0510_network_messages": {
    // An idempotency record from before the migration: it is kept 24 h from its creation.
    before: () =>
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql`INSERT INTO issuing_idempotency_keys (organization_id, idempotency_key, fingerprint, locked_at, created_at)
                     VALUES ('org_1', 'key_0510', 'fp', ${NOW}, ${NOW})`
      ),
    // Its expiry backfilled; a network transaction id is unique per program, not across programs; the
    // card message's function fills the new columns from the transaction it is given.
    after: () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const [kept] = yield* sql<{ expires_at: Date }>`SELECT expires_at FROM issuing_idempotency_keys WHERE idempotency_key = 'key_0510'`
        expect(kept!.expires_at.toISOString()).toBe("2026-01-02T00:00:00.000Z")
        yield* sql`DELETE FROM issuing_idempotency_keys WHERE idempotency_key = 'key_0510'`
        yield* sql`INSERT INTO issuing_programs (id, organization_id, name, bin, created_at, updated_at)
                   VALUES ('program_0510', 'org_1', 'Other program', '400000', ${NOW}, ${NOW})`
        const insert = (id: string, program: string) =>
          sql`INSERT INTO issuing_transactions (id, program_id, status, amount_minor, currency, card_id, network_transaction_id,
                merchant, created_at, updated_at)
              VALUES (${id}, ${program}, 'DECLINED', 100, 'USD', 'card_ACTIVE', 'ntx_0510', '{"acceptor_id":"a"}', ${NOW}, ${NOW})`
        yield* insert("txn_0510_a", PROGRAM)
        yield* insert("txn_0510_b", "program_0510")
        expect(yield* failureOf(insert("txn_0510_c", PROGRAM))).toMatchObject({
          code: "23505",
          message: expect.stringContaining("issuing_transactions_by_network_id")
        })
        const populated = yield* sql<{ merchant: string; network_transaction_id: string }>`
          SELECT r.merchant, r.network_transaction_id FROM jsonb_populate_record(NULL::issuing_transactions,
            ${JSON.stringify({ id: "t", merchant: JSON.stringify({ acceptor_id: "a" }), network_transaction_id: "n" })}::jsonb) r`
        expect(populated).toEqual([{ merchant: '{"acceptor_id":"a"}', network_transaction_id: "n" }])
        yield* sql`DELETE FROM issuing_transactions WHERE id IN ('txn_0510_a', 'txn_0510_b')`
        yield* sql`DELETE FROM issuing_programs WHERE id = 'program_0510'`
      })
  },
  "0550_transfer_returns": {
    before: () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        transfersBefore0550 = yield* sql`SELECT * FROM issuing_transfers ORDER BY id`
        expect(transfersBefore0550.length).toBeGreaterThan(0)
      }),
    // Every transfer as it was with no return; RETURNED allowed with its code and reason, another
    // status refused by the wider CHECK.
    after: () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        expect(yield* sql`SELECT * FROM issuing_transfers ORDER BY id`).toEqual(
          transfersBefore0550.map((row: any) => ({ ...row, return_code: null, return_reason: null }))
        )
        const [first] = transfersBefore0550 as ReadonlyArray<any>
        yield* sql`UPDATE issuing_transfers SET status = 'RETURNED', return_code = 'R01', return_reason = 'why' WHERE id = ${first.id}`
        expect(yield* failureOf(sql`UPDATE issuing_transfers SET status = 'REVERSED' WHERE id = ${first.id}`)).toMatchObject({
          code: "23514",
          message: expect.stringContaining("issuing_transfers_status_check")
        })
        yield* sql`UPDATE issuing_transfers SET status = ${first.status}, return_code = NULL, return_reason = NULL WHERE id = ${first.id}`
      })
  },
  "0560_settlement_totals": {
    // The card transfers already posted counted once by kind, and a card transfer posted after it
    // counted by the trigger on its own UTC day; a transfer of another rail is not.
    after: () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        expect(
          yield* sql`SELECT program_id, day::text AS day, currency, kind, sum(count)::int AS count, sum(amount_minor)::int AS amount_minor
          FROM issuing_settlement_totals GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 4`
        ).toEqual([
          { program_id: PROGRAM, day: "2026-01-01", currency: "USD", kind: "clearing", count: 1, amount_minor: 70 },
          { program_id: PROGRAM, day: "2026-01-01", currency: "USD", kind: "return", count: 1, amount_minor: 8 }
        ])
        const [template] = (yield* sql`SELECT * FROM issuing_transfers ORDER BY id LIMIT 1`) as ReadonlyArray<any>
        const insert = (id: string, rail: string) =>
          sql`INSERT INTO issuing_transfers (id, program_id, transaction_id, payment_rail, amount_minor, currency,
              from_financial_account_id, to_financial_account_id, status, created_at, updated_at)
            VALUES (${id}, ${template.program_id}, ${template.transaction_id}, ${rail}, 25, 'USD', ${template.from_financial_account_id},
              ${template.to_financial_account_id}, 'SETTLED', '2030-01-03T23:59:59.999Z', '2030-01-03T23:59:59.999Z')`
        yield* insert("tr_0560_card", "card")
        yield* insert("tr_0560_book", "book")
        yield* insert("tr_0560_card_2", "card")
        expect(
          yield* sql`SELECT day::text AS day, sum(count)::int AS count, sum(amount_minor)::int AS amount_minor FROM issuing_settlement_totals
                        WHERE day = '2030-01-03' GROUP BY day`
        ).toEqual([{ day: "2030-01-03", count: 2, amount_minor: 50 }])
        yield* sql`DELETE FROM issuing_transfers WHERE id IN ('tr_0560_card', 'tr_0560_book', 'tr_0560_card_2')`
        yield* sql`DELETE FROM issuing_settlement_totals WHERE day = '2030-01-03'`
      })
  },
  "0690_disputes": {
    // Every transaction disputed by nothing yet (NULL, read as 0); a dispute row takes a known
    // reason and status, a positive amount and transfers that exist (23514 CHECK, 23503 foreign key).
    after: () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        expect(yield* sql`SELECT COUNT(*)::int AS n FROM issuing_transactions WHERE disputed_minor IS NOT NULL`).toEqual([{ n: 0 }])
        const [template] = (yield* sql`SELECT * FROM issuing_transfers ORDER BY id LIMIT 1`) as ReadonlyArray<any>
        const insert = (id: string, fields: { amount?: number; reason?: string; status?: string; transfer?: string } = {}) =>
          sql`INSERT INTO issuing_disputes (id, program_id, transaction_id, amount_minor, currency, reason, explanation, status,
                provisional_credit_transfer_id, reversal_transfer_id, created_at, updated_at)
              VALUES (${id}, ${template.program_id}, ${template.transaction_id}, ${fields.amount ?? 10}, 'USD', ${fields.reason ?? "FRAUD"},
                NULL, ${fields.status ?? "SUBMITTED"}, ${fields.transfer ?? template.id}, NULL, ${NOW}, ${NOW})`
        yield* insert("dsp_0690")
        expect((yield* failureOf(insert("dsp_0690_a", { amount: 0 }))).code).toBe("23514")
        expect((yield* failureOf(insert("dsp_0690_b", { reason: "BORED" }))).code).toBe("23514")
        expect((yield* failureOf(insert("dsp_0690_c", { status: "OPEN" }))).code).toBe("23514")
        expect((yield* failureOf(insert("dsp_0690_d", { transfer: "no_such_transfer" }))).code).toBe("23503")
        yield* sql`DELETE FROM issuing_disputes WHERE id = 'dsp_0690'`
        expect(yield* maintainedListCounts).toEqual(yield* expectedListCounts)
      })
  },
  "0691_time_only_list_indexes": "schema only",
  "0695_wallet_holder_search": "schema only",
  "0699_card_last_four": "schema only",
  "0705_cardholders": {
    // Wallets, cards and programs keep their rows with no cardholder and no requirement; the new
    // list's count follows an insert, a verification, an email change and a delete.
    after: () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        expect(yield* sql`SELECT count(*)::int AS n FROM issuing_wallets WHERE cardholder_id IS NOT NULL`).toEqual([{ n: 0 }])
        expect(yield* sql`SELECT count(*)::int AS n FROM issuing_cards WHERE cardholder_id IS NOT NULL`).toEqual([{ n: 0 }])
        expect(yield* sql`SELECT DISTINCT require_verified_cardholder AS r FROM issuing_programs`).toEqual([{ r: false }])
        const at = "2026-01-01T00:00:00.000Z"
        yield* sql`INSERT INTO issuing_cardholders (id, program_id, type, name, email, billing_address, status,
                     verification_updated_at, created_at, updated_at)
                   VALUES ('ch_0705', ${PROGRAM}, 'individual', 'Ada', 'a@example.com', '{}', 'PENDING_VERIFICATION', ${at}, ${at}, ${at})`
        expect(yield* maintainedListCounts).toEqual(yield* expectedListCounts)
        yield* sql`UPDATE issuing_cardholders SET status = 'VERIFIED' WHERE id = 'ch_0705'`
        expect(yield* maintainedListCounts).toEqual(yield* expectedListCounts)
        yield* sql`UPDATE issuing_cardholders SET email = NULL WHERE id = 'ch_0705'`
        expect(yield* maintainedListCounts).toEqual(yield* expectedListCounts)
        yield* sql`DELETE FROM issuing_cardholders WHERE id = 'ch_0705'`
        expect(yield* maintainedListCounts).toEqual(yield* expectedListCounts)
      })
  },
  "0710_card_merchant_countries": {
    // Every card issued before has neither list.
    after: () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        expect(
          yield* sql`SELECT count(*)::int AS n FROM issuing_cards WHERE allowed_merchant_countries <> '[]' OR blocked_merchant_countries <> '[]'`
        ).toEqual([{ n: 0 }])
      })
  },
  "0750_summed_counts": {
    // The money-movement lists recounted under their new keys: no "any" for status, rail, type or
    // book, a book transfer once per account under its set of books (the function files, applied
    // at the end, write the same keys: functionFilesCheck).
    after: () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        expect(yield* maintainedListCounts).toEqual(yield* expectedListCounts)
        expect(
          yield* sql`SELECT list, key FROM issuing_list_counts WHERE (list = 'events' AND key = '')
            OR (list IN ('transfers', 'transactions') AND key LIKE '|%') OR (list = 'book_transfers' AND key NOT LIKE '=%|=%')`
        ).toEqual([])
        expect(
          yield* sql`SELECT DISTINCT key FROM issuing_list_counts WHERE list = 'book_transfers' AND key LIKE ${`=${ALICE}|%`}`
        ).toEqual([{ key: `=${ALICE}|=cash+principal` }])
      })
  },
  "0751_card_spend_totals": {
    // A card with a spending period, the others without.
    before: () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE issuing_cards SET spending_interval = 'DAILY', spending_amount_minor = 500 WHERE id = 'card_ACTIVE'`
      }),
    // The period is the card's one limit, the others have none; 0380's table, triggers and function
    // are gone; the totals are backfilled per card, interval and window (0380's fixture among them),
    // then every kind of write keeps them exact (the triggers run at commit).
    after: () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const cards = (yield* sql`SELECT id, spending_limits FROM issuing_cards`) as ReadonlyArray<any>
        expect(cards.length).toBeGreaterThan(1)
        for (const card of cards)
          expect(JSON.parse(card.spending_limits), card.id).toEqual(
            card.id === "card_ACTIVE" ? [{ interval: "DAILY", amount: 500, count: null }] : []
          )
        expect(yield* sql`SELECT to_regclass('issuing_card_spend') IS NULL AS gone`).toEqual([{ gone: true }])
        expect(
          yield* sql`SELECT tgname AS name, tgdeferrable AS deferrable, tginitdeferred AS deferred FROM pg_trigger
                     WHERE tgrelid = 'issuing_transactions'::regclass AND tgname LIKE 'issuing_card_spend%' ORDER BY tgname`
        ).toEqual(
          ["delete", "insert", "update"].map((name) => ({ name: `issuing_card_spend_totals_${name}`, deferrable: true, deferred: true }))
        )
        yield* checkSpendTotalsFixture
        // 0750's list-count trigger functions are today's only once the function files are applied
        // (at the end of this run): the steps' rows are written with those triggers off and taken
        // away after, so they leave the lists' counts as 0750 left them.
        const counting = (enable: boolean) =>
          Effect.forEach(["insert", "update", "delete"], (name) =>
            sql.unsafe(`ALTER TABLE issuing_transactions ${enable ? "ENABLE" : "DISABLE"} TRIGGER issuing_count_transactions_${name}`)
          )
        yield* counting(false)
        yield* spendTotalsTriggerSteps(PROGRAM)
        yield* sql`DELETE FROM issuing_transactions WHERE id LIKE 'txn_720_%'`
        yield* counting(true)
        expect(yield* maintainedListCounts).toEqual(yield* expectedListCounts)
      })
  },
  "0840_tag_events_per_statement": {
    // The events' tag trigger fires once per statement, over its new rows; its function is the
    // file's from the end of this run (the tag tests under test/webhooks exercise it).
    after: () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        expect(
          yield* sql`SELECT tgname AS name, (tgtype & 1) = 1 AS per_row, tgfoid::regproc::text AS function,
                            tgnewtable AS new_table FROM pg_trigger
                     WHERE tgrelid = 'issuing_events'::regclass AND tgname LIKE 'issuing_tag%'`
        ).toEqual([{ name: "issuing_tag_events", per_row: false, function: "issuing_tag_events", new_table: "new_rows" }])
      })
  },
  "0841_period_counts": {
    // The rows already written counted again per month, day and hour of their created_at (the
    // function files, applied at the end, write the same rows: functionFilesCheck).
    after: () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        expect(yield* maintainedListCounts).toEqual(yield* expectedListCounts)
        expect(
          yield* sql`SELECT DISTINCT split_part(list, '@', 1) AS list FROM issuing_list_counts WHERE list LIKE '%@%' ORDER BY 1`
        ).toEqual([{ list: "events" }, { list: "transactions" }, { list: "transfers" }])
      })
  },
  "0990_account_checks_per_statement": {
    // The accounts' foreign keys of entries and transfers gone, a check per inserting statement and
    // the accounts' removal refusal in their place; their functions are the files' from the end of
    // this run (packages/store-pg/test/AccountChecks.test.ts exercises them).
    after: () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        expect(
          yield* sql`SELECT conname FROM pg_constraint
                     WHERE contype = 'f' AND conrelid IN ('issuing_book_entries'::regclass, 'issuing_transfers'::regclass)`
        ).toEqual([])
        expect(
          yield* sql`SELECT tgrelid::regclass::text AS table_name, tgname AS name, (tgtype & 1) = 1 AS per_row FROM pg_trigger
                     WHERE tgname IN ('issuing_check_accounts', 'issuing_check_account_change', 'issuing_refuse_account_removal')
                     ORDER BY 1, 2`
        ).toEqual([
          { table_name: "issuing_book_entries", name: "issuing_check_accounts", per_row: false },
          { table_name: "issuing_financial_accounts", name: "issuing_refuse_account_removal", per_row: true },
          { table_name: "issuing_transfers", name: "issuing_check_account_change", per_row: true },
          { table_name: "issuing_transfers", name: "issuing_check_accounts", per_row: false }
        ])
      })
  }
}

/** The transfers before migration 0550. */
let transfersBefore0550: ReadonlyArray<unknown> = []

/** How many entries there were before migration 0310. */
let entriesBefore0310 = 0

/** The balance rows of before migration 0300, which its check finds again in slot 0. */
let balancesBeforeSlots: ReadonlyArray<unknown> = []

/** The tables migration 0270 gives a metadata column. */
const METADATA_TABLES = ["issuing_wallets", "issuing_cards", "issuing_transfers", "issuing_webhook_subscriptions"]

/** The database migrated through `id` (and every migration before it). */
const migrateThrough = (id: string) =>
  Migrator.make({})({
    loader: Migrator.fromRecord(Object.fromEntries(Object.entries(migrations).filter(([other]) => other <= id))),
    table: "issuing_migrations"
  })

describe("PostgreSQL migrations, each checked before and after", () => {
  it("lists every migration, in order, with its checks or as schema only", () => {
    expect(Object.keys(checks)).toEqual(Object.keys(migrations).sort())
  })

  it.live(
    "keep what each promised, one migration at a time",
    () =>
      Effect.gen(function* () {
        const database = yield* Effect.acquireRelease(
          Effect.promise(() => createTestDatabase("postgres")),
          (database) => Effect.promise(() => database.drop())
        )
        yield* Effect.gen(function* () {
          for (const [id, check] of Object.entries(checks)) {
            if (check !== "schema only" && check.before !== undefined) {
              yield* check.before(database).pipe(naming(id, "before"))
            }
            yield* migrateThrough(id)
            if (check !== "schema only") yield* check.after(database).pipe(naming(id, "after"))
            if (id >= "0010") expect(yield* ledgerViolations, `ledger invariants after ${id}`).toEqual([])
          }
          // The step-by-step run ends where the store's own migration ends, which then applies the
          // function files (src/functions/): today's functions, checked over every row written above.
          expect(yield* PgStore.migrate).toEqual([])
          yield* functionFilesCheck.pipe(naming("the function files", "after"))
        }).pipe(Effect.provide(PgStore.clientLayer({ url: database.url, maxConnections: 2 })))
      }).pipe(Effect.scoped),
    { timeout: 60_000 }
  )
})

/** `t` as a posting record of today's `issuing_post_transfer` (src/PostingRecord.ts). */
const recordOf = (t: Transfer, overrides: Partial<Omit<PostingRecord, "counts">> = {}): PostingRecord => {
  const record = recordFieldsOf(t, overrides)
  return { ...record, counts: countsOf(record) }
}

const recordFieldsOf = (t: Transfer, overrides: Partial<Omit<PostingRecord, "counts">>): Omit<PostingRecord, "counts"> => ({
  program_id: PROGRAM,
  source: t.source,
  target: t.target,
  check_funds: t.checkFunds,
  amount: t.amount,
  currency: "USD",
  now: NOW,
  active_card: null,
  transaction_write: "insert",
  transaction_id: t.transactionId,
  transaction_status: "SETTLED",
  transaction_created_at: NOW,
  card_id: null,
  mcc: null,
  merchant_name: null,
  transfer_id: t.transferId,
  rail: "book",
  transfer_status: "SETTLED",
  description: null,
  metadata: "{}",
  book_transfer_id: t.bookTransferId,
  entries: entriesOf(t).map((e) => ({ account: e.account, book: e.book, entry_type: e.type, amount: t.amount })),
  deltas: entriesOf(t).map((e) => ({ account: e.account, book: e.book, debits: e.debits, credits: e.credits, pending: 0 })),
  events: t.eventIds.map((id) => ({ id, type: "transfer.created", data: "{}" })),
  balance_events: [],
  ...overrides
})

/**
 * Today's functions, from their files: the posting takes one record (a posting posts, a refusal
 * and a record of another shape write nothing), a run of records posts each in order, a card
 * message posts its transfer's record, and the counts and the ledger hold over everything every
 * version wrote.
 */
const functionFilesCheck = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  expect(yield* postTransferSignatures).toEqual(["p_posting jsonb, p_channel text"])
  const post = (record: unknown) =>
    sql<PostingResult>`SELECT posted, available, refusal FROM issuing_post_transfer(${JSON.stringify(record)}::jsonb, ${CHANNEL})`
  const alice = yield* principal(ALICE)
  const paid = transfer(ALICE, BOB, 1, { events: 1 })
  expect(yield* post(recordOf(paid, { balance_events: [{ id: nextId("evt"), account: ALICE }] }))).toEqual([
    { posted: true, available: String(alice - (yield* pendingOf(ALICE))), refusal: null }
  ])
  expect(yield* principal(ALICE)).toBe(alice - 1)
  const rows = yield* ledgerRowCounts
  expect((yield* post(recordOf(transfer(ALICE, BOB, 10 ** 12))))[0]).toMatchObject({ posted: false, refusal: "insufficient_funds" })
  const { entries: _, ...withoutEntries } = recordOf(transfer(ALICE, BOB, 1))
  expect(yield* failureOf(post(withoutEntries))).toMatchObject({ code: "22023" })
  expect(yield* ledgerRowCounts).toBe(rows)
  const run = [recordOf(transfer(ALICE, BOB, 1)), recordOf(transfer(ALICE, BOB, 10 ** 12)), recordOf(transfer(BOB, ALICE, 1))]
  expect(yield* sql`SELECT ord, posted FROM issuing_post_transfers(${JSON.stringify(run)}::jsonb, ${CHANNEL})`).toEqual([
    { ord: 1, posted: true },
    { ord: 2, posted: false },
    { ord: 3, posted: true }
  ])
  const approval = transfer(CAROL, SETTLEMENT, 2, { checkFunds: false })
  const [approved] = yield* sql<PostingResult>`SELECT posted, refusal FROM issuing_post_card_message(${JSON.stringify(
    cardTransaction("txn_functions_approved", 2, "settled")
  )}::jsonb, 'insert', ${CAROL}, 0, 2, NULL, ${NOW}, ARRAY[]::text[], ARRAY[]::text[], ARRAY[]::text[], NULL, ${CHANNEL},
    ${JSON.stringify(
      recordOf(approval, {
        transaction_id: "txn_functions_approved",
        transaction_write: "none",
        balance_events: [{ id: "evt_functions_balance", account: CAROL }]
      })
    )}::jsonb)`
  expect(approved).toEqual({ posted: true, refusal: null })
  const data = (yield* sql<{ data: string }>`SELECT data FROM issuing_events WHERE id = 'evt_functions_balance'`)[0]!.data
  expect(JSON.parse(data)).toMatchObject({ id: CAROL, object: "financial_account", balance: { amount: yield* principal(CAROL) } })
  expect(yield* maintainedListCounts).toEqual(yield* expectedListCounts)
  yield* countingWritesCheck(NOW)
  expect(yield* ledgerViolations).toEqual([])
})

/** Says which migration's check failed (its assertion's own diff follows). */
const naming =
  (id: string, side: "before" | "after") =>
  <A, E, R>(check: Effect.Effect<A, E, R>) =>
    Effect.tapErrorCause(check, () => Effect.sync(() => console.error(`migration check failed: ${id} ${side}`)))
