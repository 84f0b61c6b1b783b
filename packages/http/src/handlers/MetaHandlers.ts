import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { IssuingConfig } from "@issuing/core"
import { Effect } from "effect"
import { IssuingApi } from "../Api.js"
import { openApiDocument } from "../docs/OpenApiDocument.js"
import { DOCS_CSP, errorPage, eventsPage, referencePage } from "../docs/ReferencePage.js"
import { apiFailure, errorCodeDoc } from "../errors.js"

/** A documentation page: self-contained, its stylesheet allowed by hash, no script (ReferencePage.ts). */
const html = (body: string) =>
  HttpServerResponse.text(body, {
    contentType: "text/html; charset=utf-8",
    headers: { "content-security-policy": DOCS_CSP, "x-content-type-options": "nosniff", "referrer-policy": "no-referrer" }
  })

export const MetaHandlersLive = HttpApiBuilder.group(IssuingApi, "meta", (handlers) =>
  Effect.gen(function* () {
    const config = yield* IssuingConfig
    return handlers
      .handle("openapi", () => Effect.succeed(HttpServerResponse.unsafeJson(openApiDocument(config.baseUrl))))
      .handle("docs", () => Effect.succeed(html(referencePage(openApiDocument(config.baseUrl)))))
      .handle("events", () => Effect.succeed(html(eventsPage(openApiDocument(config.baseUrl)))))
      .handle("errorDoc", ({ path }) => {
        const doc = errorCodeDoc(path.code)
        return doc === undefined
          ? Effect.fail(apiFailure("not_found", "No such error code.", "code"))
          : Effect.succeed(html(errorPage(path.code, doc)))
      })
  })
)
