// A webhook receiver for the issuing platform, the way docs/webhooks.md asks receivers to behave:
//   - verify every delivery with the `standardwebhooks` package (signature over id.timestamp.body,
//     timestamp within 5 minutes) against the raw body, before parsing it;
//   - dedupe by `webhook-id` (the event id): delivery is at least once, so the same event can
//     arrive again (a retry whose answer was lost, a replay, a resend);
//   - answer 2xx at once and do the work after, so slow work never turns into timeouts and retries.
//
//   WEBHOOK_SECRET=whsec_… PORT=3000 node server.js
//
// During a secret rotation the platform signs with the old and the new secret for 24 hours, so a
// receiver can switch to the new secret at any moment of that day.
import * as http from "node:http"
import { pathToFileURL } from "node:url"
import { Webhook } from "standardwebhooks"

/** Largest body accepted (the platform's default payload limit is 256 KiB). */
const MAX_BODY_BYTES = 1024 * 1024
/** How many event ids are remembered for dedupe (oldest forgotten first). */
const MAX_REMEMBERED_IDS = 100_000

/**
 * Starts the receiver. `onEvent(event)` runs once per event id, after the 2xx has been sent.
 * @param {{ secret: string, port?: number, host?: string, path?: string, onEvent?: (event: any) => void | Promise<void> }} options
 */
export async function startWebhookReceiver(options) {
  const webhook = new Webhook(options.secret)
  const path = options.path ?? "/webhooks"
  const onEvent = options.onEvent ?? ((event) => console.log(`${event.type} ${event.id}`))
  /** Event ids already handled, in arrival order (a Map keeps insertion order). */
  const seen = new Map()
  const stats = { accepted: 0, duplicates: 0, rejected: 0 }

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
        // Verifies webhook-id, webhook-timestamp and webhook-signature over the raw body.
        event = webhook.verify(body, request.headers)
      } catch {
        stats.rejected++
        response.writeHead(400, { "content-type": "text/plain" }).end("invalid signature")
        return
      }
      const id = request.headers["webhook-id"]
      if (seen.has(id)) {
        stats.duplicates++
        response.writeHead(204).end()
        return
      }
      seen.set(id, Date.now())
      if (seen.size > MAX_REMEMBERED_IDS) seen.delete(seen.keys().next().value)
      stats.accepted++
      response.writeHead(204).end()
      // After the answer: a failure here is ours to retry, not the platform's.
      Promise.resolve()
        .then(() => onEvent(event))
        .catch((error) => console.error(`handling ${id} failed:`, error))
    })
  })
  await new Promise((resolve) => server.listen(options.port ?? 3000, options.host ?? "127.0.0.1", resolve))
  const { port } = server.address()
  return {
    url: `http://${options.host ?? "127.0.0.1"}:${port}${path}`,
    stats,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const secret = process.env.WEBHOOK_SECRET
  if (!secret) {
    console.error("webhook-receiver: set WEBHOOK_SECRET to the subscription's secret (whsec_…)")
    process.exit(2)
  }
  const receiver = await startWebhookReceiver({ secret, port: Number(process.env.PORT ?? 3000) })
  console.log(`webhook-receiver: listening on ${receiver.url}`)
}
