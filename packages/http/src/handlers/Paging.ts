import {
  type CreatedQuery,
  type CreatedWindow,
  checkCreatedOrder,
  type OrderFields,
  type PageRequest,
  parseCreatedWindow,
  parsePaging,
  type PagingQuery
} from "@issuing/core"
import { Effect, Either } from "effect"
import type { ApiFailureAt } from "../errors.js"
import { toApiFailure } from "../errors.js"

/**
 * Decodes the paging parameters (docs/api.md#paging) against the list's order fields, core's table
 * its store sorts by (400 on unknown order_by).
 */
export const paging = <F extends string>(query: PagingQuery, order: OrderFields<F>): Effect.Effect<PageRequest<F>, ApiFailureAt<400>> =>
  Either.match(parsePaging(query, order), {
    onLeft: (error) => Effect.fail(toApiFailure(error)),
    onRight: Effect.succeed
  })

/**
 * The paging parameters and the time filter of a list that has one (docs/api.md#time-filters):
 * `created[gte|gt|lte|lt]`, each a 400 naming it when not RFC 3339, and only in `created_at` order.
 */
export const timePaging = <F extends string>(
  query: PagingQuery & CreatedQuery,
  order: OrderFields<F>
): Effect.Effect<{ readonly page: PageRequest<F>; readonly created: CreatedWindow | undefined }, ApiFailureAt<400>> =>
  Either.match(
    Either.gen(function* () {
      const page = yield* parsePaging(query, order)
      const created = yield* parseCreatedWindow(query)
      return { page: yield* checkCreatedOrder(page, created), created }
    }),
    {
      onLeft: (error) => Effect.fail(toApiFailure(error)),
      onRight: Effect.succeed
    }
  )
