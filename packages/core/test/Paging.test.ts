import { describe, expect, it } from "@effect/vitest"
import { Either, Option } from "effect"
import * as fc from "fast-check"
import { DEFAULT_PAGE_SIZE, MAX_PAGE, MAX_PAGE_SIZE, orderFields, type PagingQuery, parsePaging, toWindow } from "../src/platform/Paging.js"

const FIELDS = orderFields({ created_at: "created_at", updated_at: "updated_at", name: "name" }, { newest: "created_at" })
const parse = (query: PagingQuery) => Either.getOrThrow(parsePaging(query, FIELDS))
const failure = (query: PagingQuery) =>
  Either.getLeft(parsePaging(query, FIELDS)).pipe((option) => {
    if (option._tag === "None") throw new Error(`Expected a failure for ${JSON.stringify(query)}`)
    return option.value
  })

// The paging rules of docs/api.md#paging, rule by rule, as a pure function.
describe("paging rules", () => {
  it("defaults: page 1, page_size 10, the endpoint's order, ascending", () => {
    expect(parse({})).toEqual({ page: 1, pageSize: DEFAULT_PAGE_SIZE, orderBy: null, ascending: true })
  })

  it("page: 1-based; below 1, empty or not an integer counts as 1; huge values are bounded", () => {
    expect(parse({ page: "7" }).page).toBe(7)
    expect(parse({ page: " 3 " }).page).toBe(3)
    for (const page of ["0", "-1", "-999999999999999999999", "", "x", "2.5", "1e3", "0x10"]) {
      expect(parse({ page }).page, page).toBe(1)
    }
    expect(parse({ page: "99999999999999999999999" }).page).toBe(MAX_PAGE)
  })

  it("page_size: default 10, below 1 or invalid falls back to 10, above 100 is capped", () => {
    expect(parse({ page_size: "1" }).pageSize).toBe(1)
    expect(parse({ page_size: "100" }).pageSize).toBe(100)
    expect(parse({ page_size: "101" }).pageSize).toBe(MAX_PAGE_SIZE)
    expect(parse({ page_size: "1000000000000000000000" }).pageSize).toBe(MAX_PAGE_SIZE)
    for (const size of ["0", "-5", "", "ten", "5.5"]) expect(parse({ page_size: size }).pageSize, size).toBe(DEFAULT_PAGE_SIZE)
  })

  it("aliases page-size and order-by; the two spellings disagreeing is a 400 on the canonical name", () => {
    expect(parse({ "page-size": "5" }).pageSize).toBe(5)
    expect(parse({ "order-by": "name" }).orderBy).toBe("name")
    expect(parse({ page_size: "5", "page-size": "5" }).pageSize).toBe(5)
    expect(failure({ page_size: "5", "page-size": "6" })).toMatchObject({ _tag: "InvalidRequest", param: "page_size" })
    expect(failure({ order_by: "name", "order-by": "created_at" })).toMatchObject({ param: "order_by" })
  })

  it("order_by: one of the endpoint's fields, else a 400 with param order_by listing them", () => {
    expect(parse({ order_by: "updated_at" }).orderBy).toBe("updated_at")
    for (const field of ["color", "", "NAME", "name ", "id", "toString", "__proto__", "constructor"]) {
      const error = failure({ order_by: field })
      expect(error._tag).toBe("InvalidRequest")
      expect(error.param).toBe("order_by")
      expect(error.message).toContain("created_at, updated_at, name")
    }
  })

  it("ascending: true/false in any case (and 1/0); anything else is ignored", () => {
    expect(parse({ ascending: "false" }).ascending).toBe(false)
    expect(parse({ ascending: "FALSE" }).ascending).toBe(false)
    expect(parse({ ascending: "0" }).ascending).toBe(false)
    expect(parse({ ascending: "true" }).ascending).toBe(true)
    expect(parse({ ascending: "1" }).ascending).toBe(true)
    for (const junk of ["", "no", "yes", "2", "f"]) expect(parse({ ascending: junk }).ascending, junk).toBe(true)
  })

  it("the window: default order is newest first whatever ascending says; order_by follows ascending", () => {
    expect(toWindow(parse({}), FIELDS)).toEqual({
      orderBy: "created_at",
      descending: true,
      limit: 11,
      pageSize: 10,
      offset: 0,
      after: null
    })
    expect(toWindow(parse({ ascending: "true" }), FIELDS).descending).toBe(true)
    expect(toWindow(parse({ ascending: "false" }), FIELDS).descending).toBe(true)
    expect(toWindow(parse({ order_by: "name" }), FIELDS)).toEqual({
      orderBy: "name",
      descending: false,
      limit: 11,
      pageSize: 10,
      offset: 0,
      after: null
    })
    expect(toWindow(parse({ order_by: "name", ascending: "false" }), FIELDS).descending).toBe(true)
    expect(toWindow(parse({ page: "3", page_size: "25" }), FIELDS)).toMatchObject({ limit: 26, pageSize: 25, offset: 50 })
    const attempts = orderFields({ created_at: "created_at", attempted_at: "attempted_at" }, { newest: "attempted_at" })
    expect(toWindow(Either.getOrThrow(parsePaging({}, attempts)), attempts).orderBy).toBe("attempted_at")
  })

  it("starting_after: an id (any case, kept lower case) with offset 0; with page, or not an id, 400 param starting_after", () => {
    const id = "0193A0B1-1C2D-7E3F-8A4B-5C6D7E8F9A0B"
    const request = parse({ starting_after: id, page_size: "5", order_by: "name" })
    expect(request.startingAfter).toBe(id.toLowerCase())
    expect(toWindow(request, FIELDS)).toEqual({
      orderBy: "name",
      descending: false,
      limit: 6,
      pageSize: 5,
      offset: 0,
      after: id.toLowerCase()
    })
    for (const query of [
      { starting_after: id, page: "1" },
      { starting_after: id, page: "" },
      { starting_after: "x" },
      { starting_after: "" }
    ]) {
      const error = Either.getLeft(parsePaging(query, FIELDS))
      expect(Option.map(error, (e) => e.param)).toEqual(Option.some("starting_after"))
    }
  })

  it("never fails on page or page_size and always yields a window within bounds", () => {
    fc.assert(
      fc.property(fc.option(fc.string()), fc.option(fc.string()), fc.option(fc.string()), (page, size, ascending) => {
        const request = parse({ page: page ?? undefined, page_size: size ?? undefined, ascending: ascending ?? undefined })
        const window = toWindow(request, FIELDS)
        expect(window.pageSize).toBeGreaterThanOrEqual(1)
        expect(window.pageSize).toBeLessThanOrEqual(MAX_PAGE_SIZE)
        // One row past the page tells has_more (docs/api.md#paging).
        expect(window.limit).toBe(window.pageSize + 1)
        expect(window.offset).toBeGreaterThanOrEqual(0)
        expect(Number.isSafeInteger(window.offset)).toBe(true)
      })
    )
  })
})
