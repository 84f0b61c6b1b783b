import type { SqlClient } from "@effect/sql"
import type { Fragment } from "@effect/sql/Statement"
import type { OrderFields, PageWindow } from "../platform/Paging.js"
import { toInt } from "../platform/Rows.js"
import { mergedPage } from "../sql/MergedRanges.js"
import { pageRows } from "../sql/OrderBy.js"

/** The SQL helpers every statement group of the ledger store shares. */
export const ledgerQueries = (client: SqlClient.SqlClient) => {
  const sql = client.withoutTransforms()
  const forUpdate = (lock: boolean) =>
    lock ? sql.onDialectOrElse({ pg: () => sql.literal("FOR UPDATE"), orElse: () => sql.literal("") }) : sql.literal("")
  const where = (clauses: ReadonlyArray<ReturnType<typeof sql.literal> | false>) => {
    const present = clauses.filter((clause): clause is ReturnType<typeof sql.literal> => clause !== false)
    return sql.and(present)
  }
  const count = (rows: ReadonlyArray<any>) => toInt(rows[0]!.n)

  return { sql, forUpdate, where, count }
}

/** What the ledger store's statement groups are built over. */
export type LedgerQueries = ReturnType<typeof ledgerQueries>

/**
 * A ledger list merged from index ranges (`mergedPage`, sql/MergedRanges.ts). The ranges need
 * no program condition where their first column (a card, an account) is of one program; the page's
 * rows and the `starting_after` row are read with the program, written out of the index choice.
 */
export interface MergedList {
  readonly table: "issuing_transfers" | "issuing_transactions"
  readonly programId: string
  /** Each range's equalities, one index range each. */
  readonly ranges: ReadonlyArray<Fragment>
  /** The list's filter besides the program, for the `starting_after` row. */
  readonly member: Fragment | null
  /** Whether most ranges are usually empty: probed first, the empty ones left out (`mergedPage`). */
  readonly probe?: boolean
}

/**
 * A list's page under a time filter (docs/api.md#time-filters): the window's bounds join every index
 * range the page reads — each range is (equalities…, created_at, id), so they bound it — and the
 * `starting_after` row's membership. (Its count: `inWindow`, sql/ListCounts.ts.)
 */
export const withinCreated = (
  sql: SqlClient.SqlClient,
  time: ReadonlyArray<Fragment>,
  condition: Fragment,
  merged: MergedList | null
): { readonly condition: Fragment; readonly merged: MergedList | null } => {
  if (time.length === 0) return { condition, merged }
  const bounded = sql.and([condition, ...time])
  if (merged === null) return { condition: bounded, merged }
  return {
    condition: bounded,
    merged: {
      ...merged,
      ranges: merged.ranges.map((range) => sql.and([range, ...time])),
      member: sql.and([...(merged.member === null ? [] : [merged.member]), ...time])
    }
  }
}

/** A ledger list's page: its ranges merged when it has them, else one range of `table` under `where`. */
export const ledgerPage = <F extends string>(
  sql: SqlClient.SqlClient,
  window: PageWindow<NoInfer<F>>,
  order: OrderFields<F>,
  table: string,
  where: Parameters<typeof pageRows>[3]["where"],
  merged: MergedList | null
) =>
  merged !== null
    ? ledgerMergedPage(sql, window, order, merged)
    : pageRows(sql, window, order, { select: sql.literal("*"), from: sql.literal(table), where })

/** One page of a ledger `MergedList`. */
const ledgerMergedPage = <F extends string>(
  sql: SqlClient.SqlClient,
  window: PageWindow<NoInfer<F>>,
  order: OrderFields<F>,
  list: MergedList
) => {
  const ofProgram = sql`(program_id || '') = ${list.programId}`
  return mergedPage(sql, window, order, {
    table: list.table,
    ranges: list.ranges,
    pageRows: ofProgram,
    member: sql.and([ofProgram, ...(list.member === null ? [] : [list.member])]),
    probe: list.probe ?? false
  })
}
