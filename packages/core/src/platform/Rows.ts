/**
 * Column decoding shared by both dialects: SQLite returns integers, 0/1 and ISO text; PostgreSQL
 * returns bigint as text, booleans and Date objects. Repositories read rows through these.
 */

/** A timestamp column as an RFC 3339 UTC string with milliseconds. */
export const toIso = (value: unknown): string => {
  if (value instanceof Date) return value.toISOString()
  if (typeof value === "string") return value.includes("T") ? value : new Date(value).toISOString()
  if (typeof value === "number") return new Date(value).toISOString()
  throw new Error(`Unexpected timestamp column value of type ${typeof value}`)
}

/** A nullable timestamp column. */
export const toIsoOrNull = (value: unknown): string | null => (value === null || value === undefined ? null : toIso(value))

/** An integer column (PostgreSQL bigint arrives as text). */
export const toInt = (value: unknown): number => {
  if (typeof value === "number") return value
  if (typeof value === "bigint") return Number(value)
  if (typeof value === "string") return Number(value)
  throw new Error(`Unexpected integer column value of type ${typeof value}`)
}

/** A boolean column (SQLite stores 0/1). */
export const toBool = (value: unknown): boolean => value === true || value === 1 || value === "1" || value === "t"

/** A JSON column stored as text in both dialects. */
export const fromJson = <A>(value: unknown): A => (typeof value === "string" ? JSON.parse(value) : value) as A

/** A boolean as a bind parameter: 1/0, which SQLite stores and PostgreSQL reads as a boolean literal. */
export const boolParam = (value: boolean): number => (value ? 1 : 0)
