import { SqlClient } from "@effect/sql"
import { Access, CreateTransfer, CreateWallet, Ledger, MAX_AMOUNT_MINOR, MAX_TOTAL_MINOR, type PostedTransfer, toInt } from "@issuing/core"
import { Effect, Either, Schema } from "effect"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { startPlatform, type TestPlatform } from "../support/platform.js"

const decodeTransfer = Schema.decodeUnknownSync(CreateTransfer)
const decodeWallet = Schema.decodeUnknownSync(CreateWallet)

/**
 * Property tests over random sequences of transfers on every rail and settlements, run partly
 * concurrently (so SQLite's group commit and PostgreSQL's row locks are exercised):
 * - every book transfer balances per currency, and every transfer has exactly one book transfer;
 * - every balance row equals the sum of its entries;
 * - no wallet account is ever below zero;
 * - every wallet's balance equals a model that applies exactly the transfers that succeeded;
 * - no running debit or credit total passes 2^53 − 1 (the posting refuses: balance_limit_exceeded),
 *   so every balance the API shows is exact.
 */
const WALLETS = [{ currency: "USD" }, { currency: "USD" }, { currency: "USD" }, { currency: "EUR" }]

type Op =
  | { readonly kind: "book"; readonly from: number; readonly to: number; readonly amount: number; readonly currency: string }
  | {
      readonly kind: "in" | "out"
      readonly rail: "ach_same_day" | "wire" | "fednow_instant"
      readonly wallet: number
      readonly amount: number
      readonly currency: string
    }
  | { readonly kind: "settle"; readonly pick: number }

// Mostly small amounts; some at the per-transfer cap, so running totals cross 2^53 − 1 within a run.
const amount = fc.oneof(
  { arbitrary: fc.integer({ min: 1, max: 500 }), weight: 3 },
  { arbitrary: fc.constantFrom(MAX_AMOUNT_MINOR, MAX_AMOUNT_MINOR - 1), weight: 2 }
)
const currency = fc.constantFrom("USD", "USD", "USD", "EUR")
const wallet = fc.integer({ min: 0, max: WALLETS.length - 1 })
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant("book" as const), from: wallet, to: wallet, amount, currency }),
  fc.record({
    kind: fc.constantFrom("in" as const, "out" as const),
    rail: fc.constantFrom("ach_same_day" as const, "wire" as const, "fednow_instant" as const),
    wallet,
    amount,
    currency
  }),
  fc.record({ kind: fc.constant("settle" as const), pick: fc.nat() })
)
/** Operations in groups; the operations of a group run concurrently. */
const scenario = fc.array(fc.array(op, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 6 })

const EXPECTED_FAILURES = new Set(["insufficient_funds", "currency_mismatch", "same_financial_account", "balance_limit_exceeded"])

describe.each(STORE_KINDS)("ledger properties on %s", (kind) => {
  let platform: TestPlatform
  beforeAll(async () => {
    platform = await startPlatform(kind)
  })
  afterAll(async () => {
    await platform?.close()
  })

  const run = <A, E>(effect: Effect.Effect<A, E, any>) => platform.instance.runtime.runPromise(effect as Effect.Effect<A, E, never>)

  const checkInvariants = () =>
    run(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const unbalanced = yield* sql`SELECT book_transfer_id, currency,
          SUM(CASE WHEN entry_type = 'DEBIT' THEN amount_minor ELSE -amount_minor END) AS net
        FROM issuing_book_entries GROUP BY book_transfer_id, currency
        HAVING SUM(CASE WHEN entry_type = 'DEBIT' THEN amount_minor ELSE -amount_minor END) <> 0`
        expect(unbalanced).toEqual([])
        const orphans = yield* sql`SELECT t.id FROM issuing_transfers t
        LEFT JOIN issuing_book_transfers bt ON bt.transfer_id = t.id WHERE bt.id IS NULL`
        expect(orphans).toEqual([])
        const entrySums = yield* sql`SELECT financial_account_id, book,
          SUM(CASE WHEN entry_type = 'DEBIT' THEN amount_minor ELSE 0 END) AS debits,
          SUM(CASE WHEN entry_type = 'CREDIT' THEN amount_minor ELSE 0 END) AS credits
        FROM issuing_book_entries GROUP BY financial_account_id, book`
        const sums = new Map(entrySums.map((row: any) => [`${row.financial_account_id}/${row.book}`, row]))
        const balances = yield* sql`SELECT b.*, a.kind FROM issuing_balances b
        JOIN issuing_financial_accounts a ON a.id = b.financial_account_id`
        for (const row of balances as ReadonlyArray<any>) {
          // Read as text-exact bigints: a rounded number could hide a total past the limit.
          expect(BigInt(row.debits_minor) <= BigInt(MAX_TOTAL_MINOR) && BigInt(row.credits_minor) <= BigInt(MAX_TOTAL_MINOR)).toBe(true)
          const sum: any = sums.get(`${row.financial_account_id}/${row.book}`)
          expect(toInt(row.debits_minor)).toBe(sum === undefined ? 0 : toInt(sum.debits))
          expect(toInt(row.credits_minor)).toBe(sum === undefined ? 0 : toInt(sum.credits))
          if (row.kind === "wallet" && row.book === "principal") {
            expect(toInt(row.credits_minor) - toInt(row.debits_minor)).toBeGreaterThanOrEqual(0)
          }
        }
      })
    )

  // Each group of operations runs concurrently as single requests, or as one batch (POST /v1/transfers/batch).
  it.each(["single transfers", "batches"] as const)("keeps every invariant over random transfer sequences, posted as %s", async (mode) => {
    let limitRefusals = 0
    await fc.assert(
      fc.asyncProperty(scenario, async (groups) => {
        const org = await run(Effect.flatMap(Access, (access) => access.createOrganization("property")))
        const programId = org.program_id
        const accounts = await run(
          Effect.flatMap(Ledger, (ledger) =>
            Effect.forEach(WALLETS, (w) =>
              Effect.map(
                ledger.createWallet(programId, decodeWallet({ holder: { name: "Holder" }, currency: w.currency })),
                (x) => x.financial_account_id
              )
            )
          )
        )
        const model = accounts.map(() => 0)
        const pending: Array<string> = []
        // Start the first wallet and the USD settlement account 9 × 10^15 in: a few large
        // transfers of the run then cross 2^53 − 1, and the posting must refuse them.
        await run(
          Effect.flatMap(Ledger, (ledger) =>
            Effect.forEach(Array.from({ length: 9 }), () =>
              ledger.postTransfer(
                programId,
                decodeTransfer({
                  payment_rail: "fednow_instant",
                  amount: MAX_AMOUNT_MINOR,
                  currency: "USD",
                  to_financial_account_id: accounts[0]
                })
              )
            )
          )
        )
        model[0] = 9 * MAX_AMOUNT_MINOR

        type TransferOp = Exclude<Op, { readonly kind: "settle" }>
        // Decoded as the API decodes a body: the service takes decoded input.
        const input = (operation: TransferOp) =>
          decodeTransfer(
            operation.kind === "book"
              ? {
                  payment_rail: "book",
                  amount: operation.amount,
                  currency: operation.currency,
                  from_financial_account_id: accounts[operation.from],
                  to_financial_account_id: accounts[operation.to]
                }
              : operation.kind === "in"
                ? {
                    payment_rail: operation.rail,
                    amount: operation.amount,
                    currency: operation.currency,
                    to_financial_account_id: accounts[operation.wallet]
                  }
                : {
                    payment_rail: operation.rail,
                    amount: operation.amount,
                    currency: operation.currency,
                    from_financial_account_id: accounts[operation.wallet]
                  }
          )
        const record = (
          operation: TransferOp,
          result: Either.Either<PostedTransfer, { readonly _tag: string; readonly code?: string }>
        ) => {
          if (Either.isLeft(result)) {
            const error = result.left
            if (error._tag !== "BusinessRuleViolation" || !EXPECTED_FAILURES.has(error.code!)) {
              throw new Error(`Unexpected failure ${JSON.stringify(error)}`)
            }
            if (error.code === "balance_limit_exceeded") limitRefusals += 1
            return
          }
          const { transfer } = result.right
          if (transfer.status === "PENDING") pending.push(transfer.id)
          if (operation.kind === "book") {
            model[operation.from]! -= operation.amount
            model[operation.to]! += operation.amount
          } else if (operation.kind === "in") model[operation.wallet]! += operation.amount
          else model[operation.wallet]! -= operation.amount
        }
        const settle = (pick: number) =>
          Effect.flatMap(Ledger, (ledger) => {
            if (pending.length === 0) return Effect.void
            const id = pending.splice(pick % pending.length, 1)[0]!
            return Effect.orDie(ledger.settleTransfer(programId, id))
          })
        const single = (operation: Op) =>
          operation.kind === "settle"
            ? settle(operation.pick)
            : Effect.flatMap(Ledger, (ledger) =>
                Effect.map(Effect.either(ledger.postTransfer(programId, input(operation))), (result) => record(operation, result))
              )
        const batched = (group: ReadonlyArray<Op>) =>
          Effect.gen(function* () {
            for (const operation of group) if (operation.kind === "settle") yield* settle(operation.pick)
            const transfers = group.filter((operation): operation is TransferOp => operation.kind !== "settle")
            if (transfers.length === 0) return
            const ledger = yield* Ledger
            const results = yield* ledger.postTransfers(programId, transfers.map(input), false)
            transfers.forEach((operation, index) => {
              record(operation, results[index]!)
            })
          })

        for (const group of groups) {
          await run(mode === "batches" ? batched(group) : Effect.forEach(group, single, { concurrency: "unbounded", discard: true }))
        }
        const actual = await run(
          Effect.flatMap(Ledger, (ledger) =>
            Effect.forEach(accounts, (id) => Effect.map(ledger.getFinancialAccount(programId, id), (a) => a.balance.amount))
          )
        )
        expect(actual).toEqual(model)
        await checkInvariants()
      }),
      { numRuns: 25 }
    )
    // The runs did reach the limit: the refusal path was exercised, not just possible.
    expect(limitRefusals).toBeGreaterThan(0)
  })

  it("refuses to update or delete posted entries", async () => {
    await expect(run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE issuing_book_entries SET amount_minor = 1`))).rejects.toThrow()
    await expect(run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DELETE FROM issuing_book_transfers`))).rejects.toThrow()
  })
})
