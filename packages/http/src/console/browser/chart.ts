/** A wallet's balance over time, drawn as an SVG step line from its book transfers (no chart library). */
import { s } from "./dom.js"
import { clock, day, money, time } from "./format.js"

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

/**
 * Round values from `low` to `high` for the balance axis: steps of 1, 2 or 5 × 10^n minor units,
 * about `count` of them, so each tick reads as a round amount.
 */
export const amountTicks = (low: number, high: number, count = 5): ReadonlyArray<number> => {
  const span = Math.max(high - low, 1)
  const rough = span / count
  const power = 10 ** Math.floor(Math.log10(rough))
  const step = [1, 2, 5, 10].map((m) => m * power).find((candidate) => candidate >= rough) ?? 10 * power
  const ticks: Array<number> = []
  for (let tick = Math.ceil(low / step) * step; tick <= high; tick += step) ticks.push(tick)
  return ticks
}

const SECOND = 1000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR
/** The time steps the time axis may take, shortest first. */
const TIME_STEPS = [
  SECOND,
  5 * SECOND,
  15 * SECOND,
  MINUTE,
  5 * MINUTE,
  15 * MINUTE,
  HOUR,
  3 * HOUR,
  6 * HOUR,
  12 * HOUR,
  DAY,
  7 * DAY,
  30 * DAY
]

/**
 * Ticks of the time axis from `start` to `end` (ms): whole seconds, minutes, hours or days in the
 * operator's time, about `count` of them, each labelled as the console writes times (the time of
 * day, or the day when they are a day or more apart).
 */
export const timeTicks = (start: number, end: number, count = 5): ReadonlyArray<{ readonly at: number; readonly label: string }> => {
  const rough = Math.max(end - start, 1) / count
  const step = TIME_STEPS.find((candidate) => candidate >= rough) ?? Math.ceil(rough / (30 * DAY)) * 30 * DAY
  const offset = new Date(start).getTimezoneOffset() * MINUTE
  const ticks: Array<{ at: number; label: string }> = []
  for (let at = Math.ceil((start - offset) / step) * step + offset; at <= end; at += step) {
    const date = new Date(at)
    ticks.push({
      at,
      label: step >= DAY ? day(date) : step < MINUTE ? `${clock(date)}:${String(date.getSeconds()).padStart(2, "0")}` : clock(date)
    })
  }
  return ticks
}

/** The chart: balance (y) over time (x), a step after each posting, with round ticks on both axes. */
export const balanceChart = (points: ReadonlyArray<BalancePoint>, startBalance: number, currency: string): SVGElement => {
  const first = points[0]!
  const last = points[points.length - 1]!
  const values = [startBalance, ...points.map((point) => point.balance)]
  const yTicks = amountTicks(Math.min(0, ...values), Math.max(...values, 1))
  const low = Math.min(0, ...values, yTicks[0] ?? 0)
  const high = Math.max(...values, low + 1, yTicks[yTicks.length - 1] ?? 0)
  const start = first.at
  const end = Math.max(last.at, start + 1)
  const x = (at: number) => LEFT + ((at - start) / (end - start)) * (WIDTH - LEFT - RIGHT)
  const y = (value: number) => TOP + (1 - (value - low) / (high - low)) * (HEIGHT - TOP - BOTTOM)
  let path = `M ${x(start).toFixed(1)} ${y(startBalance).toFixed(1)}`
  for (const point of points) path += ` H ${x(point.at).toFixed(1)} V ${y(point.balance).toFixed(1)}`
  const description = `${points.length} postings from ${time(new Date(start).toISOString())} to ${time(new Date(last.at).toISOString())}; balance from ${money(startBalance, currency)} to ${money(last.balance, currency)}, lowest ${money(Math.min(...values), currency)}, highest ${money(Math.max(...values), currency)}.`
  const xTicks = timeTicks(start, end)
  const xSpan = xTicks.length > 1 ? x(xTicks[1]!.at) - x(xTicks[0]!.at) : WIDTH
  return s(
    "svg",
    { class: "chart", viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: "img", "aria-labelledby": "chart-title chart-desc" },
    s("title", { id: "chart-title" }, "Balance over time"),
    s("desc", { id: "chart-desc" }, description),
    ...yTicks.map((tick) =>
      s(
        "g",
        { class: "chart-tick", "data-axis": "y" },
        s("line", { x1: LEFT, x2: WIDTH - RIGHT, y1: y(tick), y2: y(tick), class: tick === 0 ? "chart-zero" : "chart-grid" }),
        s("text", { x: LEFT - 8, y: y(tick) + 4, "text-anchor": "end", class: "chart-label" }, money(tick, currency))
      )
    ),
    s("line", { x1: LEFT, x2: LEFT, y1: TOP, y2: HEIGHT - BOTTOM, class: "chart-axis" }),
    s("line", { x1: LEFT, x2: WIDTH - RIGHT, y1: HEIGHT - BOTTOM, y2: HEIGHT - BOTTOM, class: "chart-axis" }),
    // Labels far enough apart to read: every tick when there is room, else every other one.
    ...xTicks
      .filter((_, index) => xSpan >= 90 || index % 2 === 0)
      .map((tick) =>
        s(
          "g",
          { class: "chart-tick", "data-axis": "x" },
          s("line", { x1: x(tick.at), x2: x(tick.at), y1: HEIGHT - BOTTOM, y2: HEIGHT - BOTTOM + 5, class: "chart-axis" }),
          s("text", { x: x(tick.at), y: HEIGHT - 22, "text-anchor": "middle", class: "chart-label" }, tick.label)
        )
      ),
    s(
      "text",
      { x: WIDTH - RIGHT, y: HEIGHT - 4, "text-anchor": "end", class: "chart-label" },
      day(new Date(start)) === day(new Date(end)) ? day(new Date(start)) : `${day(new Date(start))} to ${day(new Date(end))}`
    ),
    s("path", { d: path, class: "chart-line" }),
    ...points.map((point) => s("circle", { cx: x(point.at), cy: y(point.balance), r: 2.5, class: "chart-point" }))
  )
}
