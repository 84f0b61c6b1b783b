import { withCardDisplayFrameSrc } from "@issuing/client"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as path from "node:path"

/** What the host app needs to ask the platform for embed sessions. Kept on the server, never sent to the browser. */
export interface CardDisplayOptions {
  /** The platform's public base URL (ISSUING_BASE_URL), e.g. https://issuing.example.com. */
  readonly issuingUrl: string
  /** A server-side API key of the program (no PAN reveal needed). */
  readonly apiKey: string
  readonly programId: string
  /**
   * The card shown. A real app looks the card up from its signed-in cardholder; the example shows
   * one configured card.
   */
  readonly cardId: string
  readonly host?: string
  readonly port?: number
  /** The page's Content-Security-Policy; default `hostPolicy(origin of issuingUrl)`. */
  readonly policy?: string
}

export interface CardDisplayServer {
  readonly url: string
  readonly close: () => Promise<void>
}

const PUBLIC_DIR = path.join(import.meta.dirname, "..", "public")
const STATIC: Record<string, { readonly file: string; readonly type: string }> = {
  "/": { file: "index.html", type: "text/html; charset=utf-8" },
  "/app.js": { file: "app.js", type: "text/javascript; charset=utf-8" },
  "/app.css": { file: "app.css", type: "text/css; charset=utf-8" }
}

/**
 * The host page's own policy, before the card display: everything limited to this origin, no
 * frames at all, and nothing may frame the host page itself.
 */
export const BASE_POLICY = [
  "default-src 'self'",
  "frame-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'"
].join("; ")

/** Rule 3: the base policy with the platform's origin allowed to load the embed iframe. */
export const hostPolicy = (issuingOrigin: string) => withCardDisplayFrameSrc(BASE_POLICY, issuingOrigin)

/**
 * The example host app: serves the page and one backend route, `POST /api/card-sessions`, which
 * creates an embed session server-side (the API key never reaches the browser) and hands the
 * browser only what it needs: embed_url and expires_at.
 */
export const startCardDisplayServer = async (options: CardDisplayOptions): Promise<CardDisplayServer> => {
  const issuing = new URL(options.issuingUrl)
  const policy = options.policy ?? hostPolicy(issuing.origin)

  const createSession = async () => {
    const response = await fetch(
      `${options.issuingUrl.replace(/\/+$/, "")}/v1/cards/${encodeURIComponent(options.cardId)}/embed-sessions`,
      {
        method: "POST",
        headers: {
          authorization: `Bearer ${options.apiKey}`,
          "x-program-id": options.programId,
          "idempotency-key": crypto.randomUUID()
        }
      }
    )
    const body = (await response.json()) as { embed_url?: string; expires_at?: string; error?: { code: string } }
    if (!response.ok || body.embed_url === undefined) {
      return { status: 502, body: { error: `Could not open the card display (${body.error?.code ?? response.status}).` } }
    }
    return { status: 200, body: { embed_url: body.embed_url, expires_at: body.expires_at } }
  }

  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://localhost")
    const common = {
      "content-security-policy": policy,
      "referrer-policy": "no-referrer",
      "x-content-type-options": "nosniff",
      "cache-control": "no-store"
    }
    if (request.method === "POST" && url.pathname === "/api/card-sessions") {
      createSession().then(
        ({ body, status }) => {
          response.writeHead(status, { ...common, "content-type": "application/json" })
          response.end(JSON.stringify(body))
        },
        () => {
          response.writeHead(502, { ...common, "content-type": "application/json" })
          response.end(JSON.stringify({ error: "The card platform is unreachable." }))
        }
      )
      return
    }
    const asset = request.method === "GET" ? STATIC[url.pathname] : undefined
    if (asset === undefined) {
      response.writeHead(404, { ...common, "content-type": "text/plain" })
      response.end("Not found")
      return
    }
    response.writeHead(200, { ...common, "content-type": asset.type })
    response.end(fs.readFileSync(path.join(PUBLIC_DIR, asset.file)))
  })
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? "127.0.0.1", resolve))
  const address = server.address() as AddressInfo
  return {
    url: `http://${address.address}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
