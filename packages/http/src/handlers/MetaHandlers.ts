import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { IssuingConfig } from "@issuing/core"
import { Effect } from "effect"
import { IssuingApi } from "../Api.js"
import { consoleDocument, consoleHeaders, consoleScript, consoleStylesheet } from "../console/ConsolePage.js"
import { openApiDocument } from "../docs/OpenApiDocument.js"
import { DOCS_CSP, errorPage, eventsPage, referencePage } from "../docs/ReferencePage.js"
import { apiFailure, errorCodeDoc } from "../errors.js"

/** A documentation page: self-contained, its stylesheet allowed by hash, no script (ReferencePage.ts). */
const html = (body: string) =>
  HttpServerResponse.text(body, {
    contentType: "text/html; charset=utf-8",
    headers: { "content-security-policy": DOCS_CSP, "x-content-type-options": "nosniff", "referrer-policy": "no-referrer" }
  })

/** A console asset, or a 500 saying the package was not built (the bundle is made by `npm run build`). */
const consoleAsset = (text: string | undefined, contentType: string, headers: Readonly<Record<string, string>>) =>
  text === undefined
    ? Effect.zipRight(
        Effect.logError("The console's bundle is missing: build @issuing/http (npm run build) to serve /console."),
        Effect.fail(apiFailure("internal_error", "The console is not built on this server.", null))
      )
    : Effect.succeed(HttpServerResponse.text(text, { contentType, headers }))

export const MetaHandlersLive = HttpApiBuilder.group(IssuingApi, "meta", (handlers) =>
  Effect.gen(function* () {
    const config = yield* IssuingConfig
    return handlers
      .handle("openapi", () => Effect.succeed(HttpServerResponse.unsafeJson(openApiDocument(config.baseUrl, config.environment))))
      .handle("docs", () => Effect.succeed(html(referencePage(openApiDocument(config.baseUrl, config.environment)))))
      .handle("events", () => Effect.succeed(html(eventsPage(openApiDocument(config.baseUrl, config.environment)))))
      .handle("errorDoc", ({ path }) => {
        const doc = errorCodeDoc(path.code)
        return doc === undefined
          ? Effect.fail(apiFailure("not_found", "No such error code.", "code"))
          : Effect.succeed(html(errorPage(path.code, doc)))
      })
      .handle("console", () => consoleAsset(consoleDocument(config.baseUrl), "text/html; charset=utf-8", consoleHeaders(config.baseUrl)))
      .handle("consoleScript", () => consoleAsset(consoleScript(), "text/javascript; charset=utf-8", consoleHeaders(config.baseUrl)))
      .handle("consoleStylesheet", () => consoleAsset(consoleStylesheet(), "text/css; charset=utf-8", consoleHeaders(config.baseUrl)))
  })
)
