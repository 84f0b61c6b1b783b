import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { ListOf, Name, PagingParams, Timestamp } from "./Common.js"
import { OrganizationAuth } from "./Security.js"

/** A card program (CONTRACT §2). */
export const Program = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("program"),
  name: Schema.String,
  bin: Schema.String,
  created_at: Timestamp,
  updated_at: Timestamp
}).annotations({ identifier: "Program" })

export const CreateProgram = Schema.Struct({
  name: Name(),
  bin: Schema.optional(
    Schema.String.pipe(Schema.pattern(/^\d{6,8}$/, { message: () => "bin must be 6 to 8 digits" }))
  )
})

/** Organization-scoped: programs of the caller's organization. */
export class ProgramsApi extends HttpApiGroup.make("programs")
  .add(HttpApiEndpoint.post("create", "/programs").setPayload(CreateProgram).addSuccess(Program))
  .add(HttpApiEndpoint.get("list", "/programs").setUrlParams(Schema.Struct(PagingParams)).addSuccess(ListOf(Program)))
  .add(
    HttpApiEndpoint.get("get", "/programs/:program_id")
      .setPath(Schema.Struct({ program_id: Schema.String }))
      .addSuccess(Program)
  )
  .middleware(OrganizationAuth)
  .prefix("/v1")
{}
