import type { SqlClient, SqlError, Statement } from "@effect/sql"
import { Effect } from "effect"
import { isOrderField, type OrderFields, orderFieldNames, type PageWindow } from "./Paging.js"
import type { InvalidRequest } from "./Errors.js"
import { notInThisList, orderByClause } from "../sql/OrderBy.js"

/**
 * A list whose index holds a column of a few values (an attempt's status, an audit record's action)
 * between its equalities and its order column: `(program_id, [filter,] status, created_at, id)`.
 * With the value given the list is one range of it (`pageRows`); without, it is the merge of one
 * range per value — the values are a closed set of at most a handful — so one index serves both
 * the list and the list filtered by the value, where two indexes would cost every write twice.
 */
export interface MergedRangesQuery {
  /** The table, unaliased. */
  readonly table: string
  /** The equalities the index starts with (`program_id = ? AND subscription_id = ?`). */
  readonly where: Statement.Fragment
  /** The column of few values, next in the index. */
  readonly column: string
  /** Every value `column` may hold (a CHECK or a closed type guarantees it). */
  readonly values: ReadonlyArray<string>
}

/**
 * One page of a `MergedRangesQuery` list (docs/operations.md#volume), O(page) whatever the size of
 * the list and a deep page O(its depth): each value's range is read in the window's order from the
 * index alone (its order column and id), the ranges are merged as they are read, the page's and the
 * skipped rows are counted off them, and only the page's rows are then read, by primary key.
 * SQLite merges the arms of one compound statement (`MERGE (UNION ALL)`); PostgreSQL 18 plans that
 * form as an Append under a sort of every whole range, so there each arm is a subquery ordered by
 * its index and cut at the page's depth, and the cut arms are merged (`Merge Append`) — the same
 * shape as an account's transfers (ledger/SqlLedgerStore.ts). `starting_after` reads its row by id
 * within the list (a 400 otherwise) and starts every range after its (order value, id).
 */
export const mergedPageRows = <F extends string>(
  sql: SqlClient.SqlClient,
  window: PageWindow<NoInfer<F>>,
  order: OrderFields<F>,
  query: MergedRangesQuery
): Effect.Effect<ReadonlyArray<any>, SqlError.SqlError | InvalidRequest> => {
  if (!isOrderField(order, window.orderBy)) {
    throw new Error(`mergedPageRows: the window's order field is not one of this list's (${orderFieldNames(order).join(", ")})`)
  }
  const orderColumn = order.columns[window.orderBy]
  const idColumn = order.idColumn
  const table = sql.literal(query.table)
  const direction = sql.literal(window.descending ? "DESC" : "ASC")
  const select = sql.literal(`${orderColumn} AS k, ${idColumn} AS id`)
  const arm = (value: string, after: Statement.Fragment) =>
    sql`SELECT ${select} FROM ${table} WHERE ${query.where} AND ${sql.literal(query.column)} = ${value}${after}`
  const ids = (after: Statement.Fragment) =>
    sql.onDialectOrElse({
      pg: () => {
        const cut = (value: string, index: number) =>
          sql`SELECT * FROM (${arm(value, after)} ORDER BY k ${direction}, id ${direction}
                             LIMIT ${window.offset + window.limit}) ${sql.literal(`r${index}`)}`
        return sql`SELECT k, id FROM (${sql.join(" UNION ALL ", false)(query.values.map(cut))}) u
                   ORDER BY k ${direction}, id ${direction} LIMIT ${window.limit} OFFSET ${window.offset}`
      },
      orElse: () =>
        sql`${sql.join(" UNION ALL ", false)(query.values.map((value) => arm(value, after)))}
            ORDER BY k ${direction}, id ${direction} LIMIT ${window.limit} OFFSET ${window.offset}`
    })
  const rows = (after: Statement.Fragment) =>
    Effect.flatMap(ids(after), (found) =>
      found.length === 0
        ? Effect.succeed([])
        : sql`SELECT * FROM ${table} WHERE ${sql.literal(idColumn)} IN ${sql.in(found.map((row: any) => row.id))}
              ORDER BY ${orderByClause(sql, window, order)}`
    )
  const startingAfter = window.after
  if (startingAfter === undefined || startingAfter === null) return rows(sql.literal(""))
  return Effect.flatMap(
    sql`SELECT ${sql.literal(orderColumn)} AS k FROM ${table}
        WHERE ${query.where} AND ${sql.literal(idColumn)} = ${startingAfter}`,
    (found): Effect.Effect<ReadonlyArray<any>, SqlError.SqlError | InvalidRequest> =>
      found.length === 0
        ? Effect.fail(notInThisList())
        : rows(
            sql` AND (${sql.literal(orderColumn)}, ${sql.literal(idColumn)}) ${sql.literal(window.descending ? "<" : ">")} (${found[0]!.k}, ${startingAfter})`
          )
  )
}
