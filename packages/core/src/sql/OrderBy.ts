import type { SqlClient } from "@effect/sql"
import type { PageWindow } from "../platform/Paging.js"

/**
 * The ORDER BY of a page window, shared by every repository's list: the window's field mapped
 * through `columns` (a whitelist, so no caller text reaches the SQL; an unknown field falls back to
 * the first column), then `idColumn` in the same direction so that ties break on id and pages never
 * overlap or skip (docs/api.md#paging).
 */
export const orderByClause = (sql: SqlClient.SqlClient, window: PageWindow, columns: Readonly<Record<string, string>>, idColumn = "id") => {
  const column = columns[window.orderBy] ?? Object.values(columns)[0] ?? "created_at"
  const direction = window.descending ? "DESC" : "ASC"
  return sql.unsafe(`${column} ${direction}, ${idColumn} ${direction}`)
}
