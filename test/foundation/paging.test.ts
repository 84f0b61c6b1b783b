import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope, startPlatform, type TestPlatform } from "../support/platform.js"
import { createProgram } from "./fixtures.js"

interface Listed {
  readonly id: string
  readonly name: string
  readonly created_at: string
}

const TOTAL = 24

// docs/api.md#paging over HTTP: every paging rule, on both stores.
describe.each(STORE_KINDS)("paging and sorting on %s", (kind) => {
  let platform: TestPlatform
  /** Every program of the organization, newest first (the default order). */
  let newestFirst: Array<string>
  beforeAll(async () => {
    platform = await startPlatform(kind)
    // 24 programs: the default one, 13 named Tie (for ties on order_by=name), 10 others.
    for (let index = 0; index < TOTAL - 1; index += 1) {
      await createProgram(platform, index < 13 ? "Tie" : `Program ${String.fromCharCode(97 + index)}`)
    }
    const all = await list("?page_size=100")
    newestFirst = all.data.map((program) => program.id)
  })
  afterAll(async () => {
    await platform?.close()
  })

  const list = async (query: string) => {
    const response = await platform.request("GET", `/v1/programs${query}`)
    expect(response.status, response.text).toBe(200)
    expect(Object.keys(response.body).sort()).toEqual(["data", "has_more", "total_count"])
    return response.body as { data: Array<Listed>; total_count: number; has_more: boolean }
  }
  const ids = async (query: string) => (await list(query)).data.map((program) => program.id)

  it("defaults to page 1 of 10, newest first (created_at then id, descending)", async () => {
    const page = await list("")
    expect(page.total_count).toBe(TOTAL)
    expect(page.data).toHaveLength(10)
    expect(page.data.map((program) => program.id)).toEqual(newestFirst.slice(0, 10))
    const sorted = [...page.data].sort((a, b) =>
      a.created_at === b.created_at ? (a.id < b.id ? 1 : -1) : a.created_at < b.created_at ? 1 : -1
    )
    expect(page.data).toEqual(sorted)
    expect(newestFirst.at(-1)).toBe(platform.org.program_id)
  })

  it("pages: page is 1-based and values below 1 or not integers count as 1", async () => {
    expect(await ids("?page=2")).toEqual(newestFirst.slice(10, 20))
    expect(await ids("?page=3")).toEqual(newestFirst.slice(20, 24))
    const beyond = await list("?page=4")
    expect(beyond).toEqual({ data: [], total_count: TOTAL, has_more: false })
    for (const page of ["0", "-3", "abc", "1.5", ""]) expect(await ids(`?page=${page}`)).toEqual(newestFirst.slice(0, 10))
    expect((await list("?page=99999999999999999999")).data).toEqual([])
  })

  it("has_more says whether an item follows the page, by page and by starting_after", async () => {
    expect((await list("?page=1")).has_more).toBe(true)
    expect((await list("?page=2")).has_more).toBe(true)
    expect((await list("?page=3")).has_more).toBe(false)
    expect((await list("?page=3&page_size=7")).has_more).toBe(true)
    expect((await list("?page=4&page_size=6")).has_more).toBe(false)
    expect((await list(`?page_size=100`)).has_more).toBe(false)
    // Exactly a page of items left after the cursor: none after it.
    const last = await list(`?page_size=10&starting_after=${newestFirst[13]}`)
    expect(last.data.map((program) => program.id)).toEqual(newestFirst.slice(14))
    expect(last.has_more).toBe(false)
    const more = await list(`?page_size=10&starting_after=${newestFirst[12]}`)
    expect(more.data).toHaveLength(10)
    expect(more.has_more).toBe(true)
  })

  it("page_size: default 10, below 1 or invalid falls back to 10, above 100 is capped", async () => {
    expect(await ids("?page_size=3")).toEqual(newestFirst.slice(0, 3))
    expect(await ids("?page_size=1")).toEqual(newestFirst.slice(0, 1))
    for (const size of ["0", "-1", "x", "2.5"]) expect(await ids(`?page_size=${size}`)).toHaveLength(10)
    expect(await ids("?page_size=1000")).toHaveLength(TOTAL)
    expect(await ids("?page_size=3&page=2")).toEqual(newestFirst.slice(3, 6))
  })

  it("caps page_size at 100 when there are more items (GET /v1/api-keys, 101 keys)", async () => {
    const pending = Array.from({ length: 100 }, (_, index) => index)
    while (pending.length > 0) {
      await Promise.all(
        pending
          .splice(0, 10)
          .map((index) => platform.request("POST", "/v1/api-keys", { program: null, body: { name: `key ${index}`, role: "viewer" } }))
      )
    }
    const capped = await platform.request("GET", "/v1/api-keys?page_size=1000")
    expect(capped.body.total_count).toBe(101)
    expect(capped.body.data).toHaveLength(100)
    const rest = await platform.request("GET", "/v1/api-keys?page_size=1000&page=2")
    expect(rest.body.data).toHaveLength(1)
    const everyId = new Set([...capped.body.data, ...rest.body.data].map((key: { id: string }) => key.id))
    expect(everyId.size).toBe(101)
  })

  it("accepts page-size and order-by as aliases", async () => {
    expect(await ids("?page-size=4")).toEqual(newestFirst.slice(0, 4))
    expect(await ids("?page-size=4&page_size=4")).toEqual(newestFirst.slice(0, 4))
    expect(await ids("?order-by=created_at&page_size=100")).toEqual([...newestFirst].reverse())
    expectEnvelope(await platform.request("GET", "/v1/programs?page_size=4&page-size=5"), 400, {
      code: "invalid_request",
      param: "page_size"
    })
    expectEnvelope(await platform.request("GET", "/v1/programs?order_by=name&order-by=created_at"), 400, {
      code: "invalid_request",
      param: "order_by"
    })
  })

  it("order_by with ascending: default true, false descends, an invalid value is ignored", async () => {
    const oldestFirst = [...newestFirst].reverse()
    expect(await ids("?order_by=created_at&page_size=100")).toEqual(oldestFirst)
    expect(await ids("?order_by=created_at&ascending=true&page_size=100")).toEqual(oldestFirst)
    expect(await ids("?order_by=created_at&ascending=false&page_size=100")).toEqual(newestFirst)
    expect(await ids("?order_by=created_at&ascending=FALSE&page_size=100")).toEqual(newestFirst)
    for (const junk of ["maybe", "", "2", "no"]) {
      expect(await ids(`?order_by=created_at&ascending=${junk}&page_size=100`)).toEqual(oldestFirst)
    }
    // With order_by omitted the default order (newest first) applies whatever ascending says.
    expect(await ids("?ascending=true&page_size=100")).toEqual(newestFirst)
    const byName = (await list("?order_by=name&page_size=100")).data.map((program) => program.name)
    expect(byName).toEqual([...byName].sort())
    const byNameDesc = (await list("?order_by=name&ascending=false&page_size=100")).data.map((program) => program.name)
    expect(byNameDesc).toEqual([...byName].reverse())
  })

  it("breaks ties on id, so pages never overlap or skip", async () => {
    for (const ascending of ["true", "false"]) {
      const full = await list(`?order_by=name&ascending=${ascending}&page_size=100`)
      const ties = full.data.filter((program) => program.name === "Tie").map((program) => program.id)
      expect(ties).toHaveLength(13)
      const sortedTies = [...ties].sort()
      expect(ties).toEqual(ascending === "true" ? sortedTies : sortedTies.reverse())
      for (const size of [3, 5, 7]) {
        const walked: Array<string> = []
        for (let page = 1; page <= Math.ceil(TOTAL / size); page += 1) {
          walked.push(...(await ids(`?order_by=name&ascending=${ascending}&page_size=${size}&page=${page}`)))
        }
        expect(walked).toEqual(full.data.map((program) => program.id))
      }
    }
  })

  it("rejects an unknown order_by with 400 listing the valid fields", async () => {
    for (const field of ["color", "id", "CREATED_AT", "created_at;drop table x"]) {
      const error = expectEnvelope(await platform.request("GET", `/v1/programs?order_by=${encodeURIComponent(field)}`), 400, {
        type: "invalid_request_error",
        code: "invalid_request",
        param: "order_by"
      })
      expect(error.message).toContain("created_at, updated_at, name")
    }
  })
})
