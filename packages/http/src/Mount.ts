import type { IssuingSettings } from "@issuing/core"
import { isLoopbackHost } from "./config.js"

/**
 * Where a host app mounts the platform, and what its base URL and its listen address must agree
 * with (README.md#embedding-in-your-application). Wrong, they fail silently: a console whose
 * assets 404, `embed_url`s and `doc_url`s pointing at another port, private webhook targets
 * allowed on a server the network reaches. So they are said once, at start and on the first request.
 */

/** A mount path as the platform routes it: `/issuing` for `issuing`, `/issuing/` or `/issuing`; `""` for none or `/`. */
export const normalizeBasePath = (basePath: string | undefined): string => {
  if (basePath === undefined || basePath === "" || basePath === "/") return ""
  return `/${basePath.replace(/^\/+|\/+$/g, "")}`
}

/** The unspecified addresses: a server listens on every interface there, and no browser can be sent to them. */
const isUnspecifiedHost = (hostname: string): boolean => {
  const bare = hostname.replace(/^\[|\]$/g, "")
  return bare === "0.0.0.0" || bare === "::" || bare === "0:0:0:0:0:0:0:0"
}

/**
 * Why `baseUrl` cannot be where callers reach a platform mounted at `basePath` (normalized): the
 * start-up warnings of `createIssuing`, empty when nothing is wrong. The base URL's path must end
 * with the mount path (a proxy may add a prefix before it), and name a host and port a browser can use.
 */
export const baseUrlProblems = (baseUrl: string, basePath: string): ReadonlyArray<string> => {
  const url = new URL(baseUrl)
  const problems: Array<string> = []
  const fix = `set ISSUING_BASE_URL (settings.baseUrl) to the public URL of the mount, e.g. https://app.example.com${basePath}`
  if (basePath !== "" && !url.pathname.replace(/\/+$/, "").endsWith(basePath)) {
    problems.push(
      `the base URL ${baseUrl} does not end with the mount path ${basePath}: embed_url, doc_url and the console's assets point outside the mount; ${fix}`
    )
  }
  if (isUnspecifiedHost(url.hostname)) {
    problems.push(`the base URL ${baseUrl} names the address of every interface, which no browser can be sent to; ${fix}`)
  }
  if (url.port === "0") {
    problems.push(`the base URL ${baseUrl} names port 0, not the port the server listens on; ${fix}`)
  }
  return problems
}

/**
 * The warning for private webhook targets allowed on a server listening on `address` (what Node
 * reports for the server a request came through), or undefined when that is safe: loopback, or
 * private targets refused (docs/webhooks.md#ssrf-guard).
 */
export const privateTargetsProblem = (address: string | undefined, settings: IssuingSettings): string | undefined => {
  if (!settings.webhookAllowPrivateUrls || address === undefined || isLoopbackHost(address)) return undefined
  return `private webhook targets are allowed (ISSUING_WEBHOOK_ALLOW_PRIVATE_URLS, settings.webhookAllowPrivateUrls) on a server listening on ${address}, not on loopback only: any key holder who reaches it can make it call its own network; listen on 127.0.0.1 or set ISSUING_WEBHOOK_ALLOW_PRIVATE_URLS=false (docs/webhooks.md#ssrf-guard)`
}
