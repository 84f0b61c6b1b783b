import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createWallet, fund, transfer } from "../ledger/support.js"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope, startPlatform, type TestPlatform } from "../support/platform.js"

interface Row {
  readonly id: string
  readonly created_at: string
}

interface ListPage {
  readonly data: Array<Row & Record<string, unknown>>
  readonly total_count: number
  readonly has_more: boolean
}

const BOUNDS = {
  gte: (at: string, pivot: string) => at >= pivot,
  gt: (at: string, pivot: string) => at > pivot,
  lte: (at: string, pivot: string) => at <= pivot,
  lt: (at: string, pivot: string) => at < pivot
} as const

// docs/api.md#time-filters: created[gte|gt|lte|lt] on events, transfers and transactions, over
// HTTP on both stores: the page, its total_count and has_more, alone and with each list's filters.
describe.each(STORE_KINDS)("created[…] time filters on %s", (kind) => {
  let platform: TestPlatform
  let a: string
  let b: string

  beforeAll(async () => {
    platform = await startPlatform(kind)
    a = (await createWallet(platform, "A")).financial_account_id
    b = (await createWallet(platform, "B")).financial_account_id
    await fund(platform, a, 10_000)
    await fund(platform, b, 10_000)
    for (let index = 0; index < 6; index += 1) {
      // A pause now and then, so the rows span several milliseconds (ties are allowed too).
      if (index % 2 === 0) await new Promise((resolve) => setTimeout(resolve, 3))
      const moved = await transfer(platform, {
        paymentRail: "book",
        amount: 10 + index,
        from_financial_account_id: index % 2 === 0 ? a : b,
        to_financial_account_id: index % 2 === 0 ? b : a
      })
      expect(moved.status, moved.text).toBe(200)
    }
    await fund(platform, b, 700)
  })
  afterAll(async () => {
    await platform?.close()
  })

  const get = async (path: string, query: string): Promise<ListPage> => {
    const response = await platform.request("GET", `${path}?${query}`)
    expect(response.status, `${path}?${query}: ${response.text}`).toBe(200)
    return response.body as ListPage
  }

  const lists = () =>
    [
      ["/v1/events", ["", "type=transfer.created"]],
      ["/v1/transfers", ["", `financial_account_id=${a}`, "payment_rail=book", "status=SETTLED&payment_rail=book"]],
      ["/v1/transactions", ["", "status=SETTLED"]]
    ] as const

  it("lists exactly the items of the window, newest or oldest first, with an exact total and has_more", async () => {
    for (const [path, filters] of lists()) {
      for (const filter of filters) {
        const whole = (await get(path, `${filter}&page_size=100`)).data
        expect(whole.length, `${path}?${filter}`).toBeGreaterThan(0)
        const times = [...new Set(whole.map((row) => row.created_at))].sort()
        for (const pivot of [times[0]!, times[Math.floor(times.length / 2)]!, times.at(-1)!]) {
          for (const [bound, keep] of Object.entries(BOUNDS)) {
            const query = `${filter}&created[${bound}]=${encodeURIComponent(pivot)}`
            const expected = whole.filter((row) => keep(row.created_at, pivot)).map((row) => row.id)
            const listed = await get(path, `${query}&page_size=100`)
            expect(
              listed.data.map((row) => row.id),
              `${path}?${query}`
            ).toEqual(expected)
            expect(listed.total_count, `${path}?${query}`).toBe(expected.length)
            expect(listed.has_more).toBe(false)
            const oldest = await get(path, `${query}&order_by=created_at&page_size=100`)
            expect(oldest.data.map((row) => row.id)).toEqual([...expected].reverse())
            // Paged by two, by number and by starting_after, within the window.
            if (expected.length > 2) {
              const first = await get(path, `${query}&page_size=2`)
              expect(first.has_more).toBe(true)
              expect(first.total_count).toBe(expected.length)
              const next = await get(path, `${query}&page_size=2&starting_after=${first.data[1]!.id}`)
              expect(next.data.map((row) => row.id)).toEqual(expected.slice(2, 4))
              expect(next.has_more).toBe(expected.length > 4)
            }
          }
        }
        // Two bounds: a window between them; bounds leaving nothing between them list nothing.
        const [from, to] = [times[0]!, times.at(-1)!]
        const between = await get(
          path,
          `${filter}&created[gt]=${encodeURIComponent(from)}&created[lt]=${encodeURIComponent(to)}&page_size=100`
        )
        expect(between.data.map((row) => row.id)).toEqual(
          whole.filter((row) => row.created_at > from && row.created_at < to).map((row) => row.id)
        )
        expect(await get(path, `${filter}&created[gte]=${encodeURIComponent(to)}&created[lt]=${encodeURIComponent(from)}`)).toEqual({
          data: [],
          total_count: 0,
          has_more: false
        })
      }
    }
  })

  it("takes any RFC 3339 offset and fraction, and refuses anything else naming the parameter", async () => {
    const whole = (await get("/v1/transfers", "page_size=100")).data
    const newest = whole[0]!
    // The same instant written in another offset, and a fraction finer than the stored milliseconds.
    const instant = new Date(newest.created_at)
    const shifted = new Date(instant.getTime() + 2 * 3_600_000).toISOString().replace("Z", "+02:00")
    expect((await get("/v1/transfers", `created[gte]=${encodeURIComponent(shifted)}`)).data[0]!.id).toBe(newest.id)
    const finer = newest.created_at.replace("Z", "0001Z")
    expect((await get("/v1/transfers", `created[gte]=${encodeURIComponent(finer)}`)).data.map((row) => row.id)).not.toContain(newest.id)
    expect((await get("/v1/transfers", `created[lte]=${encodeURIComponent(finer)}`)).data[0]!.id).toBe(newest.id)
    for (const path of ["/v1/events", "/v1/transfers", "/v1/transactions"]) {
      for (const bound of Object.keys(BOUNDS)) {
        for (const value of ["yesterday", "2026-02-30T00:00:00Z", "1700000000", ""]) {
          expectEnvelope(await platform.request("GET", `${path}?created[${bound}]=${value}`), 400, {
            code: "invalid_request",
            param: `created[${bound}]`
          })
        }
      }
      const ordered = expectEnvelope(await platform.request("GET", `${path}?created[gte]=2020-01-01T00:00:00Z&order_by=updated_at`), 400, {
        param: "order_by"
      })
      expect(ordered.message).toContain("created_at")
      expectEnvelope(await platform.request("GET", `${path}?created[gte]=2020-01-01T00:00:00Z&created[foo]=1`), 400, {
        param: "created[foo]"
      })
    }
  })
})
