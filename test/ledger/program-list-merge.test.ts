import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { issueCard } from "../cards/helpers.js"
import { STORE_KINDS } from "../support/databases.js"
import { inListOrder, type ListedRow, totalCountOf, walkList } from "../support/lists.js"
import {
  requestAtClock,
  type ServedPlatform,
  servePlatform,
  startPlatform,
  TEST_VAULT_KEY,
  type TestPlatform
} from "../support/platform.js"
import { createWallet, fund } from "./support.js"

const MINUTE = 60_000
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR
const SETTINGS = { rateLimitPerSecond: 100_000, rateLimitBurst: 100_000 }

/** The clocks rows are written at: the platform's, and two platforms over its database behind it. */
const OFFSETS_MS = [0, -(2 * DAY + 3 * HOUR), -(HOUR + 10 * MINUTE)] as const

const TRANSFER_STATUSES = ["PENDING", "SETTLED", "RETURNED"] as const
const RAILS = ["book", "fednow_instant", "ach_same_day", "wire", "card"] as const
const TRANSACTION_STATUSES = ["PENDING", "SETTLED", "VOIDED", "EXPIRED", "DECLINED"] as const

// A program whose history holds every transfer status and rail and every transaction status,
// written through clocks days and hours apart, is listed through random filters, orders,
// directions, time windows and page sizes, and each list must be exactly the rows a model computes
// from the objects read one by one: walked by starting_after, by page number, and its total_count.
// The lists read the program's own index, a status range or the merge of several
// (docs/decisions.md "The program's lists as merged status ranges", tried and not taken).
describe.each(STORE_KINDS)("the program's lists over every status and rail on %s", (kind) => {
  let platform: TestPlatform
  const served: Array<ServedPlatform> = []
  const transfers: Array<ListedRow> = []
  const transactions: Array<ListedRow> = []

  const requestAt = (clock: number, method: string, path: string, body?: unknown) =>
    requestAtClock(platform, served, clock, method, path, body)
  const ok = async (response: Promise<{ status: number; text: string; body: any }>) => {
    const answered = await response
    expect(answered.status, answered.text).toBe(200)
    return answered.body
  }

  beforeAll(async () => {
    platform = await startPlatform(kind, SETTINGS)
    for (const clockOffsetMs of OFFSETS_MS.slice(1)) {
      served.push(await servePlatform(platform.database, [TEST_VAULT_KEY], SETTINGS, { clockOffsetMs }))
    }
    const walletA = await createWallet(platform, "A")
    const walletB = await createWallet(platform, "B")
    const [a, b] = [walletA.financial_account_id, walletB.financial_account_id]
    await fund(platform, a, 1_000_000)
    await fund(platform, b, 1_000_000)
    const pending: Array<string> = []
    for (let clock = 0; clock < OFFSETS_MS.length; clock++) {
      const post = (body: Record<string, unknown>) => ok(requestAt(clock, "POST", "/v1/transfers", { currency: "USD", ...body }))
      await post({ paymentRail: "book", amount: 3, from_financial_account_id: a, to_financial_account_id: b })
      await post({ paymentRail: "fednow_instant", amount: 50, to_financial_account_id: b })
      await post({ paymentRail: "book", amount: 2, from_financial_account_id: b, to_financial_account_id: a })
      for (const rail of ["ach_same_day", "wire"] as const) {
        pending.push((await post({ paymentRail: rail, amount: 7, from_financial_account_id: a })).id)
        pending.push((await post({ paymentRail: rail, amount: 9, to_financial_account_id: b })).id)
      }
    }
    // Each clock's four pending transfers (ACH out, ACH in, wire out, wire in) take a role each,
    // turned by the clock, so each rail has each: settled, settled then returned, returned while
    // pending, left PENDING.
    for (const [index, id] of pending.entries()) {
      const role = (index + Math.floor(index / 4)) % 4
      if (role <= 1) await ok(platform.request("POST", `/v1/simulate/transfers/${id}/settle`))
      if (role === 1 || role === 2) {
        const return_code = index % 4 <= 1 ? "R01" : "Account closed"
        await ok(platform.request("POST", `/v1/network/transfers/${id}/return`, { body: { return_code } }))
      }
    }
    // Card transactions: held (PENDING), cleared (SETTLED, a card transfer), reversed (VOIDED), declined.
    const card = (await issueCard(platform, walletA.id)).id
    const authorize = (amount: number) =>
      ok(platform.request("POST", "/v1/simulate/authorizations", { body: { mcc: "5411", card_id: card, amount } }))
    const held = [await authorize(40), await authorize(25), await authorize(10)]
    await ok(platform.request("POST", `/v1/simulate/transactions/${held[0].id}/clearing`, { body: {} }))
    await ok(platform.request("POST", `/v1/simulate/transactions/${held[1].id}/reversal`, { body: { amount: 25 } }))
    expect((await authorize(10_000_000)).status).toBe("DECLINED")
    // The model: every row of the program, found by SQL and read one by one through the API.
    const ids = await platform.instance.runtime.runPromise(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const of = (table: string) =>
          sql<{ id: string }>`SELECT id FROM ${sql(table)} WHERE program_id = ${platform.org.program_id}`.pipe(
            Effect.map((rows) => rows.map((row) => row.id))
          )
        return { transfers: yield* of("issuing_transfers"), transactions: yield* of("issuing_transactions") }
      }) as Effect.Effect<{ transfers: Array<string>; transactions: Array<string> }, unknown, never>
    )
    for (const id of ids.transfers) transfers.push(await ok(platform.request("GET", `/v1/transfers/${id}`)))
    for (const id of ids.transactions) transactions.push(await ok(platform.request("GET", `/v1/transactions/${id}`)))
  }, 180_000)
  afterAll(async () => {
    for (const other of served) await other.close()
    await platform?.close()
  })

  it("holds a history of many statuses and rails across days", () => {
    expect(new Set(transfers.map((row) => `${row.status} ${row.payment_rail}`)).size).toBeGreaterThanOrEqual(9)
    expect(new Set(transactions.map((row) => row.status))).toEqual(new Set(["PENDING", "SETTLED", "VOIDED", "DECLINED"]))
    expect(new Set(transfers.map((row) => String(row.created_at).slice(0, 10))).size).toBeGreaterThan(1)
  })

  const iso = (ms: number) => new Date(ms).toISOString()

  /** Random lists of `rows` with `filters` (each a field and the values it may ask), checked against the model. */
  const checkLists = async (path: string, rows: ReadonlyArray<ListedRow>, filters: ReadonlyArray<[string, ReadonlyArray<string>]>) => {
    const instants = [...new Set(rows.map((row) => Date.parse(String(row.created_at))))]
    // A bound: a row's instant, a millisecond either side of it, or an hour or a day away.
    const bound = fc
      .tuple(fc.constantFrom(...instants), fc.constantFrom(-DAY, -HOUR, -1, 0, 0, 1, HOUR, DAY))
      .map(([at, shift]) => iso(at + shift))
    await fc.assert(
      fc.asyncProperty(
        fc.tuple(...filters.map(([, values]) => fc.option(fc.constantFrom(...values), { nil: undefined }))),
        fc.constantFrom(undefined, "created_at", "updated_at"),
        fc.boolean(),
        fc.option(fc.tuple(fc.constantFrom("gte", "gt"), bound), { nil: undefined }),
        fc.option(fc.tuple(fc.constantFrom("lte", "lt"), bound), { nil: undefined }),
        fc.integer({ min: 1, max: 7 }),
        fc.nat({ max: 40 }),
        async (values, asked, ascending, lower, upper, size, pick) => {
          const windowed = [lower, upper].flatMap((side) => (side === undefined ? [] : [side]))
          // A time window orders by created_at (docs/api.md#time-filters).
          const orderBy = windowed.length > 0 && asked === "updated_at" ? "created_at" : asked
          const chosen = filters.flatMap(([field], index) => (values[index] === undefined ? [] : [[field, values[index]!] as const]))
          const query = [
            ...chosen.map(([field, value]) => `${field}=${value}`),
            ...(orderBy === undefined ? [] : [`order_by=${orderBy}&ascending=${ascending}`]),
            ...windowed.map(([name, at]) => `created[${name}]=${encodeURIComponent(at)}`)
          ].join("&")
          const inWindow = (at: string) =>
            windowed.every(([name, bound]) =>
              name === "gte" ? at >= bound : name === "gt" ? at > bound : name === "lte" ? at <= bound : at < bound
            )
          const expected = inListOrder(
            rows.filter((row) => chosen.every(([field, value]) => row[field] === value) && inWindow(String(row.created_at))),
            orderBy ?? "created_at",
            orderBy === undefined ? false : ascending
          )
          const walked = await walkList(platform, path, query, size)
          expect(
            walked.map((row) => row.id),
            `${path}?${query} by starting_after`
          ).toEqual(expected)
          expect(await totalCountOf(platform, path, query), `${path}?${query}`).toBe(expected.length)
          const page = 1 + (pick % (Math.ceil(expected.length / size) + 1))
          const byNumber = await platform.request("GET", `${path}?${query}${query === "" ? "" : "&"}page_size=${size}&page=${page}`)
          expect(byNumber.status, byNumber.text).toBe(200)
          expect(
            byNumber.body.data.map((row: ListedRow) => row.id),
            `${path}?${query}&page=${page}`
          ).toEqual(expected.slice((page - 1) * size, page * size))
        }
      ),
      { numRuns: 40, seed: 940 }
    )
  }

  it("lists the program's transfers exactly through every filter, order, direction and time window", async () => {
    await checkLists("/v1/transfers", transfers, [
      ["status", TRANSFER_STATUSES],
      ["payment_rail", RAILS]
    ])
  }, 120_000)

  it("lists the program's transactions exactly through every status, order, direction and time window", async () => {
    await checkLists("/v1/transactions", transactions, [["status", TRANSACTION_STATUSES]])
  }, 120_000)
})
