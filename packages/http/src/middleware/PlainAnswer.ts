import { HttpApiSchema, HttpServerResponse } from "@effect/platform"
import { type Schema, SchemaAST } from "effect"

/** Copies a value as its schema's encoding would: declared fields only, in their declared order. */
type Copy = (value: unknown) => unknown

const asIs: Copy = (value) => value

/** The fields a value of this object type must have (its required property signatures). */
const requiredKeys = (ast: SchemaAST.TypeLiteral): ReadonlyArray<PropertyKey> =>
  ast.propertySignatures.filter((signature) => !signature.isOptional).map((signature) => signature.name)

const copierOf = (ast: SchemaAST.AST): Copy => {
  switch (ast._tag) {
    case "TypeLiteral": {
      if (ast.indexSignatures.length > 0) return asIs
      const fields = ast.propertySignatures.map((signature) => [signature.name, copierOf(signature.type)] as const)
      return (value) => {
        const source = value as Record<PropertyKey, unknown>
        const copy: Record<PropertyKey, unknown> = {}
        for (const [name, copyField] of fields) {
          const field = source[name]
          if (field !== undefined) copy[name] = copyField(field)
        }
        return copy
      }
    }
    case "TupleType": {
      if (ast.elements.length > 0 || ast.rest.length !== 1) return asIs
      const copyItem = copierOf(ast.rest[0]!.type)
      return (value) => (value as ReadonlyArray<unknown>).map(copyItem)
    }
    case "Union": {
      const objects = ast.types.filter((member): member is SchemaAST.TypeLiteral => member._tag === "TypeLiteral")
      if (objects.length === 0) return asIs
      // Object members told apart by their required fields: the first whose fields the value has
      // (the members this is used for share none: a transfer, or an item's `error`).
      const members = objects.map((member) => ({ keys: requiredKeys(member), copy: copierOf(member) }))
      return (value) => {
        if (typeof value !== "object" || value === null) return value
        const member = members.find(({ keys }) => keys.every((key) => key in value))
        return member === undefined ? value : member.copy(value)
      }
    }
    case "Refinement":
      return copierOf(ast.from)
    default:
      return asIs
  }
}

/**
 * The answer HttpApiBuilder makes of a handler's value — the success schema's encoding as JSON,
 * with its success status — made without running the schema, for a success schema that encodes
 * as itself (no transformation anywhere in it: checked here, anything else throws when the
 * handlers are built). Its encoding is then a copy of the value's declared fields in their
 * declared order, which is what this sends, byte for byte the same text; the schema's encoding
 * (a union of one response schema, each field's checks, then the JSON) cost a transfer more than
 * the copy, and a batch of 100 its 100 items' (docs/decisions.md#the-cost-of-a-request-on-the-api-node).
 */
export const plainAnswer = <A, I>(schema: Schema.Schema<A, I, never>): ((value: A) => HttpServerResponse.HttpServerResponse) => {
  if (SchemaAST.encodedAST(schema.ast) !== schema.ast) {
    throw new Error(`plainAnswer: ${String(schema.ast)} does not encode as itself`)
  }
  const copy = copierOf(schema.ast)
  const status = HttpApiSchema.getStatusSuccess(schema)
  return (value) => HttpServerResponse.unsafeJson(copy(value), { status })
}
