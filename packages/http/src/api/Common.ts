import { Schema } from "effect"

/** Interface §4 paging parameters, aliases included; values are interpreted by core's Paging rules. */
export const PagingParams = {
  page: Schema.optional(Schema.String),
  page_size: Schema.optional(Schema.String),
  "page-size": Schema.optional(Schema.String),
  order_by: Schema.optional(Schema.String),
  "order-by": Schema.optional(Schema.String),
  ascending: Schema.optional(Schema.String)
}

/** The list envelope of interface §4. */
export const ListOf = <S extends Schema.Schema.Any>(item: S) =>
  Schema.Struct({ data: Schema.Array(item), total_count: Schema.Number })

/** A required, trimmed, non-empty text of bounded length. */
export const Name = (maxLength = 200) =>
  Schema.String.pipe(
    Schema.filter((text) => text.trim().length > 0 || "must not be empty"),
    Schema.maxLength(maxLength)
  )

/** An RFC 3339 timestamp in UTC, as every resource carries. */
export const Timestamp = Schema.String

/**
 * An id in a request BODY or query filter: a UUID, else 400 invalid_request naming the field (a
 * schema failure, interface §7). Path ids stay plain strings so a malformed one is a 404.
 */
export const Uuid = Schema.String.pipe(
  Schema.pattern(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, { message: () => "must be a UUID" })
)
