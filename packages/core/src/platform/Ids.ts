import { Schema } from "effect"
import { v7 as uuidv7 } from "uuid"

// Both cases spelled out rather than the `i` flag: JSON Schema patterns have no flags, and the OpenAPI document carries this one.
const UUID_PATTERN = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/

/** A new identifier: a UUIDv7, so ids sort by creation time and index inserts stay local. */
export const newId = (): string => uuidv7()

/** True when the text is a UUID in canonical 8-4-4-4-12 form. */
export const isUuid = (text: string): boolean => UUID_PATTERN.test(text)

/**
 * An id sent in a request body or query filter: a UUID in any case, decoded to lower case (how
 * every id is stored). A malformed one is a 400 naming the field; ids in the path are looked up
 * with `findOwned` instead, where a malformed id is simply not found (docs/api.md#ids).
 */
export const Uuid = Schema.transform(Schema.String.pipe(Schema.pattern(UUID_PATTERN, { message: () => "must be a UUID" })), Schema.String, {
  strict: true,
  decode: (text) => text.toLowerCase(),
  encode: (text) => text
}).annotations({ identifier: "Uuid", description: "A UUID naming one of the platform's objects (any letter case)." })
