import { Either } from "effect"
import { InvalidRequest } from "./Errors.js"
import { isUuid } from "./Ids.js"
import { parseWindowBound } from "./Time.js"

/** Paging limits (docs/api.md#paging): page is 1-based, page_size defaults to 10 and is capped at 100. */
export const DEFAULT_PAGE_SIZE = 10
export const MAX_PAGE_SIZE = 100
/** A bound on page so offsets stay within safe integers. */
export const MAX_PAGE = 1_000_000

/**
 * A list's order fields, the one definition of them: every field `order_by` accepts (in the order the
 * 400's message lists them), each mapped to the column its store's ORDER BY sorts by, the field of
 * the default order (newest first) and the column ties break on. `parsePaging` validates `order_by`
 * against it and `orderByClause` (sql/OrderBy.ts) reads the column from it, so the two cannot
 * disagree. Each feature declares its lists' tables in its `OrderFields.ts`.
 */
export interface OrderFields<F extends string> {
  readonly columns: { readonly [K in F]: string }
  readonly newest: F
  readonly idColumn: string
}

/** The order fields of a table: `OrderField<typeof WALLET_ORDER_FIELDS>` is `"created_at" | "updated_at"`. */
export type OrderField<T> = T extends OrderFields<infer F> ? F : never

/**
 * Declares a list's order fields. Closed like the error table (http's errors.ts): the fields are the
 * keys of `columns`, `newest` must be one of them, and the store ports take windows typed by them.
 */
export const orderFields = <const C extends Readonly<Record<string, string>>>(
  columns: C,
  defaults: { readonly newest: NoInfer<keyof C & string>; readonly idColumn?: string }
): OrderFields<keyof C & string> => ({ columns, newest: defaults.newest, idColumn: defaults.idColumn ?? "id" })

/** A list's order fields as `order_by` spells them, in their declared order. */
export const orderFieldNames = <F extends string>(order: OrderFields<F>): ReadonlyArray<F> => Object.keys(order.columns) as Array<F>

/** Whether `text` is one of the list's order fields (own keys only: `toString` is not an order field). */
export const isOrderField = <F extends string>(order: OrderFields<F>, text: string): text is F => Object.hasOwn(order.columns, text)

/**
 * A decoded paging request. `orderBy` null means the endpoint's default order (newest first);
 * `startingAfter` is the id of the last object of the previous page (keyset paging), absent when
 * the page is chosen by number.
 */
export interface PageRequest<F extends string> {
  readonly page: number
  readonly pageSize: number
  readonly orderBy: F | null
  readonly ascending: boolean
  readonly startingAfter?: string | undefined
}

/**
 * The resolved ordering and window to apply in a query. With `after` (an id of the list) the page
 * is the `limit` rows that follow that row in the window's order, and `offset` is 0. A window made
 * by `toWindow` reads one row past the page (`limit` = `pageSize` + 1): that row tells `has_more`
 * and is not answered (`pageOf`).
 */
export interface PageWindow<F extends string> {
  readonly orderBy: F
  readonly descending: boolean
  readonly limit: number
  readonly offset: number
  readonly after?: string | null | undefined
  /** The rows answered; `limit` when absent (a window that reads no row past its page). */
  readonly pageSize?: number | undefined
}

/** A list response: the list envelope of docs/api.md#paging. */
export interface Page<A> {
  readonly data: ReadonlyArray<A>
  readonly total_count: number
  /** Whether an item follows this page in its order: the next page (or `starting_after` the last item) is not empty. */
  readonly has_more: boolean
}

/**
 * The list envelope of the rows a window read: at most its page size of them, and `has_more` from
 * the row read past the page (`toWindow`), so it holds by `page` and by `starting_after` alike,
 * without a count.
 */
export const pageOf = <A>(window: Pick<PageWindow<string>, "limit" | "pageSize">, rows: ReadonlyArray<A>, total: number): Page<A> => {
  const size = window.pageSize ?? window.limit
  return { data: rows.length > size ? rows.slice(0, size) : rows, total_count: total, has_more: rows.length > size }
}

/** The raw paging query parameters, aliases included, as they arrive. */
export interface PagingQuery {
  readonly page?: string | undefined
  readonly page_size?: string | undefined
  readonly "page-size"?: string | undefined
  readonly order_by?: string | undefined
  readonly "order-by"?: string | undefined
  readonly ascending?: string | undefined
  readonly starting_after?: string | undefined
}

const INTEGER = /^[+-]?\d+$/

const parseInteger = (text: string | undefined): number | undefined => {
  if (text === undefined) return undefined
  const trimmed = text.trim()
  if (!INTEGER.test(trimmed)) return undefined
  const value = Number(trimmed)
  return Number.isSafeInteger(value) ? value : trimmed.startsWith("-") ? Number.MIN_SAFE_INTEGER : Number.MAX_SAFE_INTEGER
}

/** One value from a parameter that has an alias; the two disagreeing is a conflicting-parameters 400. */
const aliased = (
  primary: string | undefined,
  alias: string | undefined,
  param: string
): Either.Either<string | undefined, InvalidRequest> => {
  if (primary !== undefined && alias !== undefined && primary !== alias) {
    return Either.left(
      new InvalidRequest({ message: `Conflicting parameters: ${param} and its alias were given different values.`, param })
    )
  }
  return Either.right(primary ?? alias)
}

/**
 * Decodes the paging rules (docs/api.md#paging):
 * - page: default 1, values below 1 (or not an integer) become 1;
 * - page_size / page-size: default 10, below 1 (or not an integer) falls back to 10, above 100 is capped;
 * - order_by / order-by: must be one of the list's order fields, else 400 invalid_request (param order_by) listing them;
 * - ascending: "true"/"false" (any case, also 1/0); anything else is ignored and the default (true) applies;
 * - starting_after: the id of the last object of the previous page, else 400 (param starting_after);
 *   with page as well, 400 (param starting_after). Whether the id is one of this list's is the
 *   store's check (`pageRows`, sql/OrderBy.ts).
 */
export const parsePaging = <F extends string>(query: PagingQuery, order: OrderFields<F>): Either.Either<PageRequest<F>, InvalidRequest> =>
  Either.gen(function* () {
    const pageValue = parseInteger(query.page)
    const page = pageValue === undefined || pageValue < 1 ? 1 : Math.min(pageValue, MAX_PAGE)

    const pageSizeText = yield* aliased(query.page_size, query["page-size"], "page_size")
    const pageSizeValue = parseInteger(pageSizeText)
    const pageSize = pageSizeValue === undefined || pageSizeValue < 1 ? DEFAULT_PAGE_SIZE : Math.min(pageSizeValue, MAX_PAGE_SIZE)

    const orderByText = yield* aliased(query.order_by, query["order-by"], "order_by")
    let orderBy: F | null = null
    if (orderByText !== undefined) {
      if (!isOrderField(order, orderByText)) {
        return yield* Either.left(
          new InvalidRequest({
            // The rejected value is not repeated (docs/api.md#errors): it could be anything, a card number included.
            message: `Invalid order_by. Valid fields: ${orderFieldNames(order).join(", ")}.`,
            param: "order_by"
          })
        )
      }
      orderBy = orderByText
    }

    const ascendingText = query.ascending?.trim().toLowerCase()
    const ascending = !(ascendingText === "false" || ascendingText === "0")

    if (query.starting_after === undefined) return { page, pageSize, orderBy, ascending }
    if (query.page !== undefined) {
      return yield* Either.left(new InvalidRequest({ message: "Give either page or starting_after, not both.", param: "starting_after" }))
    }
    const startingAfter = query.starting_after.trim()
    if (!isUuid(startingAfter)) {
      return yield* Either.left(
        new InvalidRequest({ message: "starting_after must be the id of the last object of the previous page.", param: "starting_after" })
      )
    }
    return { page, pageSize, orderBy, ascending, startingAfter: startingAfter.toLowerCase() }
  })

/**
 * Turns a page request into the window to query. With order_by omitted the order is newest first
 * (the list's `newest` field descending) whatever `ascending` says; with order_by given, `ascending`
 * sets the direction. Ties always break on the list's id column in the same direction, so pages
 * never overlap or skip. It reads one row past the page, for `has_more` (`pageOf`).
 */
export const toWindow = <F extends string>(request: PageRequest<F>, order: OrderFields<F>): PageWindow<F> => ({
  orderBy: request.orderBy ?? order.newest,
  descending: request.orderBy === null ? true : !request.ascending,
  limit: request.pageSize + 1,
  pageSize: request.pageSize,
  offset: request.startingAfter === undefined ? (request.page - 1) * request.pageSize : 0,
  after: request.startingAfter ?? null
})

/**
 * A window on a list's `created_at` (docs/api.md#time-filters): each bound given is an instant to the
 * millisecond (ISO 8601 in UTC, as the stores keep `created_at`), the bound itself included (`gte`,
 * `lte`) or not (`gt`, `lt`). It narrows the index range a page reads, in the `created_at` order.
 */
export interface CreatedWindow {
  readonly gte?: string | undefined
  readonly gt?: string | undefined
  readonly lte?: string | undefined
  readonly lt?: string | undefined
}

/** The time filter's query parameters as they arrive, Stripe's spelling. */
export interface CreatedQuery {
  readonly "created[gte]"?: string | undefined
  readonly "created[gt]"?: string | undefined
  readonly "created[lte]"?: string | undefined
  readonly "created[lt]"?: string | undefined
}

/** The time filter's bounds, each with the way a sub-millisecond instant rounds to the stored milliseconds. */
const CREATED_BOUNDS = [
  // created_at >= x: the first stored millisecond at or after x.
  ["gte", "begin"],
  // created_at > x: stored milliseconds after x's (a stored time equal to x's millisecond but before x is not after it).
  ["gt", "end"],
  ["lte", "end"],
  ["lt", "begin"]
] as const

/**
 * Decodes `created[gte]`, `created[gt]`, `created[lte]`, `created[lt]`: each an RFC 3339 timestamp,
 * else 400 invalid_request naming the parameter. Undefined when none is given. Bounds that leave
 * nothing between them are no error: the list is empty.
 */
export const parseCreatedWindow = (query: CreatedQuery): Either.Either<CreatedWindow | undefined, InvalidRequest> => {
  const window: Record<string, string> = {}
  for (const [name, rounding] of CREATED_BOUNDS) {
    const text = query[`created[${name}]`]
    if (text === undefined) continue
    const ms = parseWindowBound(text, rounding)
    if (ms === undefined) {
      return Either.left(
        new InvalidRequest({
          message: `created[${name}] must be an RFC 3339 timestamp, e.g. 2026-01-31T00:00:00Z.`,
          param: `created[${name}]`
        })
      )
    }
    // Before 1970 or after 9999 nothing is stored: such a bound is the nearest one the text order keeps.
    window[name] = new Date(Math.min(Math.max(ms, 0), MAX_INSTANT_MS)).toISOString()
  }
  return Either.right(Object.keys(window).length === 0 ? undefined : (window as CreatedWindow))
}

/** The last instant whose ISO text has a 4-digit year, so that text and time order agree on every store. */
const MAX_INSTANT_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999)

/**
 * A time filter reads a range of the list's `created_at` order: with another `order_by` it would be
 * a walk past the rows outside the window, so that is a 400 naming order_by (docs/api.md#time-filters).
 */
export const checkCreatedOrder = <F extends string>(
  request: PageRequest<F>,
  created: CreatedWindow | undefined
): Either.Either<PageRequest<F>, InvalidRequest> =>
  created === undefined || request.orderBy === null || request.orderBy === "created_at"
    ? Either.right(request)
    : Either.left(
        new InvalidRequest({
          message: "With a created[…] filter the list is in created_at order: order_by must be created_at.",
          param: "order_by"
        })
      )
