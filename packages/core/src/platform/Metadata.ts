import { Either, ParseResult, Schema } from "effect"
import { InvalidRequest } from "./Errors.js"

/**
 * `metadata` on wallets, cards, transfers and webhook subscriptions (docs/api.md#metadata): the
 * caller's own string keys and values, kept as sent and returned in every JSON of the object, as
 * Stripe and Lithic do. One schema decodes it for every operation that takes it, so the limits and
 * their errors are the same everywhere; it is stored as JSON text and never searched.
 */

/** Most keys an object's metadata holds. */
export const MAX_METADATA_KEYS = 50
/** Longest metadata key, in characters (Unicode code points). */
export const MAX_METADATA_KEY_LENGTH = 40
/** Longest metadata value, in characters (Unicode code points). */
export const MAX_METADATA_VALUE_LENGTH = 500

const DESCRIPTION =
  `Your own key-value pairs: up to ${MAX_METADATA_KEYS} keys of 1 to ${MAX_METADATA_KEY_LENGTH} characters, ` +
  `each with a string value of at most ${MAX_METADATA_VALUE_LENGTH} characters. {} when unset. Never searched.`

const INPUT_DESCRIPTION =
  `${DESCRIPTION} At creation and in an update, each key given is set and a key given as "" is removed (an update keeps ` +
  `the keys it does not name); "" or null for the whole field removes every key.`

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const isStringRecord = (value: unknown): value is { readonly [key: string]: string } =>
  isPlainObject(value) && Object.values(value).every((item) => typeof item === "string")

/**
 * Metadata as every object shows it: `{}` when unset. Declared rather than `Schema.Record`: a
 * record's decode and encode build a new object by assignment, which drops a key named
 * `__proto__` (it sets the prototype instead); this passes the object through as it is.
 */
export const Metadata = Schema.declare(isStringRecord, {
  identifier: "Metadata",
  description: DESCRIPTION,
  jsonSchema: { type: "object", maxProperties: MAX_METADATA_KEYS, additionalProperties: { type: "string" }, description: DESCRIPTION }
})
export type Metadata = typeof Metadata.Type

/** No metadata: what an object without any shows. */
export const EMPTY_METADATA: Metadata = Object.freeze({})

/**
 * A metadata change as decoded: `null` clears every key; otherwise each key given is set, and a key
 * given as `""` is removed. At creation the change applies to `{}`.
 */
export type MetadataChange = Metadata | null

const characters = (text: string) => {
  let count = 0
  for (const _ of text) count++
  return count
}

const NOT_AN_OBJECT = `must be an object of string keys and string values (or "" or null to clear it)`

/**
 * Checks `input` against the limits. A failure of one key's value points at that key (the HTTP
 * layer names it `metadata[key]`); a failure of the whole object or of a key's name (the key is
 * not repeated: it may be any text of any length) points at the field itself. Text no store keeps
 * as sent (U+0000, a lone surrogate), in a key as in a value, is refused with the rest of the
 * request body before this runs, named the same way (docs/api.md#metadata).
 */
const decodeChange = (input: unknown, ast: Schema.Schema.Any["ast"]): Either.Either<MetadataChange, ParseResult.ParseIssue> => {
  if (input === null || input === "") return Either.right(null)
  if (!isPlainObject(input)) return Either.left(new ParseResult.Type(ast, input, NOT_AN_OBJECT))
  const keys = Object.keys(input)
  if (keys.length > MAX_METADATA_KEYS) {
    return Either.left(new ParseResult.Type(ast, input, `may hold at most ${MAX_METADATA_KEYS} keys`))
  }
  for (const key of keys) {
    const length = characters(key)
    if (length === 0 || length > MAX_METADATA_KEY_LENGTH) {
      return Either.left(new ParseResult.Type(ast, input, `keys must be 1 to ${MAX_METADATA_KEY_LENGTH} characters`))
    }
    const value = input[key]
    const problem =
      typeof value !== "string"
        ? `must be a string (an empty string removes the key)`
        : characters(value) > MAX_METADATA_VALUE_LENGTH
          ? `must be at most ${MAX_METADATA_VALUE_LENGTH} characters`
          : null
    // The key as a bracketed path segment: `metadata[key]`, unambiguous whatever the key holds.
    if (problem !== null) return Either.left(new ParseResult.Pointer(`[${key}]`, input, new ParseResult.Type(ast, value, problem)))
  }
  // fromEntries defines own properties, so a key such as "__proto__" stays a key.
  return Either.right(Object.fromEntries(keys.map((key) => [key, input[key] as string])))
}

/**
 * `metadata` as a request sends it (every creation, `PATCH /v1/cards/{id}`, `PATCH
 * /v1/webhook-subscriptions/{id}`, each item of a transfer batch), decoded into a `MetadataChange`.
 * The decode takes any JSON value and refuses what is not a valid `MetadataWire` with its own
 * messages and paths (`decodeChange`); the declared wire type (`MetadataWire`) is the valid form,
 * which the client's request types and the OpenAPI document show. (Spelled out, not named, so the
 * client's generated records print it expanded.)
 */
export const MetadataInput: Schema.Schema<MetadataChange, { readonly [key: string]: string } | "" | null> = Schema.transformOrFail(
  Schema.Unknown as Schema.Schema<{ readonly [key: string]: string } | "" | null>,
  Schema.typeSchema(Schema.NullOr(Metadata)),
  {
    strict: true,
    decode: (input, _, ast) => decodeChange(input, ast),
    encode: ParseResult.succeed
  }
).annotations({
  identifier: "MetadataInput",
  jsonSchema: {
    description: INPUT_DESCRIPTION,
    anyOf: [
      {
        type: "object",
        maxProperties: MAX_METADATA_KEYS,
        propertyNames: { minLength: 1, maxLength: MAX_METADATA_KEY_LENGTH },
        additionalProperties: { type: "string", maxLength: MAX_METADATA_VALUE_LENGTH }
      },
      { type: "string", enum: [""] },
      { type: "null" }
    ]
  }
})

/** `metadata` as a request may send it: string values ("" removes a key), or "" or null for none. */
export type MetadataWire = typeof MetadataInput.Encoded

/**
 * The metadata a change leaves on an object holding `current`: Stripe's rules (keys given are set,
 * `""` removes a key, `null` clears all, the rest is kept). More than MAX_METADATA_KEYS keys after
 * the change is a 400 naming `metadata`, and nothing is written.
 */
export const applyMetadataChange = (current: Metadata, change: MetadataChange): Either.Either<Metadata, InvalidRequest> => {
  if (change === null) return Either.right(EMPTY_METADATA)
  const merged = new Map(Object.entries(current))
  for (const [key, value] of Object.entries(change)) {
    if (value === "") merged.delete(key)
    else merged.set(key, value)
  }
  if (merged.size > MAX_METADATA_KEYS) {
    return Either.left(
      new InvalidRequest({
        message: `metadata may hold at most ${MAX_METADATA_KEYS} keys; this change would leave ${merged.size}`,
        param: "metadata"
      })
    )
  }
  return Either.right(Object.fromEntries(merged))
}

/** The metadata a creation stores: the change applied to none (a creation holds at most MAX_METADATA_KEYS keys, checked by the schema). */
export const initialMetadata = (change: MetadataChange | undefined): Metadata =>
  change === undefined || change === null ? EMPTY_METADATA : Object.fromEntries(Object.entries(change).filter(([, value]) => value !== ""))

/** True when both hold the same keys with the same values. */
export const sameMetadata = (a: Metadata, b: Metadata): boolean => {
  const keys = Object.keys(a)
  return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && b[key] === a[key])
}

/** Metadata as its column stores it (JSON text, `{}` when unset). */
export const metadataText = (metadata: Metadata): string => JSON.stringify(metadata)

/** The metadata column of a row (JSON text in both dialects; a row written before the column reads `{}`). */
export const metadataOf = (value: unknown): Metadata =>
  value === null || value === undefined ? EMPTY_METADATA : typeof value === "string" ? JSON.parse(value) : (value as Metadata)
