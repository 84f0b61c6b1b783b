import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createWallet, fund } from "../ledger/support.js"
import { STORE_KINDS } from "../support/databases.js"
import { totalCountOf, walkList } from "../support/lists.js"
import { startPlatform, type TestPlatform } from "../support/platform.js"

interface Row {
  readonly id: string
  readonly created_at: string
  readonly [field: string]: unknown
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

// docs/decisions.md "Time filters and total_count": a time filter's total_count counts the smaller
// side of its window — the rows inside, or the list's kept count less the rows outside — first
// probing each side up to 500 index entries. These lists hold more than twice that, in two large
// batches a moment apart and a few rows a second later (so the window's share of the time span
// misleads the choice of side for some windows), and every window's count is compared with the rows
// the list holds: the whole history, none, the edges (gt vs gte at an instant many rows share), the
// middle, with and without each list's other filters, on both stores.
describe.each(STORE_KINDS)("time-filtered total_count on long lists on %s", (kind) => {
  let platform: TestPlatform
  let a: string
  let b: string
  let c: string

  beforeAll(async () => {
    platform = await startPlatform(kind)
    a = (await createWallet(platform, "A")).financial_account_id
    b = (await createWallet(platform, "B")).financial_account_id
    c = (await createWallet(platform, "C")).financial_account_id
    await fund(platform, a, 1_000_000)
    await fund(platform, b, 1_000_000)
    const batch = async (from: string, to: (index: number) => string, size: number) => {
      const response = await platform.request("POST", "/v1/transfers/batch", {
        body: {
          transfers: Array.from({ length: size }, (_, index) => ({
            paymentRail: "book",
            amount: 1,
            currency: "USD",
            from_financial_account_id: from,
            to_financial_account_id: to(index)
          }))
        }
      })
      expect(response.status, response.text).toBe(200)
    }
    await batch(a, () => b, 600)
    await sleep(20)
    await batch(b, (index) => (index % 3 === 0 ? c : a), 600)
    await sleep(1_000)
    await fund(platform, c, 5)
    await fund(platform, a, 5)
  }, 120_000)
  afterAll(async () => {
    await platform?.close()
  })

  /** Every row of a list (newest first), paged by starting_after without a filter. */
  const everyRow = (path: string) => walkList<Row>(platform, path)
  const totalOf = (path: string, query: string) => totalCountOf(platform, path, query)

  /** Each list with its filters, and which of the whole list's rows each filter keeps. */
  const cases = () =>
    [
      ["/v1/events", ""],
      ["/v1/events", "type=transfer.created", (row: Row) => row.type === "transfer.created"],
      ["/v1/transfers", ""],
      [
        "/v1/transfers",
        `financial_account_id=${a}`,
        (row: Row) => row.from_financial_account_id === a || row.to_financial_account_id === a
      ],
      [
        "/v1/transfers",
        `financial_account_id=${c}`,
        (row: Row) => row.from_financial_account_id === c || row.to_financial_account_id === c
      ],
      ["/v1/transfers", "status=SETTLED&payment_rail=book", (row: Row) => row.status === "SETTLED" && row.payment_rail === "book"],
      ["/v1/transactions", ""],
      ["/v1/transactions", "status=SETTLED", (row: Row) => row.status === "SETTLED"]
    ] as const

  it("is exact for every window, whichever side of it is counted", async () => {
    const whole = new Map<string, ReadonlyArray<Row>>()
    for (const [path, filter, keeps] of cases()) {
      if (!whole.has(path)) whole.set(path, await everyRow(path))
      const rows = whole.get(path)!.filter((row) => keeps?.(row) ?? true)
      const times = rows.map((row) => row.created_at).sort()
      expect(times.length, `${path}?${filter}`).toBeGreaterThan(filter.includes(c) ? 200 : 1000)
      const at = (share: number) => times[Math.min(times.length - 1, Math.floor(share * times.length))]!
      const inside = (keep: (created: string) => boolean) => rows.filter((row) => keep(row.created_at)).length
      const windows: Array<readonly [string, number]> = []
      for (const pivot of [times[0]!, at(0.3), at(0.45), at(0.55), times.at(-1)!]) {
        const p = encodeURIComponent(pivot)
        windows.push(
          [`created[gte]=${p}`, inside((t) => t >= pivot)],
          [`created[gt]=${p}`, inside((t) => t > pivot)],
          [`created[lte]=${p}`, inside((t) => t <= pivot)],
          [`created[lt]=${p}`, inside((t) => t < pivot)]
        )
      }
      const [from, to] = [at(0.25), at(0.75)]
      windows.push(
        // The middle half, both bounds; the same with the tighter of two lower bounds given.
        [`created[gte]=${encodeURIComponent(from)}&created[lt]=${encodeURIComponent(to)}`, inside((t) => t >= from && t < to)],
        [
          `created[gt]=${encodeURIComponent(from)}&created[gte]=${encodeURIComponent(times[0]!)}&created[lte]=${encodeURIComponent(to)}`,
          inside((t) => t > from && t <= to)
        ],
        // The whole history and beyond; nothing before the first row or after the last.
        ["created[gte]=2000-01-01T00:00:00Z&created[lte]=2999-01-01T00:00:00Z", rows.length],
        ["created[lt]=2000-01-01T00:00:00Z", 0],
        ["created[gt]=2999-01-01T00:00:00Z", 0],
        [`created[gt]=${encodeURIComponent(to)}&created[lt]=${encodeURIComponent(from)}`, 0]
      )
      // The pivots fall inside the batches, where many rows share one instant: gt and gte differ there.
      expect(windows.slice(0, 20).some(([, n], index) => index % 4 === 0 && n > windows[index + 1]![1] + 1)).toBe(true)
      for (const [window, expected] of windows) {
        expect(await totalOf(path, `${filter}${filter === "" ? "" : "&"}${window}`), `${path}?${filter}&${window}`).toBe(expected)
      }
    }
  })

  it("counts nothing of another program's account under a time filter", async () => {
    const other = await platform.request("POST", "/v1/programs", { program: null, body: { name: "Other" } })
    expect(other.status, other.text).toBe(200)
    const query = `financial_account_id=${a}&created[gte]=2000-01-01T00:00:00Z`
    expect(await totalOf("/v1/transfers", query)).toBeGreaterThan(1000)
    const there = await platform.request("GET", `/v1/transfers?${query}`, { program: other.body.id })
    expect(there.status, there.text).toBe(200)
    expect(there.body).toEqual({ data: [], total_count: 0, has_more: false })
  })
})
