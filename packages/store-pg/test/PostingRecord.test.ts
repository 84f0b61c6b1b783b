import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import { PostingRecord } from "../src/PostingRecord.js"

/** The posting function's text, as its file holds it. */
const postTransfer = fs.readFileSync(new URL("../src/functions/issuing_post_transfer.sql", import.meta.url), "utf8")

/** The fields of a struct schema, sorted. */
const fieldsOf = (schema: { readonly fields: Record<string, unknown> }) => Object.keys(schema.fields).sort()

const unique = (names: Iterable<string>) => [...new Set(names)].sort()

/**
 * `issuing_post_transfer` reads its posting record by name (src/functions/issuing_post_transfer.sql)
 * and PgPosting builds it from one schema (src/PostingRecord.ts): the two spell the same fields, so
 * a field renamed on one side fails here rather than reaching the database as NULL.
 */
describe("the posting record", () => {
  it("has the fields issuing_post_transfer reads, and requires", () => {
    const read = unique([...postTransfer.matchAll(/p_posting->>?'(\w+)'/g)].map((match) => match[1]!))
    expect(read).toEqual(fieldsOf(PostingRecord))
    const required = postTransfer.match(/p_posting \?& ARRAY\[([^\]]*)\]/)![1]!
    expect(unique([...required.matchAll(/'(\w+)'/g)].map((match) => match[1]!))).toEqual(fieldsOf(PostingRecord))
  })

  it("has in each of its lists the columns the function reads from it", () => {
    for (const list of ["entries", "deltas", "events", "balance_events"] as const) {
      const columns = [...postTransfer.matchAll(new RegExp(`jsonb_to_recordset\\(p_posting->'${list}'\\)\\s+AS\\s+\\w*\\(([^)]*)\\)`, "g"))]
        .flatMap((match) => match[1]!.split(","))
        .map((column) => column.trim().split(/\s+/)[0]!)
      const element = (PostingRecord.fields[list] as unknown as { readonly value: { readonly fields: Record<string, unknown> } }).value
      expect(unique(columns), list).toEqual(fieldsOf(element))
    }
  })
})
