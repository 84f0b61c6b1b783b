// A real-time decision receiver for tests (test/cards/authorization-decisions.test.ts), run as its own
// process: `node test/support/decision-receiver.mjs` prints its port, then answers each POST by its
// path and records it. Every request's signature is verified with the stock `standardwebhooks`
// package against the secrets the test gave (PUT /_secrets); GET /_log returns what was received.
//
//   /approve            {"approved": true}
//   /decline            {"approved": false, "decline_reason": "fraud_suspected"}
//   /amount/<n>         {"approved": true, "amount": n}
//   /late/<ms>          {"approved": true} after ms milliseconds
//   /garbage            a body that is not JSON
//   /ill-typed          {"approved": "yes"}
//   /status/<code>      that status with {"approved": true}
//   /drop               the connection destroyed without an answer
//   /big                an approval padded past the 64 KiB an answer may have
import * as http from "node:http"
import { Webhook } from "standardwebhooks"

let secrets = []
const log = []

const readBody = (request) =>
  new Promise((resolve) => {
    const chunks = []
    request.on("data", (chunk) => chunks.push(chunk))
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
  })

const verified = (body, headers) =>
  secrets.some((secret) => {
    try {
      new Webhook(secret).verify(body, headers)
      return true
    } catch {
      return false
    }
  })

const json = (response, status, value) => {
  const text = JSON.stringify(value)
  response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
  response.end(text)
}

const server = http.createServer({ keepAliveTimeout: 65_000 }, async (request, response) => {
  const body = await readBody(request)
  const path = new URL(request.url, "http://receiver").pathname
  if (path === "/_secrets" && request.method === "PUT") {
    secrets = JSON.parse(body)
    return json(response, 200, { ok: true })
  }
  if (path === "/_log") return json(response, 200, log)
  const headers = {
    "webhook-id": request.headers["webhook-id"],
    "webhook-timestamp": request.headers["webhook-timestamp"],
    "webhook-signature": request.headers["webhook-signature"]
  }
  let parsed = null
  try {
    parsed = JSON.parse(body)
  } catch {}
  log.push({
    path,
    verified: verified(body, headers),
    signatures: String(headers["webhook-signature"]).split(" ").length,
    body: parsed,
    // Which connection it came on: the same port twice is one kept-alive connection.
    port: request.socket.remotePort
  })
  const [, mode, argument] = path.split("/")
  switch (mode) {
    case "approve":
      return json(response, 200, { approved: true, metadata: { checked_by: "receiver" } })
    case "decline":
      return json(response, 200, { approved: false, decline_reason: "fraud_suspected" })
    case "amount":
      return json(response, 200, { approved: true, amount: Number(argument) })
    case "late":
      return setTimeout(() => {
        if (!response.destroyed) json(response, 200, { approved: true })
      }, Number(argument))
    case "garbage":
      response.writeHead(200, { "content-type": "application/json" })
      return response.end("{approved: true")
    case "ill-typed":
      return json(response, 200, { approved: "yes" })
    case "status":
      return json(response, Number(argument), { approved: true })
    case "drop":
      return request.socket.destroy()
    case "big":
      return json(response, 200, { approved: true, metadata: { padding: "x".repeat(70 * 1024) } })
    default:
      return json(response, 404, { error: "unknown mode" })
  }
})

server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`${server.address().port}\n`)
})
process.on("SIGTERM", () => process.exit(0))
