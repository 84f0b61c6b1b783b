import { SqlError } from "@effect/sql"

/**
 * The driver's code of a database failure: PostgreSQL's SQLSTATE (`40001`, `23505`, a function's
 * own `IB409`) or SQLite's code (`SQLITE_BUSY`, and the store's `SQLITE_BUSY_TIMEOUT`), which both
 * drivers put on the SqlError's cause. Undefined for anything else.
 */
export const sqlErrorCode = (error: unknown): string | undefined => {
  if (!(error instanceof SqlError.SqlError)) return undefined
  const code = (error.cause as { code?: unknown } | undefined)?.code
  return typeof code === "string" ? code : undefined
}
