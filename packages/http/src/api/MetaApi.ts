import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { NotFoundFailure } from "../errors.js"

/** Public: the OpenAPI document, the reference page, the event catalogue and one page per error code. */
export class MetaApi extends HttpApiGroup.make("meta", { topLevel: true })
  .add(HttpApiEndpoint.get("openapi", "/openapi.json"))
  .add(HttpApiEndpoint.get("docs", "/docs"))
  .add(HttpApiEndpoint.get("events", "/docs/events"))
  .add(
    HttpApiEndpoint.get("errorDoc", "/docs/errors/:code")
      .setPath(Schema.Struct({ code: Schema.String }))
      .addError(NotFoundFailure)
  )
  .annotate(OpenApi.Exclude, true) {}
