import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import * as PgStore from "@issuing/store-pg"
import { expectedListCounts, maintainedListCounts } from "@issuing/core/testing"
import { Effect, Layer } from "effect"
import { createTestDatabase } from "../../../test/support/databases.js"

const store = Layer.unwrapScoped(
  Effect.map(
    Effect.acquireRelease(
      Effect.promise(() => createTestDatabase("postgres", { migrated: true })),
      (database) => Effect.promise(() => database.drop())
    ),
    (database) => PgStore.layer({ url: database.url, maxConnections: 2 })
  )
)

const NOW = "2030-01-01T00:00:00.000Z"

/** A posting record (src/PostingRecord.ts) of a settled book transfer of 1 between two wallet accounts. */
const bookTransfer = (n: number, from: string, to: string) => {
  const id = (kind: string) => `${kind}_work_${n}`
  const transfer = JSON.stringify({ id: id("tr"), object: "transfer", amount: 1 })
  return {
    program_id: "prg_work",
    source: from,
    target: to,
    check_funds: false,
    amount: 1,
    currency: "USD",
    now: NOW,
    active_card: null,
    transaction_write: "insert",
    transaction_id: id("txn"),
    transaction_status: "SETTLED",
    transaction_created_at: NOW,
    card_id: null,
    mcc: null,
    merchant_name: null,
    transfer_id: id("tr"),
    rail: "book",
    transfer_status: "SETTLED",
    description: null,
    metadata: "{}",
    book_transfer_id: id("bt"),
    entries: [
      { account: from, book: "principal", entry_type: "DEBIT", amount: 1 },
      { account: from, book: "cash", entry_type: "CREDIT", amount: 1 },
      { account: to, book: "cash", entry_type: "DEBIT", amount: 1 },
      { account: to, book: "principal", entry_type: "CREDIT", amount: 1 }
    ],
    deltas: [
      { account: from, book: "principal", debits: 1, credits: 0, pending: 0 },
      { account: from, book: "cash", debits: 0, credits: 1, pending: 0 },
      { account: to, book: "cash", debits: 1, credits: 0, pending: 0 },
      { account: to, book: "principal", debits: 0, credits: 1, pending: 0 }
    ],
    events: [
      { id: id("evt_a"), type: "transfer.created", data: transfer },
      { id: id("evt_b"), type: "transfer.settled", data: transfer }
    ],
    balance_events: [
      { id: id("evt_c"), account: from },
      { id: id("evt_d"), account: to }
    ]
  }
}

// What a single posting reads on PostgreSQL (docs/operations.md#the-databases-work-per-transfer-postgresql):
// its own accounts' rows by key, never a pass over the program's accounts.
describe("a posting on PostgreSQL", () => {
  layer(store, { excludeTestServices: true, timeout: "60 seconds" })((it) => {
    it.effect("reads the same rows however many accounts the program has", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const addAccounts = (ids: ReadonlyArray<string>) =>
          Effect.forEach(ids, (id) =>
            Effect.zipRight(
              sql`INSERT INTO issuing_financial_accounts (id, program_id, wallet_id, kind, currency, created_at)
                  VALUES (${id}, 'prg_work', NULL, 'wallet', 'USD', ${NOW})`,
              sql`INSERT INTO issuing_balances (financial_account_id, book, currency, debits_minor, credits_minor, updated_at, program_id)
                  VALUES (${id}, 'principal', 'USD', 0, 0, ${NOW}, 'prg_work'), (${id}, 'cash', 'USD', 0, 0, ${NOW}, 'prg_work')`
            )
          )
        yield* sql`INSERT INTO issuing_organizations (id, name, created_at) VALUES ('org_work', 'work', ${NOW})`
        yield* sql`INSERT INTO issuing_programs (id, organization_id, name, bin, created_at, updated_at)
                   VALUES ('prg_work', 'org_work', 'work', '400000', ${NOW}, ${NOW})`
        yield* addAccounts(["fa_work_a", "fa_work_b"])
        // The rows one posting reads of the accounts and their balances, and how: the backend's
        // counts of the two tables (pg_stat_xact_*) before and after it, in its transaction.
        const counts = () =>
          sql<{ relname: string; seq_scan: number; seq_tup_read: number; idx_scan: number; idx_tup_fetch: number }>`SELECT relname,
              seq_scan::int, seq_tup_read::int, idx_scan::int, idx_tup_fetch::int
            FROM pg_stat_xact_user_tables WHERE relname IN ('issuing_financial_accounts', 'issuing_balances') ORDER BY relname`
        let n = 0
        const post = () =>
          sql.withTransaction(
            Effect.gen(function* () {
              n += 1
              // Sequential scans ruled out, as a large program's planner rules them out by cost (on
              // these few rows a pass over the table is cheaper than any lookup); no cache of
              // lookups either, whose use depends on the table's size: each lookup counted.
              yield* sql`SET LOCAL enable_seqscan = off`
              yield* sql`SET LOCAL enable_memoize = off`
              const before = yield* counts()
              const [posted] = yield* sql<{ posted: boolean }>`SELECT posted
                FROM issuing_post_transfer(${JSON.stringify(bookTransfer(n, "fa_work_a", "fa_work_b"))}::jsonb, NULL::text)`
              expect(posted!.posted).toBe(true)
              const after = yield* counts()
              return after.map((row, i) => ({
                relname: row.relname,
                seq_scan: row.seq_scan - before[i]!.seq_scan,
                seq_tup_read: row.seq_tup_read - before[i]!.seq_tup_read,
                idx_scan: row.idx_scan - before[i]!.idx_scan,
                idx_tup_fetch: row.idx_tup_fetch - before[i]!.idx_tup_fetch
              }))
            })
          )
        // Past plpgsql's first executions of each statement (custom plans, then maybe a generic one).
        // The tables analyzed, as autovacuum does as they grow: the plans are the ones a program gets.
        yield* sql`ANALYZE issuing_financial_accounts, issuing_balances`
        for (let i = 0; i < 7; i++) yield* post()
        const few = yield* post()
        yield* addAccounts(Array.from({ length: 40 }, (_, i) => `fa_work_${i}`))
        yield* sql`ANALYZE issuing_financial_accounts, issuing_balances`
        for (let i = 0; i < 7; i++) yield* post()
        const many = yield* post()
        expect(many).toEqual(few)
        // Its two accounts read once by key for the locks and their slots (2 rows, one scan), once
        // per balance.updated (2) and once per foreign key of its transfer and entries (6) — 14 before
        // the lock and the funds check became one statement; its balance rows as before.
        expect(few.find((row) => row.relname === "issuing_financial_accounts")).toMatchObject({ idx_scan: 9, idx_tup_fetch: 10 })
        expect(few.find((row) => row.relname === "issuing_balances")).toMatchObject({ idx_scan: 8, idx_tup_fetch: 14 })
      })
    )

    // The counts a book transfer keeps (migration 0750): transactions `=SETTLED|`; transfers
    // `=SETTLED|=book|` and one per account; book transfers one per account (`=fa|=cash+principal`);
    // events one per type (transfer.created, transfer.settled, balance.updated). 9 rows, where the
    // keys with "any" for status, rail, type and book made it 27 (28 with transaction.updated). Since
    // migration 0841 the transaction's, transfer's and events' 7 are kept again in their month, day
    // and hour: 9 + 21 = 30.
    it.effect("keeps a book transfer's counts in one row per key it reads", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const written = yield* sql.withTransaction(
          Effect.gen(function* () {
            const tuples = () =>
              sql<{
                n: number
              }>`SELECT (n_tup_ins + n_tup_upd)::int AS n FROM pg_stat_xact_user_tables WHERE relname = 'issuing_list_counts'`
            const [before] = yield* tuples()
            yield* sql`SELECT posted FROM issuing_post_transfer(${JSON.stringify(bookTransfer(100, "fa_work_a", "fa_work_b"))}::jsonb, NULL::text)`
            const [after] = yield* tuples()
            return after!.n - before!.n
          })
        )
        expect(written).toBe(30)
        const keys = yield* sql<{ key: string }>`SELECT DISTINCT key FROM issuing_list_counts
          WHERE list = 'book_transfers' AND program_id = 'prg_work' ORDER BY key`
        expect(keys.map((row) => row.key)).toEqual(["=fa_work_a|=cash+principal", "=fa_work_b|=cash+principal"])
      })
    )

    // A batch's count upsert sums its rows per key and UTC hour before putting each sum under its
    // month, day and hour (issuing_write_postings): rows of one call across an hour, a day and a
    // month, written in a session whose time zone is not a whole hour from UTC, are each counted in
    // their own UTC periods, as the rows say.
    it.effect("counts a batch's rows in their own UTC hour, day and month whatever the session's time zone", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const times = ["2030-01-31T23:20:00.000Z", "2030-01-31T23:59:59.999Z", "2030-02-01T00:00:00.000Z", "2030-02-01T00:40:00.000Z"]
        const id = (kind: string, i: number) => `${kind}_zone_${i}`
        const rows = {
          transactions: times.map((at, i) => ({
            id: id("txn", i),
            program_id: "prg_work",
            status: "SETTLED",
            amount_minor: 1,
            currency: "USD",
            card_id: null,
            mcc: null,
            merchant_name: null,
            created_at: at,
            updated_at: at
          })),
          transfers: times.map((at, i) => ({
            id: id("tr", i),
            program_id: "prg_work",
            transaction_id: id("txn", i),
            payment_rail: "book",
            amount_minor: 1,
            currency: "USD",
            from_financial_account_id: i % 2 === 0 ? "fa_work_a" : "fa_work_b",
            to_financial_account_id: i % 2 === 0 ? "fa_work_b" : "fa_work_a",
            status: "SETTLED",
            description: null,
            metadata: "{}",
            created_at: at
          })),
          events: times.map((at, i) => ({ id: id("evt", i), program_id: "prg_work", type: "transfer.created", created_at: at, data: "{}" }))
        }
        yield* sql.withTransaction(
          Effect.zipRight(
            sql`SET LOCAL TimeZone = 'Asia/Kolkata'`,
            sql`SELECT issuing_write_postings(${JSON.stringify(rows)}::jsonb, NULL::text)`
          )
        )
        const hours = yield* sql<{ list: string }>`SELECT DISTINCT list FROM issuing_list_counts
          WHERE program_id = 'prg_work' AND (list LIKE 'transfers@h2030-01-31%' OR list LIKE 'transfers@h2030-02%') ORDER BY list`
        expect(hours.map((row) => row.list)).toEqual(["transfers@h2030-01-31T23", "transfers@h2030-02-01T00"])
        expect(yield* maintainedListCounts).toEqual(yield* expectedListCounts)
      })
    )
  })
})
