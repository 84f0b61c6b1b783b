import * as fs from "node:fs"

/**
 * The console (docs/console.md): one HTML page, one script and one stylesheet, all served by the
 * platform itself. The script is bundled at build time (scripts/build-console.mjs) into
 * `dist/console/`; the stylesheet is kept as written. The page is a client of the public /v1 API
 * only, signed in with a key or token the operator pastes in.
 */

/** Where the bundled script lies, from `src/console/` (tests) and from `dist/console/` (the package) alike. */
const BUNDLE = new URL("../../dist/console/console.js", import.meta.url)
/** The stylesheet, shipped with the package's sources. */
const STYLESHEET = new URL("../../src/console/browser/console.css", import.meta.url)

/** The console's two assets, read once: they do not change while the process runs. */
const cached = new Map<string, string>()
const readAsset = (url: URL): string | undefined => {
  const known = cached.get(url.href)
  if (known !== undefined) return known
  try {
    const text = fs.readFileSync(url, "utf8")
    cached.set(url.href, text)
    return text
  } catch {
    return undefined
  }
}

/** The bundled script, or undefined when the package was not built (`npm run build`). */
export const consoleScript = (): string | undefined => readAsset(BUNDLE)

/** The console's stylesheet. */
export const consoleStylesheet = (): string | undefined => readAsset(STYLESHEET)

/** The mount path a base URL names (`https://host/issuing` → `/issuing`; none → ``). */
export const mountPathOf = (baseUrl: string): string => new URL(baseUrl).pathname.replace(/\/+$/, "")

/**
 * The console's Content-Security-Policy: its own script and stylesheet only, requests to its own
 * origin only (the /v1 API), frames from the platform's origin only (the card display's embed
 * document, docs/card-data.md), nothing else: no inline script or style, no third-party origin.
 */
export const consolePolicy = (baseUrl: string): string =>
  [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "connect-src 'self'",
    "img-src 'self'",
    `frame-src ${new URL(baseUrl).origin}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'"
  ].join("; ")

/** Headers every console response carries besides its type. */
export const consoleHeaders = (baseUrl: string): Readonly<Record<string, string>> => ({
  "content-security-policy": consolePolicy(baseUrl),
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "x-robots-tag": "noindex, nofollow"
})

const escapeAttribute = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!)

/**
 * The console's HTML: an empty shell the script fills. The mount path is read from the base URL
 * (a host app includes it there, docs/console.md#under-a-mount-path), so the assets and the API are found under
 * it; the script reads it from `data-base-path`.
 */
export const consoleDocument = (baseUrl: string): string => {
  const base = escapeAttribute(mountPathOf(baseUrl))
  return [
    "<!doctype html>",
    `<html lang="en"><head><meta charset="utf-8">`,
    `<meta name="viewport" content="width=device-width, initial-scale=1">`,
    `<meta name="referrer" content="no-referrer">`,
    `<title>Issuing console</title>`,
    `<link rel="stylesheet" href="${base}/console/console.css">`,
    `<script defer src="${base}/console/console.js"></script>`,
    `</head><body data-base-path="${base}">`,
    `<noscript>The console needs JavaScript.</noscript>`,
    `<div id="app"></div>`,
    `</body></html>`
  ].join("")
}
