import type { SqlClient } from "@effect/sql"
import type { Fragment } from "@effect/sql/Statement"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import type { CreatedWindow } from "../platform/Paging.js"
import { toInt } from "../platform/Rows.js"

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
 * The lists counted per period as well (migration 0841 of both stores): each count of theirs is kept
 * again in the UTC month, day and hour of the row's own `created_at`, so that a time window's total
 * sums its whole periods (docs/decisions.md "Time filters and total_count").
 */
export const PERIOD_LISTS = ["events", "transfers", "transactions"] as const satisfies ReadonlyArray<CountedList>

export type PeriodList = (typeof PERIOD_LISTS)[number]

/**
 * The lists a row created at `createdAt` (ISO text, UTC) is counted under beside `list` itself:
 * `list@mYYYY-MM`, `list@dYYYY-MM-DD` and `list@hYYYY-MM-DDTHH`, with the same keys as its plain
 * counts. The stores' triggers and posting statements write the same names.
 */
export const countPeriods = (list: PeriodList, createdAt: string): ReadonlyArray<string> => [
  `${list}@m${createdAt.slice(0, 7)}`,
  `${list}@d${createdAt.slice(0, 10)}`,
  `${list}@h${createdAt.slice(0, 13)}`
]

/**
 * How a list's `total_count` is found (docs/operations.md#volume):
 * - `maintained`: read from the counts the store's triggers keep per program and filter
 *   combination, in the transaction that writes the rows — a sum over at most 16 shard rows,
 *   whatever the size of the table;
 * - `bounded`: `COUNT(*)` of a set whose size a documented limit bounds (the subscriptions of a
 *   program, an organization's keys, the transfers of one transaction …), read through an index;
 * - `window`: with a time filter (`inWindow`), the counts kept per month, day and hour of the whole
 *   periods inside the window summed, and the entries of its at most two partial hours counted over
 *   the index.
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
 * `ranges` the index ranges (equalities, then `created_at`) that hold exactly that list. The count
 * sums the list's counts kept per UTC month, day and hour (migration 0841) over the whole periods
 * inside the window and counts the entries of its partial hours over `ranges`: a window of any
 * size and place costs at most a few hundred period rows per key and shard and two half hours of
 * entries.
 */
export const inWindow = (table: string, all: MaintainedTotal, ranges: ReadonlyArray<Fragment>, created: CreatedWindow): ListTotal => ({
  _tag: "window",
  table,
  all,
  ranges,
  created
})

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

const HOUR_MS = 3_600_000

/**
 * A window as the half-open range [from, to) of stored milliseconds, either end open: `gt` and
 * `lte` name a millisecond the range starts after or ends with (stored times are milliseconds,
 * parseCreatedWindow), and of two bounds on one side the tighter holds.
 */
const rangeOf = (created: CreatedWindow): { readonly from: number | undefined; readonly to: number | undefined } => {
  const ms = (text: string | undefined, after: number) => (text === undefined ? undefined : Date.parse(text) + after)
  const defined = (values: ReadonlyArray<number | undefined>) => values.filter((v): v is number => v !== undefined)
  const from = defined([ms(created.gte, 0), ms(created.gt, 1)])
  const to = defined([ms(created.lte, 1), ms(created.lt, 0)])
  return {
    from: from.length === 0 ? undefined : Math.max(...from),
    to: to.length === 0 ? undefined : Math.min(...to)
  }
}

/**
 * What a window's count is made of, each part added (`sign` 1) or taken away (-1): the counts of
 * whole periods, read from `issuing_list_counts` (`periods`, the lists `countPeriods` names), and
 * index ranges of the list counted entry by entry (`spans`, [from, to) in milliseconds, `to`
 * undefined: to the end).
 */
interface WindowParts {
  readonly periods: Array<{ readonly name: string; readonly sign: 1 | -1 }>
  readonly spans: Array<{ readonly from: number; readonly to: number | undefined; readonly sign: 1 | -1 }>
}

const hourText = (ms: number) => new Date(ms).toISOString().slice(0, 13)
const floorHour = (ms: number) => Math.floor(ms / HOUR_MS) * HOUR_MS
const nextMonth = (ms: number) => {
  const at = new Date(ms)
  return Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1)
}

/**
 * The parts of the rows created in [from, to), both finite: the whole UTC months, days and hours
 * inside it, the largest that fit (a window of 3 years: 36 months and at most 30 + 30 days and
 * 23 + 23 hours), and in each of its (at most two) partial hours the entries inside counted over
 * the index — or, when they span over half the hour, the hour's count less the entries outside.
 */
const periodParts = (list: PeriodList, from: number, to: number, parts: WindowParts) => {
  const partial = (hour: number, start: number, end: number) => {
    if (end - start <= HOUR_MS / 2) return void parts.spans.push({ from: start, to: end, sign: 1 })
    parts.periods.push({ name: `${list}@h${hourText(hour)}`, sign: 1 })
    if (start > hour) parts.spans.push({ from: hour, to: start, sign: -1 })
    if (end < hour + HOUR_MS) parts.spans.push({ from: end, to: hour + HOUR_MS, sign: -1 })
  }
  const first = floorHour(from)
  const last = floorHour(to)
  if (first === last) return partial(first, from, to)
  if (from > first) partial(first, from, first + HOUR_MS)
  if (to > last) partial(last, last, to)
  let at = from > first ? first + HOUR_MS : first
  while (at < last) {
    const text = new Date(at).toISOString()
    const month = nextMonth(at)
    if (text.slice(8, 13) === "01T00" && month <= last) {
      parts.periods.push({ name: `${list}@m${text.slice(0, 7)}`, sign: 1 })
      at = month
    } else if (text.slice(11, 13) === "00" && at + 24 * HOUR_MS <= last) {
      parts.periods.push({ name: `${list}@d${text.slice(0, 10)}`, sign: 1 })
      at += 24 * HOUR_MS
    } else {
      parts.periods.push({ name: `${list}@h${text.slice(0, 13)}`, sign: 1 })
      at += HOUR_MS
    }
  }
}

/**
 * The first instant whose periods a window's count reads: rows created before it (none, unless a
 * clock was years behind) are counted over the index, so a bound such as 1970 reads no months.
 */
const EARLIEST_PERIOD_MS = Date.UTC(2020, 0, 1)

/**
 * The parts of the rows created at `start` or later, before `to` (undefined: ever after). Periods
 * end at `clamp`, an hour past both the present and `start`, and begin at EARLIEST_PERIOD_MS: a
 * row created after the one (a node whose clock is that far ahead) or before the other is counted
 * over the index, a range that is normally empty.
 */
const rangeParts = (list: PeriodList, start: number, to: number | undefined, clamp: number, parts: WindowParts) => {
  // Before EARLIEST_PERIOD_MS over the index (normally no entry): a bound of 1970 costs no months.
  if (start < EARLIEST_PERIOD_MS) {
    parts.spans.push({ from: start, to: to === undefined ? EARLIEST_PERIOD_MS : Math.min(to, EARLIEST_PERIOD_MS), sign: 1 })
    if (to !== undefined && to <= EARLIEST_PERIOD_MS) return
  }
  const from = Math.max(start, EARLIEST_PERIOD_MS)
  const end = to === undefined ? clamp : Math.min(to, clamp)
  if (from < end) periodParts(list, from, end, parts)
  const after = Math.max(from, clamp)
  if (to === undefined || to > after) parts.spans.push({ from: after, to, sign: 1 })
}

/**
 * `windowTotal`: the window [from, to) as its parts (a window open at its start: the list's kept
 * count less the parts of [to, ∞)), all read in one statement, so that every count is of one
 * snapshot. The kept count is read with them: 0 is a list of another program's card or account,
 * whose index ranges would hold that program's rows (test/foundation/time-filter-counts.test.ts).
 */
const windowTotal = (sql: SqlClient.SqlClient, total: Extract<ListTotal, { readonly _tag: "window" }>) => {
  const list = total.all.list as PeriodList
  const { from, to } = rangeOf(total.created)
  const parts: WindowParts = { periods: [], spans: [] }
  const start = from ?? to!
  const clamp = floorHour(Math.max(Date.now(), start)) + 2 * HOUR_MS
  if (from !== undefined) {
    if (to !== undefined && to <= from) return Effect.succeed(0)
    rangeParts(list, from, to, clamp, parts)
  } else rangeParts(list, start, undefined, clamp, parts)
  const table = sql.literal(total.table)
  const iso = (ms: number) => new Date(ms).toISOString()
  const count = (sign: 1 | -1) => {
    const spans = parts.spans.filter((span) => span.sign === sign)
    const counts = spans.flatMap((span) =>
      total.ranges.map(
        (range) =>
          sql`SELECT COUNT(*) AS n FROM ${table} WHERE ${sql.and([
            range,
            sql`created_at >= ${iso(span.from)}`,
            ...(span.to === undefined ? [] : [sql`created_at < ${iso(span.to)}`])
          ])}`
      )
    )
    return counts.length === 0
      ? sql.literal("0")
      : sql`(SELECT COALESCE(SUM(n), 0) FROM (${sql.join(" UNION ALL ", false)(counts)}) counted)`
  }
  const periods = (sign: 1 | -1) => {
    const names = parts.periods.filter((period) => period.sign === sign).map((period) => period.name)
    const keys = total.all.keys
    return names.length === 0 || (keys !== "every" && keys.length === 0)
      ? sql.literal("0")
      : sql`(SELECT COALESCE(SUM(n), 0) FROM issuing_list_counts
             WHERE list IN ${sql.in(names)} AND program_id = ${total.all.programId}${
               keys === "every" ? sql.literal("") : sql` AND key IN ${sql.in(keys)}`
             })`
  }
  return Effect.gen(function* () {
    const [row] = yield* sql`SELECT ${maintainedCount(sql, total.all)} AS n, ${periods(1)} AS periods_in, ${periods(-1)} AS periods_out,
                                    ${count(1)} AS entries_in, ${count(-1)} AS entries_out`
    const n = toInt(row!.n)
    if (n === 0) return 0
    const parted = toInt(row!.periods_in) - toInt(row!.periods_out) + toInt(row!.entries_in) - toInt(row!.entries_out)
    return from !== undefined ? parted : n - parted
  })
}
