// A program's authorization endpoint (docs/card-transactions.md#real-time-decisions): the platform
// POSTs `authorization.request` after its own checks approve (card state, merchant category lists,
// spending period), signed as Standard Webhooks, and waits at most the endpoint's `timeout_ms`
// (default 2 s) for `{ approved, amount?, decline_reason? }`. This one
//   - verifies the signature with the `standardwebhooks` package against the raw body, first;
//   - declines merchant categories the program does not serve (gambling, by default);
//   - approves up to a per-authorization ceiling; above it, approves the ceiling when the merchant
//     can take a partial approval, else declines;
//   - answers at once: it keeps no state and calls nothing, so it is never the slow part.
//
//   AUTHORIZATION_SECRET=whsec_… PORT=3100 node server.js
//   then: POST /v1/authorization-endpoints {"url": "http://…:3100/authorize"} (the secret is in its answer)
import * as http from "node:http"
import { pathToFileURL } from "node:url"
import { Webhook } from "standardwebhooks"

/** Largest request accepted: an authorization request is a few kilobytes. */
const MAX_BODY_BYTES = 256 * 1024

/**
 * The decision for one request's `data` (pure, so it is easy to test and to change).
 * @param {{ amount: number, partial_approval_capable: boolean, object: { mcc: string | null } }} data
 * @param {{ blockedMccs: ReadonlyArray<string>, ceiling: number }} rules
 */
export function decide(data, rules) {
  const mcc = data.object?.mcc ?? null
  if (mcc !== null && rules.blockedMccs.includes(mcc)) return { approved: false, decline_reason: "merchant_category_not_served" }
  if (data.amount <= rules.ceiling) return { approved: true }
  if (data.partial_approval_capable) return { approved: true, amount: rules.ceiling }
  return { approved: false, decline_reason: "amount_over_ceiling" }
}

/**
 * Starts the endpoint.
 * @param {{ secret: string, port?: number, host?: string, path?: string, blockedMccs?: Array<string>, ceiling?: number }} options
 */
export async function startAuthorizationEndpoint(options) {
  const webhook = new Webhook(options.secret)
  const path = options.path ?? "/authorize"
  const rules = { blockedMccs: options.blockedMccs ?? ["7995"], ceiling: options.ceiling ?? 50_000 }
  const stats = { approved: 0, declined: 0, rejected: 0 }

  const server = http.createServer((request, response) => {
    if (request.method !== "POST" || request.url !== path) {
      response.writeHead(404).end()
      return
    }
    const chunks = []
    let size = 0
    request.on("data", (chunk) => {
      size += chunk.length
      if (size > MAX_BODY_BYTES) {
        response.writeHead(413, { connection: "close" }).end()
        request.destroy()
        return
      }
      chunks.push(chunk)
    })
    request.on("end", () => {
      if (response.writableEnded) return
      const body = Buffer.concat(chunks).toString("utf8")
      let event
      try {
        // Verifies the signature and the timestamp (within 5 minutes), then parses.
        event = webhook.verify(body, request.headers)
      } catch {
        stats.rejected += 1
        response.writeHead(401).end()
        return
      }
      const answer = event.type === "authorization.request" ? decide(event.data, rules) : { approved: false }
      if (answer.approved) stats.approved += 1
      else stats.declined += 1
      const text = JSON.stringify(answer)
      response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
      response.end(text)
    })
  })
  // Keep connections open longer than the platform keeps them idle, so a reused one is never closed under it.
  server.keepAliveTimeout = 65_000
  await new Promise((resolve) => server.listen(options.port ?? 3100, options.host ?? "127.0.0.1", resolve))
  const address = server.address()
  return {
    url: `http://${options.host ?? "127.0.0.1"}:${address.port}${path}`,
    stats,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(resolve)
      })
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const secret = process.env.AUTHORIZATION_SECRET
  if (!secret) {
    console.error("authorization-endpoint: set AUTHORIZATION_SECRET to the endpoint's whsec_… secret")
    process.exit(64)
  }
  const endpoint = await startAuthorizationEndpoint({ secret, port: Number(process.env.PORT ?? 3100) })
  console.log(`authorization-endpoint: deciding at ${endpoint.url}`)
  process.on("SIGTERM", () => endpoint.close().then(() => process.exit(0)))
}
