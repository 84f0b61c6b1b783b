import type { SqlClient } from "@effect/sql"
import { isOrderField, type OrderFields, orderFieldNames, type PageWindow } from "../platform/Paging.js"

/**
 * The ORDER BY of a page window, shared by every repository's list: the window's field mapped to
 * its column through the list's order fields (the table `order_by` was validated against, so no
 * caller text reaches the SQL), then the list's id column in the same direction so that ties break
 * on id and pages never overlap or skip (docs/api.md#paging).
 *
 * The window's type already limits its field to the list's; a field outside the table can only come
 * from a cast or a window built for another list, a defect: it throws rather than sort by something
 * the caller did not ask for.
 */
export const orderByClause = <F extends string>(sql: SqlClient.SqlClient, window: PageWindow<NoInfer<F>>, order: OrderFields<F>) => {
  if (!isOrderField(order, window.orderBy)) {
    // The field is not repeated: it is a programming error, but the text could have come from a request.
    throw new Error(`orderByClause: the window's order field is not one of this list's (${orderFieldNames(order).join(", ")})`)
  }
  const direction = window.descending ? "DESC" : "ASC"
  return sql.unsafe(`${order.columns[window.orderBy]} ${direction}, ${order.idColumn} ${direction}`)
}
