/** A wallet's balance over time, drawn as an SVG step line from its book transfers (no chart library). */
import { s } from "./dom.js"
import { money, time } from "./format.js"

/** One posting of the account: when, and the principal balance right after it. */
export interface BalancePoint {
  readonly at: number
  readonly balance: number
}

interface BookTransferLike {
  readonly posted_at: string
  readonly entries: ReadonlyArray<{
    readonly book: string
    readonly financial_account_id: string
    readonly entry_type: string
    readonly amount: { readonly amount: number }
  }>
}

/** How a book transfer moved the account's principal book (its balance is credits − debits). */
export const principalChange = (transfer: BookTransferLike, accountId: string): number =>
  transfer.entries.reduce(
    (sum, entry) =>
      entry.book === "principal" && entry.financial_account_id === accountId
        ? sum + (entry.entry_type === "CREDIT" ? entry.amount.amount : -entry.amount.amount)
        : sum,
    0
  )

/**
 * Walks back from a known balance through book transfers given newest first: each point is the
 * balance right after its transfer; `before` is the balance before the oldest one (where the next,
 * older page continues).
 */
export const balanceSeries = (
  balanceAfterNewest: number,
  newestFirst: ReadonlyArray<BookTransferLike>,
  accountId: string
): { readonly points: ReadonlyArray<BalancePoint>; readonly before: number } => {
  const points: Array<BalancePoint> = []
  let balance = balanceAfterNewest
  for (const transfer of newestFirst) {
    points.push({ at: Date.parse(transfer.posted_at), balance })
    balance -= principalChange(transfer, accountId)
  }
  return { points: points.reverse(), before: balance }
}

const WIDTH = 720
const HEIGHT = 240
const LEFT = 110
const RIGHT = 16
const TOP = 16
const BOTTOM = 40

/** The chart: balance (y) over time (x), a step after each posting, with its range labelled. */
export const balanceChart = (points: ReadonlyArray<BalancePoint>, startBalance: number, currency: string): SVGElement => {
  const first = points[0]!
  const last = points[points.length - 1]!
  const values = [startBalance, ...points.map((point) => point.balance)]
  const low = Math.min(0, ...values)
  const high = Math.max(...values, low + 1)
  const start = first.at
  const end = Math.max(last.at, start + 1)
  const x = (at: number) => LEFT + ((at - start) / (end - start)) * (WIDTH - LEFT - RIGHT)
  const y = (value: number) => TOP + (1 - (value - low) / (high - low)) * (HEIGHT - TOP - BOTTOM)
  let path = `M ${x(start).toFixed(1)} ${y(startBalance).toFixed(1)}`
  for (const point of points) path += ` H ${x(point.at).toFixed(1)} V ${y(point.balance).toFixed(1)}`
  const description = `${points.length} postings from ${time(new Date(start).toISOString())} to ${time(new Date(last.at).toISOString())}; balance from ${money(startBalance, currency)} to ${money(last.balance, currency)}, lowest ${money(Math.min(...values), currency)}, highest ${money(Math.max(...values), currency)}.`
  return s(
    "svg",
    { class: "chart", viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: "img", "aria-labelledby": "chart-title chart-desc" },
    s("title", { id: "chart-title" }, "Balance over time"),
    s("desc", { id: "chart-desc" }, description),
    s("line", { x1: LEFT, x2: WIDTH - RIGHT, y1: y(0), y2: y(0), class: "chart-zero" }),
    s("line", { x1: LEFT, x2: LEFT, y1: TOP, y2: HEIGHT - BOTTOM, class: "chart-axis" }),
    s("line", { x1: LEFT, x2: WIDTH - RIGHT, y1: HEIGHT - BOTTOM, y2: HEIGHT - BOTTOM, class: "chart-axis" }),
    s("text", { x: LEFT - 8, y: y(high) + 4, "text-anchor": "end", class: "chart-label" }, money(high, currency)),
    s("text", { x: LEFT - 8, y: y(low) + 4, "text-anchor": "end", class: "chart-label" }, money(low, currency)),
    s("text", { x: LEFT, y: HEIGHT - 14, "text-anchor": "start", class: "chart-label" }, time(new Date(start).toISOString())),
    s("text", { x: WIDTH - RIGHT, y: HEIGHT - 14, "text-anchor": "end", class: "chart-label" }, time(new Date(end).toISOString())),
    s("path", { d: path, class: "chart-line" }),
    ...points.map((point) => s("circle", { cx: x(point.at), cy: y(point.balance), r: 2.5, class: "chart-point" }))
  )
}
