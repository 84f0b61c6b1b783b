import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope, startPlatform, type TestPlatform } from "../support/platform.js"
import { createWallet, fund, transfer } from "./support.js"

interface Listed {
  readonly id: string
  readonly transfer_id: string
}

/**
 * An account's and a transaction's book transfers, paged with every order field, direction and
 * `book` filter (docs/ledger.md#an-accounts-book-transfers, docs/api.md#paging): by `page` the
 * same rows as one whole page lists, and by `starting_after` while transfers to both lists are
 * being posted, never overlapping or skipping a row that was there when the walk began.
 */
describe.each(STORE_KINDS)("book-transfer lists paged on %s", (kind) => {
  let platform: TestPlatform
  let account: string
  let other: string
  let transactionId: string

  beforeAll(async () => {
    platform = await startPlatform(kind)
    account = (await createWallet(platform, "A")).financial_account_id
    other = (await createWallet(platform, "B")).financial_account_id
    transactionId = (await fund(platform, account, 100_000)).transaction_id
    await fund(platform, other, 1_000)
    // Wires land in the transaction's list too, book transfers touch the other wallet.
    for (let index = 0; index < 8; index += 1) {
      const posted = await transfer(platform, {
        paymentRail: "wire",
        amount: 10 * (1 + (index % 3)),
        from_financial_account_id: account,
        transaction_id: transactionId
      })
      expect(posted.status, posted.text).toBe(200)
      const moved = await transfer(platform, {
        paymentRail: "book",
        amount: 10 * (1 + (index % 2)),
        from_financial_account_id: index % 2 === 0 ? account : other,
        to_financial_account_id: index % 2 === 0 ? other : account
      })
      expect(moved.status, moved.text).toBe(200)
    }
  })
  afterAll(async () => {
    await platform?.close()
  })

  const lists = () => [
    { path: `/v1/financial-accounts/${account}/book-transfers`, filters: ["", "book=principal", "book=cash"] },
    { path: `/v1/transactions/${transactionId}/book-transfers`, filters: ["", "book=principal", "book=cash"] }
  ]

  const get = async (path: string, query: string) => {
    const response = await platform.request("GET", `${path}?${query}`)
    expect(response.status, `${path}?${query}: ${response.text}`).toBe(200)
    return response.body as { data: Array<Listed>; total_count: number }
  }

  /** Walks a list with starting_after; returns every row in the order seen. */
  const walk = async (path: string, query: string, size: number) => {
    const walked: Array<Listed> = []
    let after: string | undefined
    for (let guard = 0; guard < 200; guard += 1) {
      const page = await get(path, `${query}&page_size=${size}${after === undefined ? "" : `&starting_after=${after}`}`)
      walked.push(...page.data)
      if (page.data.length < size) return walked
      after = page.data.at(-1)!.id
    }
    throw new Error("walk did not end")
  }

  const ordersOf = async (path: string) => {
    const error = expectEnvelope(await platform.request("GET", `${path}?order_by=nope`), 400, { param: "order_by" })
    const fields = error.message
      .replace(/.*Valid fields: /, "")
      .replace(/\.$/, "")
      .split(", ")
    expect(fields).toEqual(["posted_at", "created_at"])
    return ["", ...fields.flatMap((field) => [`order_by=${field}`, `order_by=${field}&ascending=false`])]
  }

  it("pages by number exactly as one page lists, with the exact total, for every order and book", async () => {
    for (const list of lists()) {
      for (const filter of list.filters) {
        for (const order of await ordersOf(list.path)) {
          const query = [filter, order].filter((part) => part !== "").join("&")
          const whole = await get(list.path, `${query}&page_size=100`)
          expect(whole.total_count, `${list.path}?${query}`).toBe(whole.data.length)
          expect(whole.data.length).toBeGreaterThan(3)
          const paged: Array<string> = []
          for (let page = 1; page <= Math.ceil(whole.data.length / 3); page += 1) {
            const one = await get(list.path, `${query}&page_size=3&page=${page}`)
            expect(one.total_count).toBe(whole.total_count)
            paged.push(...one.data.map((row) => row.id))
          }
          expect(paged, `${list.path}?${query}`).toEqual(whole.data.map((row) => row.id))
        }
      }
    }
  }, 240_000)

  it("lists an account's book transfers as exactly those of its transfers, in order, whatever the book", async () => {
    const transfers = (await get("/v1/transfers", "page_size=100")).data as unknown as Array<{
      id: string
      from_financial_account_id: string
      to_financial_account_id: string
    }>
    const ofAccount = transfers.filter((row) => row.from_financial_account_id === account || row.to_financial_account_id === account)
    expect(ofAccount.length).toBeGreaterThan(10)
    const path = `/v1/financial-accounts/${account}/book-transfers`
    for (const filter of ["", "book=principal", "book=cash"]) {
      for (const [order, key] of [
        ["", "posted_at"],
        ["order_by=posted_at&ascending=true", "posted_at"]
      ] as const) {
        const query = [filter, order, "page_size=100"].filter((part) => part !== "").join("&")
        const listed = (await get(path, query)) as unknown as {
          data: Array<{ id: string; transfer_id: string; posted_at: string; amount: { amount: number }; entries: Array<any> }>
          total_count: number
        }
        expect(listed.total_count, query).toBe(ofAccount.length)
        expect(new Set(listed.data.map((row) => row.transfer_id)), query).toEqual(new Set(ofAccount.map((row) => row.id)))
        for (const row of listed.data) {
          const books = row.entries.filter((entry) => entry.financial_account_id === account).map((entry) => entry.book)
          expect(books.sort()).toEqual(["cash", "principal"])
        }
        // In the order asked for, ties broken on id in the same direction.
        const descending = order === "" || order.includes("ascending=false")
        const value = (row: (typeof listed.data)[number]) => Date.parse(row[key])
        const expected = [...listed.data].sort((x, y) => {
          const by = value(x) - value(y) || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0)
          return descending ? -by : by
        })
        expect(
          listed.data.map((row) => row.id),
          query
        ).toEqual(expected.map((row) => row.id))
      }
    }
    // A book no posting writes lists nothing; its cursor is not in the list.
    const first = (await get(path, "page_size=1")).data[0]!
    expect(await get(path, "book=fees")).toEqual({ data: [], total_count: 0, has_more: false })
    expectEnvelope(await platform.request("GET", `${path}?book=fees&starting_after=${first.id}`), 400, { param: "starting_after" })
    // Another account's book transfer, or an unknown id, is not a cursor of this list.
    const others = (await get(`/v1/financial-accounts/${other}/book-transfers`, "page_size=100")).data
    const notOurs = others.find((row) => !ofAccount.some((mine) => mine.id === row.transfer_id))!
    expect(notOurs).toBeDefined()
    for (const cursor of [notOurs.id, "00000000-0000-7000-8000-000000000000"]) {
      for (const query of ["", "book=principal&", "order_by=posted_at&"]) {
        expectEnvelope(await platform.request("GET", `${path}?${query}starting_after=${cursor}`), 400, { param: "starting_after" })
      }
    }
  })

  it("walks with starting_after across inserts without overlap or skip, for every order and book", async () => {
    let inserting = true
    const inserted = new Set<string>()
    const extras: Array<string> = []
    const writer = (async () => {
      // Each posting adds to both lists: a wire of the account, in the transaction. A bounded
      // number, so that an oldest-first walk, which reaches the new rows, ends.
      while (inserting && inserted.size < 60) {
        const posted = await transfer(platform, {
          paymentRail: "wire",
          amount: 20,
          from_financial_account_id: account,
          transaction_id: transactionId
        })
        expect(posted.status, posted.text).toBe(200)
        inserted.add(posted.body.id)
      }
    })()
    try {
      for (const list of lists()) {
        for (const filter of list.filters) {
          for (const order of await ordersOf(list.path)) {
            const query = [filter, order].filter((part) => part !== "").join("&")
            const before = (await get(list.path, `${query}&page_size=100`)).data
            const walked = await walk(list.path, query, 3)
            const ids = walked.map((row) => row.id)
            expect(new Set(ids).size, `${list.path}?${query}: a row twice`).toBe(ids.length)
            // Every row that was there, once and in its order; whatever else was posted meanwhile.
            const known = new Set(before.map((row) => row.id))
            expect(
              ids.filter((id) => known.has(id)),
              `${list.path}?${query}`
            ).toEqual(before.map((row) => row.id))
            extras.push(...walked.filter((row) => !known.has(row.id)).map((row) => row.transfer_id))
          }
        }
      }
    } finally {
      inserting = false
      await writer
    }
    // What a walk saw beyond its start was posted by the writer (checked once its postings answered).
    expect(inserted.size).toBeGreaterThan(0)
    for (const transferId of extras) expect(inserted).toContain(transferId)
  }, 240_000)
})
