import type { SqlClient, SqlError, Statement } from "@effect/sql"
import { Effect } from "effect"
import { isOrderField, type OrderFields, orderFieldNames, type PageWindow } from "../platform/Paging.js"
import type { InvalidRequest } from "../platform/Errors.js"
import { notInThisList, orderByClause } from "./OrderBy.js"

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
 * A list whose page is the merge of one or more index ranges (docs/operations.md#volume): each
 * range is the rows of some equalities (`ranges`), read from an index on (those columns, the order
 * column, id) in the page's order, so the ranges are merged as they are read and a deep page counts
 * the rows OFFSET skips off the indexes alone (no sort, no table row); only the page's rows are then
 * read, by primary key. The ranges of one list never share a row.
 */
export interface MergedList {
  /** The table, unaliased. */
  readonly table: string
  /** Each range's equalities, one index range each. */
  readonly ranges: ReadonlyArray<Statement.Fragment>
  /** A condition the page's rows are read with besides their ids (their program), or null. */
  readonly pageRows: Statement.Fragment | null
  /** What the `starting_after` row must meet to be of this list (program and filters). */
  readonly member: Statement.Fragment
  /** The page's rows read from other tables than `table` (its rows joined to another's), or `*` of `table`. */
  readonly page?: { readonly select: string; readonly from: string }
  /**
   * Whether most ranges are usually empty (an account's transfers per side, status and rail): for a
   * deep page each is then probed first (one seek each, in one statement) and only the ranges
   * holding a row are merged, since every range merged costs every row the page skips one more
   * merge step. A page that skips nothing (page 1, or `starting_after`) merges them all at once: its
   * empty ranges cost the same one seek each as a probe, without the probe's round trip.
   */
  readonly probe?: boolean
}

/**
 * The ranges of `list` that hold a row, in their order: one statement of one `EXISTS` seek per
 * range. When none does, the first (empty) range stands for the list, so that a `starting_after`
 * is still checked against it. A row written into an empty range after the probe is not on this
 * page, as if the page had been read a moment earlier.
 */
const rangesHoldingRows = (sql: SqlClient.SqlClient, list: MergedList) =>
  Effect.map(
    sql<{ i: number | string }>`SELECT i FROM (${sql.join(
      " UNION ALL ",
      false
    )(
      list.ranges.map(
        (range, index) =>
          sql`SELECT ${sql.literal(String(index))} AS i WHERE EXISTS (SELECT 1 FROM ${sql.literal(list.table)} WHERE ${range})`
      )
    )}) probed`,
    (rows) => {
      const held = rows.map((row) => list.ranges[Number(row.i)]!)
      return held.length === 0 ? [list.ranges[0]!] : held
    }
  )

/**
 * One page of a `MergedList`, O(page) whatever the size of the table and a deep page O(its depth).
 * SQLite merges the ranges as the arms of one compound statement whose ORDER BY every range's index
 * delivers (`MERGE (UNION ALL)`). PostgreSQL 18 plans that form, flattened, as an Append of the
 * whole ranges under a sort (even with sorts disabled), so there each range is a subquery ordered by
 * its index and cut at the page's depth, and the cut ranges are merged (`Merge Append`): offset +
 * limit rows read, and one more per range. `starting_after` reads its row by id within the list (a
 * 400 otherwise) and starts every range after its (order value, id).
 */
export const mergedPage = <F extends string>(
  sql: SqlClient.SqlClient,
  window: PageWindow<NoInfer<F>>,
  order: OrderFields<F>,
  list: MergedList
): Effect.Effect<ReadonlyArray<any>, SqlError.SqlError | InvalidRequest> =>
  list.probe === true && list.ranges.length > 1 && window.offset > 0
    ? Effect.flatMap(rangesHoldingRows(sql, list), (ranges) => pageOf(sql, window, order, { ...list, ranges, probe: false }))
    : pageOf(sql, window, order, list)

const pageOf = <F extends string>(
  sql: SqlClient.SqlClient,
  window: PageWindow<NoInfer<F>>,
  order: OrderFields<F>,
  list: MergedList
): Effect.Effect<ReadonlyArray<any>, SqlError.SqlError | InvalidRequest> => {
  if (!isOrderField(order, window.orderBy)) {
    throw new Error(`mergedPage: the window's order field is not one of this list's (${orderFieldNames(order).join(", ")})`)
  }
  const orderBy = orderByClause(sql, window, order)
  const key = sql.literal(order.columns[window.orderBy])
  const id = sql.literal(order.idColumn)
  const direction = sql.literal(window.descending ? "DESC" : "ASC")
  const table = sql.literal(list.table)
  const arm = (range: Statement.Fragment, after: Statement.Fragment) =>
    sql`SELECT ${key} AS k, ${id} AS id FROM ${table} WHERE ${range}${after}`
  const ids = (after: Statement.Fragment) => {
    if (list.ranges.length === 1) {
      return sql`${arm(list.ranges[0]!, after)} ORDER BY ${key} ${direction}, ${id} ${direction}
                 LIMIT ${window.limit} OFFSET ${window.offset}`
    }
    return sql.onDialectOrElse({
      pg: () => {
        const cut = (range: Statement.Fragment, index: number) =>
          sql`SELECT * FROM (${arm(range, after)} ORDER BY ${key} ${direction}, ${id} ${direction}
                             LIMIT ${window.offset + window.limit}) ${sql.literal(`r${index}`)}`
        return sql`SELECT k, id FROM (${sql.join(" UNION ALL ", false)(list.ranges.map(cut))}) u
                   ORDER BY k ${direction}, id ${direction} LIMIT ${window.limit} OFFSET ${window.offset}`
      },
      orElse: () =>
        sql`${sql.join(" UNION ALL ", false)(list.ranges.map((range) => arm(range, after)))}
            ORDER BY k ${direction}, id ${direction} LIMIT ${window.limit} OFFSET ${window.offset}`
    })
  }
  const rows = (after: Statement.Fragment) =>
    Effect.flatMap(ids(after), (found) =>
      found.length === 0
        ? Effect.succeed([])
        : sql`SELECT ${sql.literal(list.page?.select ?? "*")}
              FROM ${list.page === undefined ? table : sql.literal(list.page.from)} WHERE ${id} IN ${sql.in(found.map((row: any) => row.id))}${
                list.pageRows === null ? sql.literal("") : sql` AND ${list.pageRows}`
              }
              ORDER BY ${orderBy}`
    )
  const startingAfter = window.after
  if (startingAfter === undefined || startingAfter === null) return rows(sql.literal(""))
  return Effect.flatMap(
    sql`SELECT ${key} AS k FROM ${table} WHERE ${id} = ${startingAfter} AND ${list.member}`,
    (found): Effect.Effect<ReadonlyArray<any>, SqlError.SqlError | InvalidRequest> =>
      found.length === 0
        ? Effect.fail(notInThisList())
        : rows(sql` AND (${key}, ${id}) ${sql.literal(window.descending ? "<" : ">")} (${found[0]!.k}, ${startingAfter})`)
  )
}

/** One page of a `MergedRangesQuery` list: one range per value of its column, merged (`mergedPage`). */
export const mergedPageRows = <F extends string>(
  sql: SqlClient.SqlClient,
  window: PageWindow<NoInfer<F>>,
  order: OrderFields<F>,
  query: MergedRangesQuery
): Effect.Effect<ReadonlyArray<any>, SqlError.SqlError | InvalidRequest> =>
  mergedPage(sql, window, order, {
    table: query.table,
    ranges: query.values.map((value) => sql`${query.where} AND ${sql.literal(query.column)} = ${value}`),
    pageRows: null,
    member: query.where
  })
