import type { SqlClient } from "@effect/sql"
import type { Fragment } from "@effect/sql/Statement"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
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
 * How a list's `total_count` is found (docs/operations.md#volume):
 * - `maintained`: read from the counts the store's triggers keep per program and filter
 *   combination, in the transaction that writes the rows — a sum over at most 16 shard rows,
 *   whatever the size of the table;
 * - `bounded`: `COUNT(*)` of a set whose size a documented limit bounds (the subscriptions of a
 *   program, an organization's keys, the transfers of one transaction …), read through an index;
 * - `ranges`: with a time filter, the index entries inside its window counted (`inRanges`).
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
  | { readonly _tag: "ranges"; readonly table: string; readonly ranges: ReadonlyArray<Fragment> }

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
): ListTotal => {
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
export const maintainedEvery = (list: CountedList, programId: string): ListTotal => ({
  _tag: "maintained",
  list,
  programId,
  keys: "every"
})

export const bounded = (table: string, where: Fragment): ListTotal => ({ _tag: "bounded", table, where })

/**
 * The count of a list narrowed by a time filter (docs/api.md#time-filters): one `COUNT(*)` per index
 * range the page reads — the ranges' equalities and the window's bounds — summed. It reads the
 * index entries inside the window only, never the table's rows nor the entries outside it.
 */
export const inRanges = (table: string, ranges: ReadonlyArray<Fragment>): ListTotal => ({ _tag: "ranges", table, ranges })

/** A combination's key: each filter `=value`, or empty for any value, joined with `|`. */
export const countKey = (list: CountedList, filter: Readonly<Record<string, string | undefined>>): string =>
  COUNTED_LISTS[list].map((name: string) => (filter[name] === undefined ? "" : `=${filter[name]}`)).join("|")

/** The exact size of a list's filtered set: the one count every list's `total_count` comes from. */
export const listTotal = (sql: SqlClient.SqlClient, total: ListTotal): Effect.Effect<number, SqlError> =>
  // No key to sum: a value the filter's union does not have (`book=fees`), which no row is counted under.
  total._tag === "maintained" && total.keys !== "every" && total.keys.length === 0
    ? Effect.succeed(0)
    : (total._tag === "maintained"
        ? sql`SELECT COALESCE(SUM(n), 0) AS n FROM issuing_list_counts
          WHERE list = ${total.list} AND program_id = ${total.programId}${
            total.keys === "every"
              ? sql.literal("")
              : total.keys.length === 1
                ? sql` AND key = ${total.keys[0]!}`
                : sql` AND key IN ${sql.in(total.keys)}`
          }`
        : total._tag === "bounded"
          ? sql`SELECT COUNT(*) AS n FROM ${sql.literal(total.table)} WHERE ${total.where}`
          : sql`SELECT COALESCE(SUM(n), 0) AS n FROM (${sql.join(
              " UNION ALL ",
              false
            )(total.ranges.map((range) => sql`SELECT COUNT(*) AS n FROM ${sql.literal(total.table)} WHERE ${range}`))}) ranges`
      ).pipe(Effect.map((rows) => toInt(rows[0]!.n)))
