import { expect } from "vitest"
import type { TestPlatform } from "./platform.js"

/** A listed object: its id and the fields a test orders or filters by. */
export type ListedRow = { readonly id: string } & Record<string, unknown>

/**
 * The rows of `rows` in a list's order: by `field` then id, both the same way (docs/api.md#paging).
 * Computed here from each row's own fields, so a test compares the store's order with an order it
 * did not produce.
 */
export const inListOrder = (rows: ReadonlyArray<ListedRow>, field: string, ascending: boolean): Array<string> =>
  [...rows]
    .sort((a, b) => {
      const [x, y] = [String(a[field]), String(b[field])]
      const byField = x < y ? -1 : x > y ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0
      return ascending ? byField : -byField
    })
    .map((row) => row.id)

/**
 * Checks a list (`path?query`) against the ids it must hold, in order: one page of them all with
 * `total_count`, the pages of `size` by `page=` (deep pages: the rows before them skipped), and the
 * walk by `starting_after` from the first page to the last.
 */
export const expectListed = async (platform: TestPlatform, path: string, query: string, expected: ReadonlyArray<string>, size = 3) => {
  const get = async (more: string) => {
    const response = await platform.request("GET", `${path}?${[query, more].filter((part) => part !== "").join("&")}`)
    expect(response.status, `${path}?${query}&${more}: ${response.text}`).toBe(200)
    return response.body as { data: Array<ListedRow>; total_count: number }
  }
  const whole = await get("page_size=100")
  expect(
    whole.data.map((row) => row.id),
    query
  ).toEqual(expected)
  expect(whole.total_count, query).toBe(expected.length)
  const paged: Array<string> = []
  for (let page = 1; page <= Math.ceil(expected.length / size) + 1; page += 1) {
    paged.push(...(await get(`page_size=${size}&page=${page}`)).data.map((row) => row.id))
  }
  expect(paged, `${query} by page=`).toEqual(expected)
  const walked: Array<string> = []
  let after: string | undefined
  for (let guard = 0; guard < 100; guard += 1) {
    const page = await get(`page_size=${size}${after === undefined ? "" : `&starting_after=${after}`}`)
    walked.push(...page.data.map((row) => row.id))
    if (page.data.length < size) break
    after = page.data.at(-1)!.id
  }
  expect(walked, `${query} by starting_after`).toEqual(expected)
}

/** Every row of a list (`path?query`), walked by `starting_after` in pages of `pageSize` until `has_more` is false. */
export const walkList = async <Row extends { readonly id: string }>(
  platform: TestPlatform,
  path: string,
  query = "",
  pageSize = 100
): Promise<ReadonlyArray<Row>> => {
  const rows: Array<Row> = []
  for (;;) {
    const after = rows.length === 0 ? "" : `&starting_after=${rows.at(-1)!.id}`
    const response = await platform.request("GET", `${path}?page_size=${pageSize}${query === "" ? "" : `&${query}`}${after}`)
    expect(response.status, response.text).toBe(200)
    rows.push(...response.body.data)
    if (!response.body.has_more) return rows
  }
}

/** A list's `total_count` under `query`, read from a page of one. */
export const totalCountOf = async (platform: TestPlatform, path: string, query: string): Promise<number> => {
  const response = await platform.request("GET", `${path}?${query}&page_size=1`)
  expect(response.status, `${path}?${query}: ${response.text}`).toBe(200)
  return response.body.total_count
}
