import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { CreateProgram, Program, UpdateProgram } from "@issuing/core"
import { Schema } from "effect"
import { ListOf, PagingParams, patch, post } from "./Common.js"
import { OrganizationScoped } from "./Security.js"
import { NotFoundFailure } from "../errors.js"

/** Organization-scoped: programs of the caller's organization. */
export class ProgramsApi extends HttpApiGroup.make("programs")
  .add(post("create", "/programs").setPayload(CreateProgram).addSuccess(Program))
  .add(HttpApiEndpoint.get("list", "/programs").setUrlParams(Schema.Struct(PagingParams)).addSuccess(ListOf(Program)))
  .add(
    HttpApiEndpoint.get("get", "/programs/:program_id")
      .setPath(Schema.Struct({ program_id: Schema.String }))
      .addError(NotFoundFailure)
      .addSuccess(Program)
  )
  .add(
    patch("update", "/programs/:program_id")
      .setPath(Schema.Struct({ program_id: Schema.String }))
      .setPayload(UpdateProgram)
      .addError(NotFoundFailure)
      .addSuccess(Program)
  )
  .middleware(OrganizationScoped)
  .prefix("/v1") {}
