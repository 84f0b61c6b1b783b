import { type PageRequest, parsePaging, type PagingQuery } from "@issuing/core"
import { Effect, Either } from "effect"
import type { ApiFailureAt } from "../errors.js"
import { toApiFailure } from "../errors.js"

/** Decodes the paging parameters (docs/api.md#paging) against an endpoint's order fields (400 on unknown order_by). */
export const paging = (query: PagingQuery, orderFields: ReadonlyArray<string>): Effect.Effect<PageRequest, ApiFailureAt<400>> =>
  Either.match(parsePaging(query, orderFields), {
    onLeft: (error) => Effect.fail(toApiFailure(error)),
    onRight: Effect.succeed
  })
