import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { NotFoundFailure } from "../errors.js"

/**
 * Public: the OpenAPI document, the reference page, the event catalogue, one page per error code,
 * and the console's page, script and stylesheet (docs/console.md; the console signs in with a key).
 */
export class MetaApi extends HttpApiGroup.make("meta", { topLevel: true })
  .add(HttpApiEndpoint.get("openapi", "/openapi.json"))
  .add(HttpApiEndpoint.get("docs", "/docs"))
  .add(HttpApiEndpoint.get("events", "/docs/events"))
  .add(
    HttpApiEndpoint.get("errorDoc", "/docs/errors/:code")
      .setPath(Schema.Struct({ code: Schema.String }))
      .addError(NotFoundFailure)
  )
  .add(HttpApiEndpoint.get("console", "/console"))
  .add(HttpApiEndpoint.get("consoleScript", "/console/console.js"))
  .add(HttpApiEndpoint.get("consoleStylesheet", "/console/console.css"))
  .annotate(OpenApi.Exclude, true) {}
