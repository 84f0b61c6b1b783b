import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { CreateProgram, Program } from "@issuing/core"
import { Schema } from "effect"
import { ListOf, PagingParams } from "./Common.js"
import { OrganizationAuth } from "./Security.js"

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
  .prefix("/v1") {}
