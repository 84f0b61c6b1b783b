import { HttpApi, OpenApi } from "@effect/platform"
import { ApiKeysApi } from "./api/ApiKeysApi.js"
import { MetaApi } from "./api/MetaApi.js"
import { ProgramsApi } from "./api/ProgramsApi.js"
import { ApiFailure } from "./errors.js"

/** The whole HTTP API: every group, each under /v1 except the public meta routes. */
export class IssuingApi extends HttpApi.make("issuing")
  .add(ProgramsApi)
  .add(ApiKeysApi)
  .add(MetaApi)
  .addError(ApiFailure)
  .annotate(OpenApi.Title, "Issuing API")
  .annotate(OpenApi.Version, "1.2.0")
{}
