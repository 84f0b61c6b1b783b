import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { sqlErrorCode } from "@issuing/core"
import * as PgStore from "@issuing/store-pg"
import { Deferred, Effect, Fiber, Layer, Option } from "effect"
import { createTestDatabase } from "../../../test/support/databases.js"

const store = Layer.unwrapScoped(
  Effect.map(
    Effect.acquireRelease(
      Effect.promise(() => createTestDatabase("postgres", { migrated: true })),
      (database) => Effect.promise(() => database.drop())
    ),
    (database) => PgStore.layer({ url: database.url, maxConnections: 3 })
  )
)

const NOW = "2030-01-01T00:00:00.000Z"

/** The program the accounts belong to. */
const program = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`INSERT INTO issuing_organizations (id, name, created_at) VALUES ('org_chk', 'chk', ${NOW}) ON CONFLICT DO NOTHING`
  yield* sql`INSERT INTO issuing_programs (id, organization_id, name, bin, created_at, updated_at)
             VALUES ('prg_chk', 'org_chk', 'chk', '400000', ${NOW}, ${NOW}) ON CONFLICT DO NOTHING`
})

/** The SQLSTATE a statement failed with, or "ok". */
const outcome = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(
    Effect.as("ok"),
    Effect.catchAll((error) => Effect.succeed(sqlErrorCode(error) ?? String(error)))
  )

// What the foreign keys of entries and transfers to their accounts guaranteed, kept by a check per
// statement and a refusal to remove a named account (migration 0990,
// docs/decisions.md#the-accounts-foreign-keys-as-one-check-a-statement): whoever writes the rows.
describe("accounts named by entries and transfers on PostgreSQL", () => {
  layer(store, { excludeTestServices: true, timeout: "60 seconds" })((it) => {
    it.effect("refuses rows naming a missing account, and removing an account rows name", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* program
        for (const id of ["fa_chk_a", "fa_chk_b", "fa_chk_c"])
          yield* sql`INSERT INTO issuing_financial_accounts (id, program_id, wallet_id, kind, currency, created_at)
                     VALUES (${id}, 'prg_chk', NULL, 'wallet', 'USD', ${NOW})`
        const transfer = (id: string, from: string, to: string) =>
          sql`(${id}, 'prg_chk', ${`txn_${id}`}, 'book', 1, 'USD', ${from}, ${to}, 'SETTLED', ${NOW}, ${NOW})`
        const insertTransfers = (...rows: ReadonlyArray<readonly [string, string, string]>) =>
          sql`INSERT INTO issuing_transfers (id, program_id, transaction_id, payment_rail, amount_minor, currency,
                from_financial_account_id, to_financial_account_id, status, created_at, updated_at)
              VALUES ${sql.csv(rows.map(([id, from, to]) => transfer(id, from, to)))}`
        const insertEntries = (bookTransfer: string, ...accounts: ReadonlyArray<string>) =>
          sql`INSERT INTO issuing_book_entries (book_transfer_id, position, financial_account_id, book, entry_type, amount_minor, currency, posted_at)
              VALUES ${sql.csv(accounts.map((account, i) => sql`(${bookTransfer}, ${i}, ${account}, 'principal', 'DEBIT', 1, 'USD', ${NOW})`))}`
        const count = (table: "issuing_transfers" | "issuing_book_entries") =>
          Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(table)}`, (rows) => rows[0]!.n)

        // Inserts: one row naming a missing account refuses its whole statement, from or to.
        expect(yield* outcome(insertTransfers(["tr_1", "fa_chk_a", "fa_chk_b"], ["tr_2", "fa_chk_a", "fa_missing"]))).toBe("23503")
        expect(yield* outcome(insertTransfers(["tr_3", "fa_missing", "fa_chk_b"]))).toBe("23503")
        expect(yield* count("issuing_transfers")).toBe(0)
        expect(yield* outcome(insertEntries("bt_1", "fa_chk_a", "fa_missing", "fa_chk_b"))).toBe("23503")
        expect(yield* count("issuing_book_entries")).toBe(0)
        expect(yield* outcome(insertTransfers(["tr_1", "fa_chk_a", "fa_chk_b"]))).toBe("ok")
        expect(yield* outcome(insertEntries("bt_1", "fa_chk_a", "fa_chk_a"))).toBe("ok")

        // A transfer's accounts changed to a missing one.
        expect(yield* outcome(sql`UPDATE issuing_transfers SET to_financial_account_id = 'fa_missing' WHERE id = 'tr_1'`)).toBe("23503")
        expect(yield* outcome(sql`UPDATE issuing_transfers SET to_financial_account_id = 'fa_chk_c' WHERE id = 'tr_1'`)).toBe("ok")

        // Removal: an account an entry or a transfer names stays, under its id; one nothing names goes.
        expect(yield* outcome(sql`DELETE FROM issuing_financial_accounts WHERE id = 'fa_chk_a'`)).toBe("23503")
        expect(yield* outcome(sql`DELETE FROM issuing_financial_accounts WHERE id = 'fa_chk_c'`)).toBe("23503")
        expect(yield* outcome(sql`UPDATE issuing_financial_accounts SET id = 'fa_chk_z' WHERE id = 'fa_chk_a'`)).toBe("23503")
        expect(yield* outcome(sql`UPDATE issuing_financial_accounts SET currency = 'USD' WHERE id = 'fa_chk_a'`)).toBe("ok")
        expect(yield* outcome(sql`DELETE FROM issuing_financial_accounts WHERE id = 'fa_chk_b'`)).toBe("ok")
      })
    )

    it.effect("makes a removal wait for a writer naming the account, then refuses it", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* program
        yield* sql`INSERT INTO issuing_financial_accounts (id, program_id, wallet_id, kind, currency, created_at)
                   VALUES ('fa_race', 'prg_chk', NULL, 'wallet', 'USD', ${NOW})`
        const written = yield* Deferred.make<void>()
        const commit = yield* Deferred.make<void>()
        // A writer names the account and holds its transaction open.
        const writer = yield* Effect.fork(
          sql.withTransaction(
            Effect.gen(function* () {
              yield* sql`INSERT INTO issuing_book_entries (book_transfer_id, position, financial_account_id, book, entry_type, amount_minor, currency, posted_at)
                         VALUES ('bt_race', 0, 'fa_race', 'principal', 'DEBIT', 1, 'USD', ${NOW})`
              yield* Deferred.succeed(written, undefined)
              yield* Deferred.await(commit)
            })
          )
        )
        yield* Deferred.await(written)
        const removal = yield* Effect.fork(outcome(sql`DELETE FROM issuing_financial_accounts WHERE id = 'fa_race'`))
        // The removal waits for the writer: a backend waiting on a lock while the writer is open.
        const waiters = sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE wait_event_type = 'Lock' AND query LIKE 'DELETE FROM issuing_financial_accounts%'`
        let waiting = 0
        for (let i = 0; i < 500 && waiting === 0; i++) waiting = (yield* Effect.zipLeft(waiters, Effect.sleep("10 millis")))[0]!.n
        expect(waiting).toBe(1)
        expect(Option.isNone(yield* Fiber.poll(removal))).toBe(true)
        yield* Deferred.succeed(commit, undefined)
        yield* Fiber.join(writer)
        // Without the wait it would have found no entry and deleted the account the writer named.
        expect(yield* Fiber.join(removal)).toBe("23503")
        const [left] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM issuing_financial_accounts WHERE id = 'fa_race'`
        expect(left!.n).toBe(1)
      })
    )
  })
})
