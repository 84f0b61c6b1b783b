import { sqliteFanOutSql } from "@issuing/core"

/**
 * Statement texts that write many rows at once, built once per shape and kept: the hot writes of
 * the SQLite posting prepare each text once (the client's statement cache keys on it).
 */

/** `count` copies of a row's placeholders, comma-separated: a VALUES list. */
export const valuesList = (count: number, row: string) => Array.from({ length: count }, () => row).join(", ")

/** Statement texts by row count, built once (a transfer always has 4 entries, 4 deltas and 3 events). */
export const byRowCount = (build: (count: number) => string) => {
  const texts = new Map<number, string>()
  return (count: number) => {
    let text = texts.get(count)
    if (text === undefined) {
      text = build(count)
      texts.set(count, text)
    }
    return text
  }
}

/** The webhook deliveries of `count` events (the fan-out the webhook store runs too). */
export const fanOutText = byRowCount(sqliteFanOutSql)

/** The largest number of rows one multi-row statement of a batch writes (× at most 12 parameters). */
const MAX_ROWS_PER_STATEMENT = 128

/** The rows of the next statement: the largest power of two not above what is left (so a table has at most 8 statement texts). */
export const chunkRows = (left: number) => {
  let size = MAX_ROWS_PER_STATEMENT
  while (size > left) size >>= 1
  return size
}

const insertTexts = new Map<string, string>()

/** `INSERT INTO ${into} (columns) VALUES (…), … ${tail}` for `count` rows, built once per shape. */
const insertText = (into: string, columns: ReadonlyArray<string>, count: number, tail: string) => {
  // A table's columns and tail never vary: its name and the row count identify the text.
  const key = `${into} ${count}`
  let text = insertTexts.get(key)
  if (text === undefined) {
    text = `INSERT INTO ${into} (${columns.join(", ")}) VALUES ${valuesList(count, `(${columns.map(() => "?").join(", ")})`)} ${tail}`
    insertTexts.set(key, text)
  }
  return text
}

/** A statement of a batch's write: its text and parameters. */
export type BatchStatement = readonly [sql: string, params: Array<unknown>]

/** A column of a multi-row insert: named as its row's key, or `[column, key]` when the row names it otherwise. */
export type InsertColumn<R> = (keyof R & string) | readonly [column: string, key: keyof R & string]

/** Adds the statements that insert `list` (objects with the named columns): as few multi-row statements as the chunking allows. */
export const insertRows = <R extends object>(
  out: Array<BatchStatement>,
  into: string,
  columns: ReadonlyArray<InsertColumn<R>>,
  list: ReadonlyArray<R>,
  tail = ""
) => {
  const names = columns.map((column) => (typeof column === "string" ? column : column[0]))
  const keys = columns.map((column) => (typeof column === "string" ? column : column[1]))
  for (let start = 0; start < list.length; ) {
    const count = chunkRows(list.length - start)
    const params: Array<unknown> = []
    for (let i = start; i < start + count; i++) for (const key of keys) params.push(list[i]![key])
    out.push([insertText(into, names, count, tail), params])
    start += count
  }
}
