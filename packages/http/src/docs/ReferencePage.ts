import * as crypto from "node:crypto"
import { IssuingApi } from "../Api.js"
import { ERROR_CODES, type ErrorCodeDoc } from "../errors.js"
import { makeRouteTable } from "../middleware/RouteTable.js"
import { EVENT_CATALOGUE } from "./EventCatalogue.js"

// The pages a person reads (/docs, /docs/events, /docs/errors/<code>), rendered from the OpenAPI
// document on the server: self-contained HTML, no script, no CDN, one stylesheet allowed by its hash.

const STYLE = `body{font:15px/1.55 system-ui,sans-serif;max-width:1000px;margin:2rem auto;padding:0 1rem;color:#1a1a1a}
code,pre{font-family:ui-monospace,monospace;background:#f4f4f5;border-radius:4px}code{padding:.1rem .3rem}
pre{padding:.6rem .8rem;overflow-x:auto;white-space:pre-wrap;word-break:break-all}
table{border-collapse:collapse;width:100%;margin:.4rem 0}td,th{border-bottom:1px solid #e4e4e7;padding:.35rem;text-align:left;vertical-align:top}
.m{font-weight:600;font-family:ui-monospace,monospace}.op{border-top:2px solid #e4e4e7;margin-top:1.6rem;padding-top:.4rem}
.muted{color:#52525b}nav a{margin-right:.6rem;white-space:nowrap}h2{margin-top:2.4rem}`

/**
 * The Content-Security-Policy of the documentation pages: nothing loads but the page's own
 * stylesheet (by its hash); no script runs.
 */
export const DOCS_CSP = `default-src 'none'; style-src 'sha256-${crypto.createHash("sha256").update(STYLE).digest("base64")}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`

const escapeHtml = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")

/** `code` spans for backticked words of a description, the rest escaped. */
const prose = (text: string) => escapeHtml(text).replace(/`([^`]+)`/g, (_, inner: string) => `<code>${inner}</code>`)

const page = (title: string, body: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style></head><body>${body}</body></html>`

type Json = any

/** A component schema by `$ref`, else the schema itself. */
const resolve = (spec: Json, schema: Json): Json => {
  if (schema?.$ref === undefined) return schema
  return spec.components?.schemas?.[String(schema.$ref).replace("#/components/schemas/", "")] ?? {}
}

/** A schema in a few words: `string`, `integer`, one of its values, `array of …`, `… or null`. */
const typeText = (spec: Json, raw: Json): string => {
  const schema = resolve(spec, raw)
  if (schema === undefined || schema === null) return "any"
  if (Array.isArray(schema.anyOf)) return schema.anyOf.map((member: Json) => typeText(spec, member)).join(" or ")
  if (schema.const !== undefined) return JSON.stringify(schema.const)
  if (Array.isArray(schema.enum)) return `one of ${schema.enum.map((value: unknown) => JSON.stringify(value)).join(", ")}`
  if (schema.type === "array") return `array of ${typeText(spec, schema.items)}`
  if (schema.type === "object" || schema.properties !== undefined) {
    const name = raw?.$ref === undefined ? "" : String(raw.$ref).replace("#/components/schemas/", "")
    return name === "" ? "object" : `object (${name})`
  }
  if (schema.type === "null") return "null"
  return String(schema.type ?? (schema.additionalProperties !== undefined ? "object" : "any"))
}

/** Rows for an object schema's fields, nested objects (and arrays of objects) dotted, at most 4 levels. */
const fieldRows = (spec: Json, raw: Json, prefix = "", depth = 0): Array<string> => {
  const schema = resolve(spec, raw)
  if (schema === undefined || schema === null || depth > 4) return []
  if (Array.isArray(schema.anyOf)) {
    const objects = schema.anyOf.filter((member: Json) => resolve(spec, member)?.properties !== undefined)
    return objects.length === 1 ? fieldRows(spec, objects[0], prefix, depth) : []
  }
  if (schema.type === "array") return fieldRows(spec, schema.items, prefix === "" ? prefix : `${prefix}[]`, depth)
  const required = new Set<string>(schema.required ?? [])
  const rows: Array<string> = []
  for (const [name, field] of Object.entries(schema.properties ?? {}) as Array<[string, Json]>) {
    const path = prefix === "" ? name : `${prefix}.${name}`
    const resolved = resolve(spec, field)
    const description = resolved?.description ?? field?.description ?? ""
    rows.push(
      `<tr><td><code>${escapeHtml(path)}</code></td><td>${escapeHtml(typeText(spec, field))}</td><td>${required.has(name) ? "required" : "optional"}</td><td>${prose(description)}</td></tr>`
    )
    rows.push(...fieldRows(spec, field, path, depth + 1))
  }
  return rows
}

const fieldTable = (rows: ReadonlyArray<string>) =>
  rows.length === 0
    ? '<p class="muted">No fields.</p>'
    : `<table><tr><th>Field</th><th>Type</th><th></th><th>Description</th></tr>${rows.join("")}</table>`

/** A value of the schema's shape for a curl example: required fields only, first enum values. */
const sampleOf = (spec: Json, raw: Json, depth = 0): unknown => {
  const schema = resolve(spec, raw)
  if (schema === undefined || schema === null || depth > 4) return null
  if (Array.isArray(schema.anyOf)) return sampleOf(spec, schema.anyOf.find((member: Json) => member?.type !== "null") ?? {}, depth)
  if (schema.const !== undefined) return schema.const
  if (Array.isArray(schema.enum)) return schema.enum[0]
  if (schema.type === "array") return [sampleOf(spec, schema.items, depth + 1)]
  if (schema.type === "integer" || schema.type === "number") return 100
  if (schema.type === "boolean") return true
  if (schema.properties !== undefined) {
    const sample: Record<string, unknown> = {}
    for (const name of schema.required ?? []) sample[name] = sampleOf(spec, schema.properties[name], depth + 1)
    return sample
  }
  return "string"
}

const STATUS_MEANING: Readonly<Record<string, string>> = {
  "400": "invalid request: a field failing validation, an unknown field or query parameter, a bad header",
  "401": "no key, or a malformed, unknown or revoked one",
  "403": "the key's role, program or rights do not allow it",
  "404": "an id the caller cannot see, or sandbox-only in production",
  "409": "the resource's state forbids it, or an Idempotency-Key clash",
  "413": "the body is over the limit",
  "422": "a business rule (the code names it)",
  "429": "rate limited: see Retry-After",
  "500": "an internal error: nothing was committed, retry with the same Idempotency-Key"
}

const routes = makeRouteTable(IssuingApi)

const titleOf = (tag: string) => tag.replace(/([a-z])([A-Z])/g, "$1 $2").replace(/^./, (first) => first.toUpperCase())

/** The curl command of an operation. */
const curlOf = (spec: Json, method: string, path: string, operation: Json): string => {
  const base = spec.servers?.[0]?.url ?? ""
  const url = `${base}${path.replace(/\{([a-z_]+)\}/g, (_, name: string) => `$${name.toUpperCase()}`)}`
  const lines = [`curl -X ${method.toUpperCase()} "${url}"`]
  const scope = path.startsWith("/v1/") ? routes.match(method.toUpperCase(), path) : undefined
  if (scope?._tag === "Matched" && scope.scope !== "public") lines.push('-H "Authorization: Bearer $ISSUING_API_KEY"')
  if (scope?._tag === "Matched" && scope.scope === "program") lines.push('-H "X-Program-ID: $PROGRAM_ID"')
  const body = operation.requestBody?.content?.["application/json"]
  if (body !== undefined) {
    lines.push('-H "Content-Type: application/json"')
    if (method === "post") lines.push('-H "Idempotency-Key: $(uuidgen)"')
    lines.push(`-d '${JSON.stringify(body.example ?? sampleOf(spec, body.schema)).replace(/'/g, "'\\''")}'`)
  } else if (method === "post" && path.startsWith("/v1/")) {
    lines.push('-H "Idempotency-Key: $(uuidgen)"')
  }
  return lines.join(" \\\n  ")
}

const parametersOf = (spec: Json, operation: Json): string => {
  const rows = (operation.parameters ?? []).map(
    (parameter: Json) =>
      `<tr><td><code>${escapeHtml(parameter.name)}</code></td><td>${parameter.in}</td><td>${escapeHtml(typeText(spec, parameter.schema))}</td><td>${parameter.required ? "required" : "optional"}</td><td>${prose(parameter.description ?? "")}</td></tr>`
  )
  return rows.length === 0
    ? ""
    : `<h4>Parameters</h4><table><tr><th>Name</th><th>In</th><th>Type</th><th></th><th>Description</th></tr>${rows.join("")}</table>`
}

const operationSection = (spec: Json, method: string, path: string, operation: Json): string => {
  const id = String(operation.operationId ?? `${method}-${path}`)
  const body = operation.requestBody?.content?.["application/json"] ?? operation.requestBody?.content?.["application/x-www-form-urlencoded"]
  const successes = Object.entries(operation.responses ?? {}).filter(([status]) => Number(status) < 400) as Array<[string, Json]>
  const errors = Object.keys(operation.responses ?? {}).filter((status) => Number(status) >= 400)
  const success = successes
    .map(([status, response]) => {
      const schema = response?.content?.["application/json"]?.schema
      const rows = schema === undefined ? [] : fieldRows(spec, schema)
      return `<p><b>${status}</b> ${escapeHtml(schema === undefined ? (response?.description ?? "") : typeText(spec, schema))}</p>${
        rows.length === 0 ? "" : `<details><summary>Fields</summary>${fieldTable(rows)}</details>`
      }`
    })
    .join("")
  return `<section class="op" id="${escapeHtml(id)}">
<h3>${escapeHtml(operation.summary ?? id)}</h3>
<p><span class="m">${method.toUpperCase()}</span> <code>${escapeHtml(path)}</code></p>
<p>${prose(operation.description ?? "")}</p>
${parametersOf(spec, operation)}
${body === undefined ? "" : `<h4>Body</h4>${fieldTable(fieldRows(spec, body.schema))}`}
<h4>Response</h4>${success}
${errors.length === 0 ? "" : `<h4>Errors</h4><table>${errors.map((status) => `<tr><td>${status}</td><td>${escapeHtml(STATUS_MEANING[status] ?? "see the body")}</td></tr>`).join("")}</table>`}
<h4>Example</h4><pre>${escapeHtml(curlOf(spec, method, path, operation))}</pre>
</section>`
}

/** The reference page: every operation of the OpenAPI document, grouped by resource, then every error code. */
export const referencePage = (spec: Json): string => {
  const groups = new Map<string, Array<string>>()
  for (const [path, item] of Object.entries(spec.paths ?? {}) as Array<[string, Record<string, Json>]>) {
    for (const [method, operation] of Object.entries(item)) {
      if (typeof operation !== "object" || operation === null || !("responses" in operation)) continue
      const tag = String(operation.tags?.[0] ?? "other")
      groups.set(tag, [...(groups.get(tag) ?? []), operationSection(spec, method, path, operation)])
    }
  }
  const nav = [...groups.keys()].map((tag) => `<a href="#group-${escapeHtml(tag)}">${escapeHtml(titleOf(tag))}</a>`).join(" ")
  const sections = [...groups.entries()]
    .map(([tag, operations]) => `<h2 id="group-${escapeHtml(tag)}">${escapeHtml(titleOf(tag))}</h2>${operations.join("")}`)
    .join("")
  const errors = Object.entries(ERROR_CODES)
    .map(
      ([code, doc]) =>
        `<tr><td><a href="docs/errors/${code}">${code}</a></td><td>${doc.status}</td><td>${escapeHtml(doc.type)}</td><td>${escapeHtml(doc.title)}</td></tr>`
    )
    .join("")
  return page(
    "Issuing API reference",
    `<h1>Issuing API reference <span class="muted">${escapeHtml(String(spec.info?.version ?? ""))}</span></h1>
<p>Authenticate with <code>Authorization: Bearer &lt;API_KEY&gt;</code>; program-scoped operations also need
<code>X-Program-ID</code>. Bodies are JSON; a field or query parameter an operation does not take is refused (400 naming it).
Every POST takes an <code>Idempotency-Key</code>. Lists page with <code>page</code>/<code>page_size</code> or <code>starting_after</code>.
Webhook payloads: the <a href="docs/events">event catalogue</a>. Machine-readable: <a href="openapi.json">/openapi.json</a>.</p>
<nav>${nav} <a href="#errors">Errors</a></nav>
${sections}
<h2 id="errors">Errors</h2><p>Every error is <code>{"error":{"type","code","message","param","request_id","doc_url"}}</code>.</p>
<table><tr><th>Code</th><th>Status</th><th>Type</th><th>Meaning</th></tr>${errors}</table>`
  )
}

/** The event catalogue: each event type, when it is sent, and the schema of its `data.object`. */
export const eventsPage = (spec: Json): string => {
  const sections = Object.entries(EVENT_CATALOGUE).map(([type, doc]) => {
    const schema = { $ref: `#/components/schemas/${doc.object}` }
    const sample = {
      id: "…",
      object: "event",
      type,
      program_id: "…",
      tags: [],
      created_at: "2026-05-02T09:30:00.000Z",
      data: { object: { object: "…" } }
    }
    return `<section class="op" id="${escapeHtml(type)}"><h3><code>${escapeHtml(type)}</code></h3><p>${prose(doc.when)}</p>
<p><code>data.object</code>: ${escapeHtml(doc.object)}</p>${fieldTable(fieldRows(spec, schema))}
<pre>${escapeHtml(JSON.stringify(sample, null, 2))}</pre></section>`
  })
  const nav = Object.keys(EVENT_CATALOGUE)
    .map((type) => `<a href="#${escapeHtml(type)}">${escapeHtml(type)}</a>`)
    .join(" ")
  return page(
    "Issuing events",
    `<h1>Event catalogue</h1>
<p>Every event is <code>{id, object: "event", type, program_id, tags, created_at, data: {object}}</code> (<code>tags</code>: the tags
of the wallets it concerns; a tagged subscription receives only the events of its tag), delivered to webhook
subscriptions signed per Standard Webhooks (headers <code>webhook-id</code>, <code>webhook-timestamp</code>,
<code>webhook-signature</code>) and listed by <code>GET /v1/events</code>. <a href="../docs">The API reference</a>.</p>
<nav>${nav}</nav>${sections.join("")}`
  )
}

/** The page of one error code. */
export const errorPage = (code: string, doc: ErrorCodeDoc): string =>
  page(
    `Error ${code}`,
    `<h1><code>${escapeHtml(code)}</code></h1><p>${escapeHtml(doc.title)} — HTTP ${doc.status}, type <code>${escapeHtml(
      doc.type
    )}</code>.</p><p>${escapeHtml(doc.description)}</p><p><a href="../../docs">All errors and operations</a></p>`
  )
