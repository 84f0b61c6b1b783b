import { type OrderFields, type PageRequest, parsePaging, type PagingQuery } from "@issuing/core"
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
