import { SqlClient, type SqlError } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import * as PgStore from "@issuing/store-pg"
import { sqlErrorCode } from "@issuing/core"
import { expectedListCounts, maintainedListCounts } from "@issuing/core/testing"
import { Effect, Layer } from "effect"
import { createTestDatabase } from "../../../test/support/databases.js"
import { countsOf } from "../src/PostingRecord.js"

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
  const record = {
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
  } as const
  return { ...record, counts: countsOf(record) }
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
        // per balance.updated (2) and once per account its entries name and once per account its
        // transfer names (4: the statement checks that replaced the six foreign-key probes, migration
        // 0990) — 14 before the lock and the funds check became one statement, 9 with the foreign
        // keys; its balance rows as before.
        expect(few.find((row) => row.relname === "issuing_financial_accounts")).toMatchObject({ idx_scan: 7, idx_tup_fetch: 8 })
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

    // A batch decided over totals read without locks (issuing_post_decided) is checked under the
    // locks against what the rows hold then, from the totals it was decided over and each posting's
    // available principal: it stands, answering the available principal as the rows now say, or
    // the statement writes nothing (IB409) and the process decides again under the locks.
    it.effect("writes a batch decided over stale totals only when its decision still stands", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`INSERT INTO issuing_organizations (id, name, created_at) VALUES ('org_dec', 'dec', ${NOW})`
        yield* sql`INSERT INTO issuing_programs (id, organization_id, name, bin, created_at, updated_at)
                   VALUES ('prg_dec', 'org_dec', 'dec', '400000', ${NOW}, ${NOW})`
        for (const id of ["fa_dec_a", "fa_dec_b"]) {
          yield* sql`INSERT INTO issuing_financial_accounts (id, program_id, wallet_id, kind, currency, created_at)
                     VALUES (${id}, 'prg_dec', NULL, 'wallet', 'USD', ${NOW})`
          yield* sql`INSERT INTO issuing_balances (financial_account_id, book, currency, debits_minor, credits_minor, updated_at, program_id)
                     VALUES (${id}, 'principal', 'USD', 0, 0, ${NOW}, 'prg_dec'), (${id}, 'cash', 'USD', 0, 0, ${NOW}, 'prg_dec')`
        }
        const principal = (id: string) =>
          Effect.map(
            sql<{ debits: string; credits: string }>`SELECT debits_minor::text AS debits, credits_minor::text AS credits
              FROM issuing_balances WHERE financial_account_id = ${id} AND book = 'principal'`,
            ([row]) => [Number(row!.debits), Number(row!.credits)]
          )
        /** Moves an account's principal as another writer would. */
        const move = (id: string, debits: number, credits: number) =>
          sql`UPDATE issuing_balances SET debits_minor = debits_minor + ${debits}, credits_minor = credits_minor + ${credits}
              WHERE financial_account_id = ${id} AND book = 'principal'`
        interface Decided {
          readonly from: string
          readonly to: string
          readonly amount: number
          readonly checkFunds: boolean
          readonly refusal: string | null
          readonly available: number
        }
        /** The statement for postings decided over `read` (the source's principal [debits, credits]). */
        const postDecided = (read: Record<string, readonly [number, number]>, postings: ReadonlyArray<Decided>) => {
          const balances = new Map<string, { financial_account_id: string; book: string; debits_minor: number; credits_minor: number }>()
          const add = (account: string, book: string, debits: number, credits: number) => {
            const row = balances.get(`${account} ${book}`) ?? { financial_account_id: account, book, debits_minor: 0, credits_minor: 0 }
            balances.set(`${account} ${book}`, {
              ...row,
              debits_minor: row.debits_minor + debits,
              credits_minor: row.credits_minor + credits
            })
          }
          for (const p of postings.filter((p) => p.refusal === null)) {
            add(p.from, "principal", p.amount, 0)
            add(p.to, "principal", 0, p.amount)
          }
          const rows = Object.entries(read).map(([account, [debits, credits]]) => ({
            account,
            book: "principal",
            debits,
            credits,
            pending: 0
          }))
          const decided = postings.map((p) => ({
            source: p.from,
            amount: p.amount,
            check_funds: p.checkFunds,
            posted: p.refusal === null,
            refusal: p.refusal,
            available: p.available
          }))
          const summed = [...balances.values()].map((row) => ({ ...row, currency: "USD", pending_minor: 0, updated_at: NOW }))
          return Effect.map(
            sql<{
              available: ReadonlyArray<string>
            }>`SELECT issuing_post_decided('{}'::jsonb, '[]'::jsonb, ${JSON.stringify(decided)}::jsonb,
              ${JSON.stringify(rows)}::jsonb, ${JSON.stringify(summed)}::jsonb, NULL::text) AS available`,
            ([row]) => row!.available.map(Number)
          )
        }
        const refusedWith = (statement: Effect.Effect<unknown, SqlError.SqlError>) =>
          Effect.map(Effect.flip(statement), (error) => sqlErrorCode(error))
        const a = "fa_dec_a"
        const b = "fa_dec_b"
        yield* move(a, 0, 100)
        // As read: 60 of a's 100 go to b.
        const take = (amount: number, available: number) => ({ from: a, to: b, amount, checkFunds: true, refusal: null, available })
        expect(yield* postDecided({ [a]: [0, 100], [b]: [0, 0] }, [take(60, 100)])).toEqual([100])
        expect(yield* principal(a)).toEqual([60, 100])
        // Read before that posting and another writer's credit of 50: a's 90 still cover 60 more.
        yield* move(a, 0, 50)
        expect(yield* postDecided({ [a]: [0, 100], [b]: [0, 0] }, [take(60, 100)])).toEqual([90])
        expect(yield* principal(a)).toEqual([120, 150])
        // a holds 30: a posting of 40 decided over a read of 100 would now be refused.
        expect(yield* refusedWith(postDecided({ [a]: [0, 100], [b]: [0, 0] }, [take(40, 100)]))).toBe("IB409")
        // Refused over a read of 20; now 30 still do not cover 40, b's posting stands.
        const refused = { from: a, to: b, amount: 40, checkFunds: true, refusal: "insufficient_funds", available: 20 }
        const fromB = { from: b, to: a, amount: 5, checkFunds: false, refusal: null, available: 0 }
        expect(yield* postDecided({ [a]: [120, 140], [b]: [0, 120] }, [refused, fromB])).toEqual([30, 0])
        expect(yield* principal(a)).toEqual([120, 155])
        // Another writer's credit of 10 makes a's 45 cover it: the refusal no longer holds.
        yield* move(a, 0, 10)
        expect(yield* refusedWith(postDecided({ [a]: [120, 155], [b]: [5, 120] }, [{ ...refused, available: 35 }, fromB]))).toBe("IB409")
        // Totals read larger than the rows hold (they never shrink): not decided over these rows.
        expect(yield* refusedWith(postDecided({ [a]: [130, 165], [b]: [5, 120] }, [take(1, 35)]))).toBe("IB409")
        // A total the batch would take over the limit, which the read did not show.
        yield* move(b, 0, 9_007_199_254_740_000)
        expect(yield* refusedWith(postDecided({ [a]: [120, 165], [b]: [5, 120] }, [{ ...fromB, from: a, to: b, amount: 1_000 }]))).toBe(
          "IB409"
        )
        expect(yield* principal(a)).toEqual([120, 165])
        expect(yield* principal(b)).toEqual([5, 9_007_199_254_740_120])
      })
    )
  })
})
