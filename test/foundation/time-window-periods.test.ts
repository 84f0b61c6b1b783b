import { expectedListCounts, maintainedListCounts } from "@issuing/core/testing"
import { Effect } from "effect"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createWallet, fund } from "../ledger/support.js"
import { STORE_KINDS } from "../support/databases.js"
import { totalCountOf, walkList } from "../support/lists.js"
import {
  requestAtClock,
  type ServedPlatform,
  servePlatform,
  startPlatform,
  TEST_VAULT_KEY,
  type TestPlatform
} from "../support/platform.js"

interface Row {
  readonly id: string
  readonly created_at: string
  readonly [field: string]: unknown
}

const MINUTE = 60_000
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR
const SETTINGS = { rateLimitPerSecond: 100_000, rateLimitBurst: 100_000 }

/**
 * The clocks rows are written at: the platform's, and platforms over the same database whose clocks
 * are behind (an hour and ten minutes, two days and three hours, 45 days: another month) or ahead
 * (30 minutes; 3 hours: past the hour the counts per period are read up to, so counted over the index).
 */
const OFFSETS_MS = [0, -(HOUR + 10 * MINUTE), -(2 * DAY + 3 * HOUR), -45 * DAY, 30 * MINUTE, 3 * HOUR] as const

// docs/decisions.md "Time filters and total_count": a time-filtered total_count sums the counts kept
// per UTC month, day and hour of the rows' own created_at, and counts the window's partial hours over
// the index. Rows written through platforms whose clocks are behind or ahead, pending transfers
// settled later (their status, and their transaction's, moving in a past period), and every window
// compared with the rows the list holds: all, none, exactly one hour, day or month, several periods
// with partial edges, edges at a row's exact instant (gt vs gte, lt vs lte), with and without each
// list's other filters, on both stores; and random windows, whose total_count equals the rows walked
// page by page through the same window.
describe.each(STORE_KINDS)("time-filtered total_count over counts per period on %s", (kind) => {
  let platform: TestPlatform
  const served: Array<ServedPlatform> = []
  let a: string
  let b: string
  const pending: Array<string> = []

  /** A request to the platform whose clock is OFFSETS_MS[clock], with the first organization's key. */
  const requestAt = (clock: number, method: string, path: string, body?: unknown) =>
    requestAtClock(platform, served, clock, method, path, body)

  beforeAll(async () => {
    platform = await startPlatform(kind, SETTINGS)
    for (const offsetMs of OFFSETS_MS.slice(1)) {
      served.push(await servePlatform(platform.database, [TEST_VAULT_KEY], SETTINGS, { clockOffsetMs: offsetMs }))
    }
    a = (await createWallet(platform, "A")).financial_account_id
    b = (await createWallet(platform, "B")).financial_account_id
    await fund(platform, a, 1_000)
    for (let clock = 0; clock < OFFSETS_MS.length; clock++) {
      for (const [from, to] of [
        [a, b],
        [b, a],
        [a, b]
      ] as const) {
        const response = await requestAt(clock, "POST", "/v1/transfers", {
          paymentRail: "book",
          amount: 1,
          currency: "USD",
          from_financial_account_id: from,
          to_financial_account_id: to
        })
        expect(response.status, response.text).toBe(200)
      }
      const inbound = await requestAt(clock, "POST", "/v1/transfers", {
        paymentRail: "ach_same_day",
        amount: 5,
        currency: "USD",
        to_financial_account_id: clock % 2 === 0 ? a : b
      })
      expect(inbound.status, inbound.text).toBe(200)
      expect(inbound.body.status).toBe("PENDING")
      pending.push(inbound.body.id)
    }
  }, 120_000)
  afterAll(async () => {
    for (const platformAhead of served) await platformAhead.close()
    await platform?.close()
  })

  /** Every row of a list with a query (newest first), walked page by page by starting_after. */
  const walk = (path: string, query: string, pageSize = 100) => walkList<Row>(platform, path, query, pageSize)
  const totalOf = (path: string, query: string) => totalCountOf(platform, path, query)

  /** Each list with its filters, and which of the whole list's rows each filter keeps. */
  const cases = () =>
    [
      ["/v1/events", "", () => true],
      ["/v1/events", "type=transfer.created", (row: Row) => row.type === "transfer.created"],
      ["/v1/transfers", "", () => true],
      [
        "/v1/transfers",
        `financial_account_id=${b}`,
        (row: Row) => row.from_financial_account_id === b || row.to_financial_account_id === b
      ],
      ["/v1/transfers", "status=PENDING", (row: Row) => row.status === "PENDING"],
      [
        "/v1/transfers",
        `status=SETTLED&payment_rail=ach_same_day&financial_account_id=${a}`,
        (row: Row) =>
          row.status === "SETTLED" &&
          row.payment_rail === "ach_same_day" &&
          (row.from_financial_account_id === a || row.to_financial_account_id === a)
      ],
      ["/v1/transactions", "", () => true],
      ["/v1/transactions", "status=PENDING", (row: Row) => row.status === "PENDING"]
    ] as const

  const iso = (ms: number) => new Date(ms).toISOString()
  const q = (name: string, at: string) => `created[${name}]=${encodeURIComponent(at)}`

  /** The windows checked against `times` (the created_at of a list's rows), each with its expected count. */
  const windowsOver = (times: ReadonlyArray<string>): Array<readonly [string, number]> => {
    const count = (keep: (t: string) => boolean) => times.filter(keep).length
    const windows: Array<readonly [string, number]> = [
      ["created[gte]=2000-01-01T00:00:00Z&created[lte]=2999-01-01T00:00:00Z", times.length],
      ["created[lt]=2000-01-01T00:00:00Z", 0],
      ["created[gt]=2999-01-01T00:00:00Z", 0]
    ]
    // Pivots: a row's instant in each hour that has rows (one per clock, about), at most 8.
    const pivots = [...new Map([...times].sort().map((t) => [t.slice(0, 13), t])).values()].slice(0, 8)
    for (const at of pivots) {
      const ms = Date.parse(at)
      windows.push(
        [q("gte", at), count((t) => t >= at)],
        [q("gt", at), count((t) => t > at)],
        [q("lte", at), count((t) => t <= at)],
        [q("lt", at), count((t) => t < at)]
      )
      // Exactly the row's hour, day and month, each a whole period.
      const hour = Math.floor(ms / HOUR) * HOUR
      const day = Math.floor(ms / DAY) * DAY
      const month = Date.UTC(new Date(ms).getUTCFullYear(), new Date(ms).getUTCMonth(), 1)
      const nextMonth = Date.UTC(new Date(ms).getUTCFullYear(), new Date(ms).getUTCMonth() + 1, 1)
      for (const [from, to] of [
        [hour, hour + HOUR],
        [day, day + DAY],
        [month, nextMonth]
      ] as const) {
        windows.push([`${q("gte", iso(from))}&${q("lt", iso(to))}`, count((t) => t >= iso(from) && t < iso(to))])
      }
    }
    if (times.length === 0) return windows
    // Several periods with partial edges: from a millisecond after the first row to one before the last.
    const sorted = [...times].sort()
    const [first, last] = [Date.parse(sorted[0]!), Date.parse(sorted.at(-1)!)]
    windows.push(
      [`${q("gt", iso(first))}&${q("lt", iso(last))}`, count((t) => t > iso(first) && t < iso(last))],
      [`${q("gte", iso(first + 1))}&${q("lte", iso(last - 1))}`, count((t) => t >= iso(first + 1) && t <= iso(last - 1))],
      [`${q("gt", iso(last))}&${q("lt", iso(first))}`, 0]
    )
    return windows
  }

  const checkEveryWindow = async (only: (filter: string) => boolean = () => true) => {
    const whole = new Map<string, ReadonlyArray<Row>>()
    for (const [path, filter, keeps] of cases()) {
      if (!only(filter)) continue
      if (!whole.has(path)) whole.set(path, await walk(path, ""))
      const times = whole
        .get(path)!
        .filter((row) => keeps(row))
        .map((row) => row.created_at)
      for (const [window, expected] of windowsOver(times)) {
        expect(await totalOf(path, `${filter}${filter === "" ? "" : "&"}${window}`), `${path}?${filter}&${window}`).toBe(expected)
      }
    }
  }

  const checkKeptCounts = () =>
    platform.instance.runtime.runPromise(
      Effect.gen(function* () {
        expect(yield* maintainedListCounts).toEqual(yield* expectedListCounts)
      }) as Effect.Effect<void, unknown, never>
    )

  it("is exact for every window over rows written with clocks behind and ahead", async () => {
    const spans = new Set((await walk("/v1/transfers", "")).map((row) => row.created_at.slice(0, 7)))
    expect(spans.size, "the rows span two months").toBeGreaterThan(1)
    await checkKeptCounts()
    await checkEveryWindow()
  }, 120_000)

  it("stays exact when rows of past periods change status", async () => {
    for (const id of pending) {
      const settled = await platform.request("POST", `/v1/simulate/transfers/${id}/settle`)
      expect(settled.status, settled.text).toBe(200)
    }
    await checkKeptCounts()
    await checkEveryWindow((filter) => filter.includes("status="))
  }, 120_000)

  it("gives the count of the rows walked page by page through random windows", async () => {
    const whole = await walk("/v1/events", "")
    const instants = [...new Set(whole.map((row) => Date.parse(row.created_at)))]
    // A window's bounds: a row's instant, a millisecond either side of one, or an hour or day edge near one.
    const bound = fc
      .tuple(fc.constantFrom(...instants), fc.constantFrom(-DAY, -HOUR, -1, 0, 0, 1, HOUR, DAY), fc.boolean())
      .map(([at, shift, edge]) => iso(edge && Math.abs(shift) >= HOUR ? Math.floor((at + shift) / HOUR) * HOUR : at + shift))
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: cases().length - 1 }),
        fc.option(fc.tuple(fc.constantFrom("gte", "gt"), bound), { nil: undefined }),
        fc.option(fc.tuple(fc.constantFrom("lte", "lt"), bound), { nil: undefined }),
        async (index, lower, upper) => {
          const [path, filter] = cases()[index]!
          const query = [filter, ...[lower, upper].flatMap((side) => (side === undefined ? [] : [q(side[0], side[1])]))]
            .filter((part) => part !== "")
            .join("&")
          const walked = await walk(path, query, 4)
          expect(await totalOf(path, query), `${path}?${query}`).toBe(walked.length)
        }
      ),
      { numRuns: 30, seed: 49 }
    )
  }, 120_000)
})
