import { ERROR_CODES, type ErrorCodeDoc } from "../errors.js"

const escapeHtml = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")

const page = (title: string, body: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:960px;margin:2rem auto;padding:0 1rem;color:#1a1a1a}
code,pre{font-family:ui-monospace,monospace;background:#f4f4f5;padding:.1rem .3rem;border-radius:4px}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #e4e4e7;padding:.4rem;text-align:left;vertical-align:top}
.m{font-weight:600;font-family:ui-monospace,monospace}
</style></head><body>${body}</body></html>`

/** The reference page: every operation of the OpenAPI document and every error code. */
export const referencePage = (spec: any): string => {
  const rows: Array<string> = []
  for (const [path, item] of Object.entries(spec.paths ?? {}) as Array<[string, Record<string, any>]>) {
    for (const [method, operation] of Object.entries(item)) {
      if (typeof operation !== "object" || operation === null || !("responses" in operation)) continue
      rows.push(
        `<tr><td class="m">${method.toUpperCase()}</td><td><code>${escapeHtml(path)}</code></td><td>${escapeHtml(
          operation.summary ?? operation.description ?? operation.operationId ?? ""
        )}</td></tr>`
      )
    }
  }
  const errors = Object.entries(ERROR_CODES)
    .map(
      ([code, doc]) => `<tr><td><a href="docs/errors/${code}">${code}</a></td><td>${doc.status}</td><td>${escapeHtml(doc.type)}</td></tr>`
    )
    .join("")
  return page(
    "Issuing API reference",
    `<h1>Issuing API reference</h1>
<p>Authenticate with <code>Authorization: Bearer &lt;API_KEY&gt;</code>; program-scoped operations also need
<code>X-Program-ID</code>. Bodies are JSON. The machine-readable document is <a href="openapi.json">/openapi.json</a>.</p>
<h2>Operations</h2><table><tr><th>Method</th><th>Path</th><th>Summary</th></tr>${rows.join("")}</table>
<h2>Errors</h2><p>Every error is <code>{"error":{"type","code","message","param","request_id","doc_url"}}</code>.</p>
<table><tr><th>Code</th><th>Status</th><th>Type</th></tr>${errors}</table>`
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
