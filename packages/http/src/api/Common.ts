import { HttpApiEndpoint } from "@effect/platform"
import { Uuid as CoreUuid } from "@issuing/core"
import { Schema } from "effect"
import { ConflictFailure, TooLargeFailure } from "../errors.js"

/** Paging parameters, aliases included; values are interpreted by core's Paging rules (docs/api.md#paging). */
export const PagingParams = {
  page: Schema.optional(Schema.String),
  page_size: Schema.optional(Schema.String),
  "page-size": Schema.optional(Schema.String),
  order_by: Schema.optional(Schema.String),
  "order-by": Schema.optional(Schema.String),
  ascending: Schema.optional(Schema.String),
  starting_after: Schema.optional(Schema.String)
}

/** A time bound's query parameter: an RFC 3339 instant (docs/api.md#time-filters). */
const createdBound = (description: string) =>
  Schema.optional(
    Schema.String.annotations({
      description: `${description} An RFC 3339 timestamp, e.g. 2026-01-31T00:00:00Z.`,
      jsonSchema: { format: "date-time" }
    })
  )

/** The time filter of the lists that grow with money movement (events, transfers, transactions). */
export const CreatedParams = {
  "created[gte]": createdBound("Only items created at or after this instant."),
  "created[gt]": createdBound("Only items created after this instant."),
  "created[lte]": createdBound("Only items created at or before this instant."),
  "created[lt]": createdBound("Only items created before this instant.")
}

/** The list envelope: one page of `item`, the total across pages and whether more follow (docs/api.md#paging). */
export const ListOf = <S extends Schema.Schema.Any>(item: S) =>
  Schema.Struct({
    data: Schema.Array(item).annotations({ description: "One page of the list, in its order." }),
    total_count: Schema.Int.annotations({ description: "The size of the whole filtered list, not of the page." }),
    has_more: Schema.Boolean.annotations({
      description: "Whether an item follows this page: the next page (or `starting_after` the last item's id) is not empty."
    })
  })

/** A required, non-blank text of bounded length (kept as sent). */
export const Name = (maxLength = 200) =>
  Schema.String.pipe(
    Schema.filter((text) => text.trim().length > 0 || "must not be empty"),
    Schema.maxLength(maxLength)
  )

/** An RFC 3339 timestamp in UTC, as every resource carries. */
export const Timestamp = Schema.String

/**
 * An id in a request body or query filter: a UUID, decoded to lower case, else 400 invalid_request
 * naming the field. Path ids stay plain strings and go through core's findOwned, so a malformed one
 * is a 404 (docs/api.md#ids).
 */
export const Uuid = CoreUuid

/**
 * A POST endpoint of /v1. Besides its own failures, any POST may answer 409 (its Idempotency-Key
 * was used with another request, or that request is still running) and 413 (body over the limit):
 * the request pipeline answers both before the handler runs.
 */
export const post = <const Name extends string>(name: Name, path: HttpApiEndpoint.PathSegment) =>
  HttpApiEndpoint.post(name, path).addError(ConflictFailure).addError(TooLargeFailure)

/** A PATCH endpoint of /v1: besides its own failures, 413 (body over the limit). */
export const patch = <const Name extends string>(name: Name, path: HttpApiEndpoint.PathSegment) =>
  HttpApiEndpoint.patch(name, path).addError(TooLargeFailure)
