import type { SqlError } from "@effect/sql"
import { Effect, Schema } from "effect"
import { InvalidRequest } from "../platform/Errors.js"
import type { LedgerStoreService, SettlementTotal } from "./LedgerStore.js"
import { isKnownCurrency } from "./Records.js"

/**
 * A program's settlement totals of one UTC day and currency (docs/network.md#reconciliation), read
 * from the totals each card transfer adds as it posts: clearings (wallet → settlement of an
 * authorized transaction, a late presentment included), force posts (a clearing of a transaction
 * that authorized nothing), returns (settlement → wallet, linked or unlinked), and
 * net_amount = clearings + force_posts − returns, all in minor units.
 */
const Totals = Schema.Struct({
  count: Schema.Number.annotations({ description: "How many card transactions." }),
  amount: Schema.Number.annotations({ description: "Their total, in minor units of the report's currency." })
})

export const SettlementReport = Schema.Struct({
  object: Schema.Literal("settlement_report"),
  date: Schema.String.annotations({ description: "The UTC day reported, YYYY-MM-DD." }),
  currency: Schema.String,
  clearings: Totals.annotations({ description: "Clearings of authorized transactions (late presentments included)." }),
  returns: Totals.annotations({ description: "Returns: settlement to wallet, linked to a transaction or not." }),
  force_posts: Totals.annotations({ description: "Force posts: clearings of transactions that authorized nothing." }),
  net_amount: Schema.Number.annotations({ description: "clearings + force_posts − returns, in minor units." })
}).annotations({ identifier: "SettlementReport" })
export type SettlementReport = typeof SettlementReport.Type

/** The query of GET /v1/settlement-reports, undecoded: each field is checked here for its own `param`. */
export interface SettlementReportQuery {
  readonly date?: string | undefined
  readonly currency?: string | undefined
}

/** A calendar day written YYYY-MM-DD (2026-02-30 is not one). */
const isDay = (text: string): boolean =>
  /^\d{4}-\d{2}-\d{2}$/.test(text) &&
  !Number.isNaN(Date.parse(`${text}T00:00:00Z`)) &&
  new Date(`${text}T00:00:00Z`).toISOString().slice(0, 10) === text

const parseQuery = (query: SettlementReportQuery): Effect.Effect<{ day: string; currency: string }, InvalidRequest> => {
  if (query.date === undefined || !isDay(query.date))
    return Effect.fail(new InvalidRequest({ message: "date must be a UTC day written YYYY-MM-DD.", param: "date" }))
  if (query.currency === undefined || !/^[A-Z]{3}$/.test(query.currency) || !isKnownCurrency(query.currency))
    return Effect.fail(
      new InvalidRequest({ message: "currency must be a known ISO 4217 code in upper case, e.g. USD.", param: "currency" })
    )
  return Effect.succeed({ day: query.date, currency: query.currency })
}

const totalOf = (rows: ReadonlyArray<SettlementTotal>, kind: SettlementTotal["kind"]) => {
  const row = rows.find((r) => r.kind === kind)
  return { count: row?.count ?? 0, amount: row?.amount ?? 0 }
}

/** The report of one day and currency of a program: at most three totals read, whatever the day's volume. */
export const settlementReport = (
  store: Pick<LedgerStoreService, "settlementTotals">,
  programId: string,
  query: SettlementReportQuery
): Effect.Effect<SettlementReport, InvalidRequest | SqlError.SqlError> =>
  Effect.gen(function* () {
    const { day, currency } = yield* parseQuery(query)
    const rows = yield* store.settlementTotals(programId, day, currency)
    const clearings = totalOf(rows, "clearing")
    const forcePosts = totalOf(rows, "force_post")
    const returns = totalOf(rows, "return")
    return {
      object: "settlement_report",
      date: day,
      currency,
      clearings,
      returns,
      force_posts: forcePosts,
      net_amount: clearings.amount + forcePosts.amount - returns.amount
    } as const
  })
