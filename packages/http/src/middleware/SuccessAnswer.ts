import { HttpApiSchema, HttpServerResponse } from "@effect/platform"
import type { PlainResponse } from "@issuing/core"
import { Effect, Schema } from "effect"

const decoder = new TextDecoder()

/** How an endpoint answers a value its handler returns: the status and JSON text it sends. */
export type SuccessAnswer = (value: unknown) => Effect.Effect<PlainResponse>

/**
 * An endpoint's answer to a handler's value, made as HttpApiBuilder makes it: encoded with the
 * endpoint's success schema, then `HttpServerResponse.json` with the schema's success status. An
 * operation that calls out stores this answer at its commit point (docs/api.md#idempotency), so
 * the first answer and every replay are the same bytes. Only for an endpoint with one JSON success
 * schema (the router picks among several by trying each, which this does not repeat): anything
 * else throws when the route table is built.
 */
export const successAnswer = (endpoint: { readonly name: string; readonly successSchema: Schema.Schema.All }): SuccessAnswer => {
  const schema = endpoint.successSchema as Schema.Schema<unknown, unknown, never>
  const members = new Set<Schema.Schema.Any>()
  HttpApiSchema.deunionize(members, schema)
  if (members.size !== 1 || HttpApiSchema.isVoid(schema.ast) || HttpApiSchema.getEncoding(schema.ast).kind !== "Json") {
    throw new Error(`${endpoint.name}: an operation that calls out answers one JSON success schema`)
  }
  const status = HttpApiSchema.getStatusSuccess(schema)
  const encode = Schema.encodeUnknown(schema)
  // A value its own schema cannot encode, or JSON cannot hold, is a bug: a defect (a 500, nothing committed).
  return (value) =>
    encode(value).pipe(
      Effect.flatMap((encoded) => HttpServerResponse.json(encoded, { status })),
      Effect.map((response) => ({
        status: response.status,
        body: response.body._tag === "Uint8Array" ? decoder.decode(response.body.body) : ""
      })),
      Effect.orDie
    )
}
