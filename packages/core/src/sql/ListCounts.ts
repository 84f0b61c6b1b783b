import type { SqlClient } from "@effect/sql"
import type { Fragment } from "@effect/sql/Statement"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import type { CreatedWindow } from "../platform/Paging.js"
import { toInt, toIso } from "../platform/Rows.js"

/**
 * The filters of each list whose count is maintained (migration 0210 of both stores), in the order
 * they are spelled in its keys. The migrations' triggers write the same keys; a list or filter
 * added here needs a migration that counts it (the wallets' `tag`: 0480).
 */
export const COUNTED_LISTS = {
  events: ["type"],
  transfers: ["status", "payment_rail", "financial_account_id"],
  transactions: ["status", "card_id"],
  wallets: ["tag"],
  cardholders: ["status", "email"],
  financial_accounts: ["kind", "wallet_id", "currency"],
  cards: ["wallet_id", "state"],
  card_audit_records: ["card_id", "action"],
  webhook_attempts: ["webhook_subscription_id", "status"],
  book_transfers: ["financial_account_id", "book"],
  // Kept by the dispute store's own writes (disputes/SqlDisputeStore.ts), not by triggers.
  disputes: ["transaction_id", "status"]
} as const satisfies Record<string, ReadonlyArray<string>>

/**
 * The filters of a money-movement list counted per value only (migration 0750 of both stores,
 * docs/operations.md#the-databases-work-per-transfer-postgresql): a row counts under its one value
 * of each, never under "any", so a total without that filter is the sum of its values' counts —
 * at most a few of them (statuses, rails, books), whatever the size of the table. A transfer keeps
 * 3 counts instead of 12, a transaction 1 or 2 instead of 2 or 4, an event 1 instead of 2, a book
 * transfer one per account of its entries, keyed by the set of that account's books
 * (`=account|=cash+principal`), instead of 9.
 */
export const SUMMED_FILTERS = {
  events: ["type"],
  transfers: ["status", "payment_rail"],
  transactions: ["status"],
  book_transfers: ["book"]
} as const satisfies { readonly [L in keyof typeof COUNTED_LISTS]?: ReadonlyArray<(typeof COUNTED_LISTS)[L][number]> }

export type CountedList = keyof typeof COUNTED_LISTS

/**
 * How a list's `total_count` is found (docs/operations.md#volume):
 * - `maintained`: read from the counts the store's triggers keep per program and filter
 *   combination, in the transaction that writes the rows — a sum over at most 16 shard rows,
 *   whatever the size of the table;
 * - `bounded`: `COUNT(*)` of a set whose size a documented limit bounds (the subscriptions of a
 *   program, an organization's keys, the transfers of one transaction …), read through an index;
 * - `window`: with a time filter, the smaller side of the window counted (`inWindow`): the index
 *   entries inside it, or the maintained count of the same list without the time filter less the
 *   entries outside it.
 */
export type ListTotal =
  | {
      readonly _tag: "maintained"
      readonly list: CountedList
      readonly programId: string
      /** The keys whose counts sum to the total, or every key of the list in the program. */
      readonly keys: ReadonlyArray<string> | "every"
    }
  | { readonly _tag: "bounded"; readonly table: string; readonly where: Fragment }
  | {
      readonly _tag: "window"
      readonly table: string
      readonly all: MaintainedTotal
      readonly ranges: ReadonlyArray<Fragment>
      readonly created: CreatedWindow
    }

type MaintainedTotal = Extract<ListTotal, { readonly _tag: "maintained" }>

/**
 * A list's total from its maintained counts: the count of the filter's one key, or for a list with
 * filters counted per value only (`SUMMED_FILTERS`), the sum of the keys of `values` — for each
 * such filter, the values counted under it that the filter's total sums (every value it can take
 * when the filter is not given; the caller knows the closed union) — crossed with the other
 * filters' values.
 */
export const maintained = <L extends CountedList>(
  list: L,
  programId: string,
  filter: { readonly [K in (typeof COUNTED_LISTS)[L][number]]?: string | undefined } = {},
  values: { readonly [K in (typeof COUNTED_LISTS)[L][number]]?: ReadonlyArray<string> } = {}
): MaintainedTotal => {
  const given = filter as Readonly<Record<string, string | undefined>>
  const summed = values as Readonly<Record<string, ReadonlyArray<string> | undefined>>
  const keys = COUNTED_LISTS[list].reduce<ReadonlyArray<ReadonlyArray<string>>>(
    (prefixes, name: string) => {
      const parts = summed[name]?.map((value) => `=${value}`) ?? [given[name] === undefined ? "" : `=${given[name]}`]
      return prefixes.flatMap((prefix) => parts.map((part) => [...prefix, part]))
    },
    [[]]
  )
  return { _tag: "maintained", list, programId, keys: keys.map((parts) => parts.join("|")) }
}

/** Every maintained count of a list in a program: its total when each row counts under one key only. */
export const maintainedEvery = (list: CountedList, programId: string): MaintainedTotal => ({
  _tag: "maintained",
  list,
  programId,
  keys: "every"
})

export const bounded = (table: string, where: Fragment): ListTotal => ({ _tag: "bounded", table, where })

/**
 * The count of a list narrowed by a time filter (docs/api.md#time-filters, docs/decisions.md "Time
 * filters and total_count"). `all` is the list's maintained count without the time filter and
 * `ranges` the index ranges (equalities, then `created_at`) that hold exactly that list; the
 * window's bounds cut each range into the part inside and the parts before and after it. The count
 * reads whichever side is smaller: the entries inside, or `all` less the entries outside — so a
 * window over the whole history costs what a window over a few rows does. A window in the middle
 * of a long list still reads the smaller of its two sides.
 */
export const inWindow = (table: string, all: MaintainedTotal, ranges: ReadonlyArray<Fragment>, created: CreatedWindow): ListTotal => ({
  _tag: "window",
  table,
  all,
  ranges,
  created
})

/**
 * Index entries each side of a window is first probed for, in one statement: a window holding
 * fewer (or with fewer outside it) is counted by that probe. 500 entries of an index cost about
 * what a page of 100 rows does (docs/decisions.md "Time filters and total_count").
 */
export const WINDOW_PROBE_ENTRIES = 500

/** The share of a list's time span above which a window's outside is counted rather than its inside. */
const COUNT_OUTSIDE_ABOVE_SHARE = 0.6

/** A combination's key: each filter `=value`, or empty for any value, joined with `|`. */
export const countKey = (list: CountedList, filter: Readonly<Record<string, string | undefined>>): string =>
  COUNTED_LISTS[list].map((name: string) => (filter[name] === undefined ? "" : `=${filter[name]}`)).join("|")

/** The exact size of a list's filtered set: the one count every list's `total_count` comes from. */
export const listTotal = (sql: SqlClient.SqlClient, total: ListTotal): Effect.Effect<number, SqlError> =>
  total._tag === "window"
    ? windowTotal(sql, total)
    : // No key to sum: a value the filter's union does not have (`book=fees`), which no row is counted under.
      total._tag === "maintained" && total.keys !== "every" && total.keys.length === 0
      ? Effect.succeed(0)
      : (total._tag === "maintained"
          ? sql`SELECT ${maintainedCount(sql, total)} AS n`
          : sql`SELECT COUNT(*) AS n FROM ${sql.literal(total.table)} WHERE ${total.where}`
        ).pipe(Effect.map((rows) => toInt(rows[0]!.n)))

/**
 * A list's maintained count, a scalar subquery: the sum of its keys' counts (0 with no key: a value
 * the filter's union does not have, `book=fees`, which no row is counted under).
 */
const maintainedCount = (sql: SqlClient.SqlClient, total: MaintainedTotal) =>
  total.keys !== "every" && total.keys.length === 0
    ? sql.literal("0")
    : sql`(SELECT COALESCE(SUM(n), 0) FROM issuing_list_counts
           WHERE list = ${total.list} AND program_id = ${total.programId}${
             total.keys === "every"
               ? sql.literal("")
               : total.keys.length === 1
                 ? sql` AND key = ${total.keys[0]!}`
                 : sql` AND key IN ${sql.in(total.keys)}`
           })`

/** One bound of a window on `created_at`: the instant and whether it is included. */
interface Bound {
  readonly at: string
  readonly inclusive: boolean
}

/**
 * The window's lower and upper bounds, the tighter one of each side where two are given (`gte` and
 * `gt` both: the later instant, `gt` on a tie). The bounds are ISO texts of one format
 * (parseCreatedWindow), which order as their instants do.
 */
const boundsOf = (created: CreatedWindow) => {
  const tighter = (inclusive: string | undefined, exclusive: string | undefined, later: boolean): Bound | undefined => {
    if (inclusive === undefined) return exclusive === undefined ? undefined : { at: exclusive, inclusive: false }
    if (exclusive === undefined) return { at: inclusive, inclusive: true }
    const inclusiveTighter = later ? inclusive > exclusive : inclusive < exclusive
    return inclusiveTighter ? { at: inclusive, inclusive: true } : { at: exclusive, inclusive: false }
  }
  return { lower: tighter(created.gte, created.gt, true), upper: tighter(created.lte, created.lt, false) }
}

/**
 * `windowTotal` in steps, each one statement: (1) both sides probed up to `WINDOW_PROBE_ENTRIES`
 * with the maintained count and the list's first and last `created_at`; a side with fewer entries
 * than the other and than the probe is the answer, read in that same statement (so the count and the
 * entries outside it are of one snapshot). (2) Both sides longer: where the window covers at most
 * 60 % of the list's time span (first to last `created_at`), the inside is counted; else the outside
 * is, up to half the list, and (3) past half, the inside after all, which is then the smaller. The
 * answer is always one statement's exact count; the probes only choose which.
 */
const windowTotal = (sql: SqlClient.SqlClient, total: Extract<ListTotal, { readonly _tag: "window" }>) => {
  const table = sql.literal(total.table)
  const { lower, upper } = boundsOf(total.created)
  const cut = (operator: string, bound: Bound) => sql`${sql.literal(`created_at ${operator}`)} ${bound.at}`
  const inside = total.ranges.map((range) =>
    sql.and([
      range,
      ...(lower === undefined ? [] : [cut(lower.inclusive ? ">=" : ">", lower)]),
      ...(upper === undefined ? [] : [cut(upper.inclusive ? "<=" : "<", upper)])
    ])
  )
  // The entries before the window and after it: every range's, for each side the window bounds.
  const outside = [
    ...(lower === undefined ? [] : total.ranges.map((range) => sql.and([range, cut(lower.inclusive ? "<" : "<=", lower)]))),
    ...(upper === undefined ? [] : total.ranges.map((range) => sql.and([range, cut(upper.inclusive ? ">" : ">=", upper)])))
  ]
  const entries = (ranges: ReadonlyArray<Fragment>) =>
    sql.join(" UNION ALL ", false)(ranges.map((range) => sql`SELECT 1 AS one FROM ${table} WHERE ${range}`))
  const upTo = (ranges: ReadonlyArray<Fragment>, cap: number) =>
    sql`(SELECT COUNT(*) FROM (${entries(ranges)} LIMIT ${sql.literal(String(cap))}) capped)`
  const every = (ranges: ReadonlyArray<Fragment>) =>
    sql`(SELECT COALESCE(SUM(n), 0) FROM (${sql.join(
      " UNION ALL ",
      false
    )(ranges.map((range) => sql`SELECT COUNT(*) AS n FROM ${table} WHERE ${range}`))}) counted)`
  const end = (direction: "ASC" | "DESC") =>
    sql`(SELECT ${sql.literal(direction === "ASC" ? "MIN" : "MAX")}(at) FROM (${sql.join(
      " UNION ALL ",
      false
    )(
      total.ranges.map(
        (range) => sql`SELECT (SELECT created_at FROM ${table} WHERE ${range} ORDER BY created_at ${sql.literal(direction)} LIMIT 1) AS at`
      )
    )}) ends)`
  const all = maintainedCount(sql, total.all)
  const probe = WINDOW_PROBE_ENTRIES
  return Effect.gen(function* () {
    const [first] = yield* sql`SELECT ${upTo(inside, probe)} AS inside, ${upTo(outside, probe)} AS outside, ${all} AS n,
                                      ${end("ASC")} AS first_at, ${end("DESC")} AS last_at`
    const n = toInt(first!.n)
    const within = toInt(first!.inside)
    const without = toInt(first!.outside)
    // A list of another program's card or account: its maintained count here is 0.
    if (n === 0) return 0
    if (without < within) return n - without
    if (within < probe) return within
    // The inside, counted whole: never more than counting the window always cost. The outside only
    // where the window covers over 60 % of the span: a capped count walks its entries through a
    // subquery, up to 1.5× a plain COUNT's cost per entry, so a window near half the list is
    // cheaper counted whole (docs/decisions.md "Time filters and total_count").
    if (shareOfSpan(first!.first_at, first!.last_at, lower, upper) <= COUNT_OUTSIDE_ABOVE_SHARE) {
      const [counted] = yield* sql`SELECT ${every(inside)} AS inside`
      return toInt(counted!.inside)
    }
    const half = Math.floor(n / 2) + 1
    const [counted] = yield* sql`SELECT ${all} AS n, ${upTo(outside, half)} AS outside`
    if (toInt(counted!.outside) < half) return toInt(counted!.n) - toInt(counted!.outside)
    const [rest] = yield* sql`SELECT ${every(inside)} AS inside`
    return toInt(rest!.inside)
  })
}

/** The share of the list's time span, first to last `created_at`, that the window covers (0 to 1). */
const shareOfSpan = (firstAt: unknown, lastAt: unknown, lower: Bound | undefined, upper: Bound | undefined): number => {
  if (firstAt === null || firstAt === undefined || lastAt === null || lastAt === undefined) return 0
  const first = Date.parse(toIso(firstAt))
  const last = Date.parse(toIso(lastAt))
  if (last <= first) return 1
  const from = Math.max(first, lower === undefined ? first : Date.parse(lower.at))
  const to = Math.min(last, upper === undefined ? last : Date.parse(upper.at))
  return Math.max(0, to - from) / (last - first)
}
