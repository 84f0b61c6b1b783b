import type { SqlClient, SqlError, Statement } from "@effect/sql"
import { Effect } from "effect"
import { InvalidRequest } from "../platform/Errors.js"
import { type CreatedWindow, isOrderField, type OrderFields, orderFieldNames, type PageWindow } from "../platform/Paging.js"

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

/** The parts of a list's query that `pageRows` reads a page through. */
export interface PageQuery {
  /** The select list, e.g. `sql.literal("*")`. */
  readonly select: Statement.Fragment
  /** The FROM clause: a table, or tables joined under the aliases the list's order columns name. */
  readonly from: Statement.Fragment
  /** The list's whole filter: its program (or organization) and every filter given. */
  readonly where: Statement.Fragment
}

/**
 * The keyset predicate of a page after a row (docs/api.md#paging): the rows that follow it in the
 * window's order, `(order column, id) < (its value, its id)` newest first, `>` ascending. One
 * row-value comparison, written once for both dialects: SQLite (≥ 3.15) and PostgreSQL both
 * compare row values and both serve it as a range of an index on (filters…, order column, id).
 */
export const keysetClause = <F extends string>(
  sql: SqlClient.SqlClient,
  window: PageWindow<NoInfer<F>>,
  order: OrderFields<F>,
  cursor: { readonly value: unknown; readonly id: string }
) => {
  if (!isOrderField(order, window.orderBy)) {
    throw new Error(`keysetClause: the window's order field is not one of this list's (${orderFieldNames(order).join(", ")})`)
  }
  const columns = sql.unsafe(`(${order.columns[window.orderBy]}, ${order.idColumn}) ${window.descending ? "<" : ">"}`)
  return sql`${columns} (${cursor.value}, ${cursor.id})`
}

/** The 400 of a `starting_after` that is not the id of an object of the list (with its filters). */
export const notInThisList = () =>
  new InvalidRequest({ message: "starting_after is not the id of an object of this list (with these filters).", param: "starting_after" })

/**
 * The rows of one page of a list, shared by every store's list (docs/operations.md#volume): by
 * page number (LIMIT/OFFSET, the skipped rows counted through the ids alone), or after a row
 * (`window.after`, keyset paging): that row is looked up by id within the same list — the same
 * FROM and filter, so the same program — for its order value, and the page is the rows that follow
 * it (`keysetClause`), whatever its depth. An id that is not in this list (another list's, another
 * program's, unknown, or filtered out) is a 400 naming starting_after.
 */
export const pageRows = <F extends string>(
  sql: SqlClient.SqlClient,
  window: PageWindow<NoInfer<F>>,
  order: OrderFields<F>,
  query: PageQuery
): Effect.Effect<ReadonlyArray<any>, SqlError.SqlError | InvalidRequest> => {
  const orderBy = orderByClause(sql, window, order)
  const after = window.after
  if (after === undefined || after === null) {
    if (window.offset === 0) {
      return sql`SELECT ${query.select} FROM ${query.from} WHERE ${query.where} ORDER BY ${orderBy} LIMIT ${window.limit}`
    }
    // A deep page by number: the rows skipped are counted off the list's index alone (the ids,
    // which the index holds beside its filters and order column), and only the page's rows are read.
    const id = sql.unsafe(order.idColumn)
    return sql`SELECT ${query.select} FROM ${query.from}
               WHERE ${id} IN (SELECT ${id} FROM ${query.from} WHERE ${query.where}
                               ORDER BY ${orderBy} LIMIT ${window.limit} OFFSET ${window.offset})
               ORDER BY ${orderBy}`
  }
  const column = sql.unsafe(`${order.columns[window.orderBy]} AS cursor_value`)
  return Effect.flatMap(
    sql`SELECT ${column} FROM ${query.from} WHERE ${query.where} AND ${sql.unsafe(order.idColumn)} = ${after}`,
    (found): Effect.Effect<ReadonlyArray<any>, SqlError.SqlError | InvalidRequest> =>
      found.length === 0
        ? Effect.fail(notInThisList())
        : sql`SELECT ${query.select} FROM ${query.from}
              WHERE ${query.where} AND ${keysetClause(sql, window, order, { value: found[0]!.cursor_value, id: after })}
              ORDER BY ${orderBy} LIMIT ${window.limit}`
  )
}

/**
 * The conditions of a time filter on `column` (docs/api.md#time-filters), one per bound given: a
 * bound of the index range of the list's `created_at` order, so a page after them reads no row
 * outside the window. Text on SQLite and timestamptz on PostgreSQL compare alike with the ISO text.
 */
export const createdConditions = (
  sql: SqlClient.SqlClient,
  created: CreatedWindow | undefined,
  column = "created_at"
): ReadonlyArray<Statement.Fragment> => {
  if (created === undefined) return []
  const at = sql.unsafe(column)
  return [
    ...(created.gte !== undefined ? [sql`${at} >= ${created.gte}`] : []),
    ...(created.gt !== undefined ? [sql`${at} > ${created.gt}`] : []),
    ...(created.lte !== undefined ? [sql`${at} <= ${created.lte}`] : []),
    ...(created.lt !== undefined ? [sql`${at} < ${created.lt}`] : [])
  ]
}
