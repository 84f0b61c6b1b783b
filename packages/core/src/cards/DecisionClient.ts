import * as http from "node:http"
import * as https from "node:https"
import * as net from "node:net"
import { signatureHeader } from "../webhooks/Signing.js"
import { isForbiddenAddress, makeGuardedLookup } from "../webhooks/UrlGuard.js"
import { AUTHORIZATION_DECISION_LIMITS } from "./AuthorizationEndpointRecords.js"
import { type AskResult, answerOfResponse } from "./DecisionRules.js"

/** How long a kept-alive connection to a receiver may idle before this side closes it. */
const IDLE_SOCKET_TIMEOUT_MS = 4000

/** One signed decision request to POST. */
export interface DecisionPost {
  readonly url: string
  /** `webhook-id`: a new id per request. */
  readonly messageId: string
  readonly body: string
  /** HMAC keys that sign it, current first. */
  readonly keys: ReadonlyArray<Buffer>
  readonly timeoutMs: number
}

/**
 * POSTs decision requests over keep-alive agents (a decision on a warm connection costs the
 * receiver's time and one round trip, no TCP or TLS handshake), through the webhook SSRF guard at
 * connection time: the `lookup` hook for host names, a check here for IP literals (node:net skips
 * `lookup` for those). `post` never rejects: every way it can end is an `AskResult`.
 */
export const makeDecisionClient = (options: { readonly allowPrivate: boolean }) => {
  const agentOptions = {
    keepAlive: true,
    keepAliveMsecs: 1000,
    maxSockets: 256,
    maxFreeSockets: 64,
    scheduling: "lifo" as const,
    // Idle sockets are closed after 4 s, before a receiver's own keep-alive timeout (Node's default
    // is 5 s) closes them: a request written on a socket the receiver is closing at that moment
    // fails (ECONNRESET), and here that failure would decide an authorization.
    timeout: IDLE_SOCKET_TIMEOUT_MS,
    lookup: makeGuardedLookup(options.allowPrivate)
  }
  const httpAgent = new http.Agent(agentOptions)
  const httpsAgent = new https.Agent(agentOptions)

  const post = (request: DecisionPost, signal?: AbortSignal): Promise<AskResult> =>
    new Promise((resolve) => {
      let settled = false
      let timer: ReturnType<typeof setTimeout> | undefined
      const settle = (result: AskResult) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        resolve(result)
      }
      let url: URL
      try {
        url = new URL(request.url)
      } catch {
        return settle({ _tag: "Failed", reason: "invalid url" })
      }
      const secure = url.protocol === "https:"
      const hostname = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname
      if (net.isIP(hostname) !== 0 && isForbiddenAddress(hostname, options.allowPrivate)) {
        return settle({ _tag: "Failed", reason: "refused: a loopback, private, link-local or metadata address" })
      }
      const timestampSeconds = Math.floor(Date.now() / 1000)
      const body = Buffer.from(request.body, "utf8")
      const outgoing = (secure ? https : http).request({
        host: hostname,
        port: url.port === "" ? (secure ? 443 : 80) : Number(url.port),
        path: `${url.pathname}${url.search}`,
        servername: secure && net.isIP(hostname) === 0 ? hostname : undefined,
        method: "POST",
        agent: secure ? httpsAgent : httpAgent,
        headers: {
          "content-type": "application/json",
          "content-length": body.length,
          "user-agent": "issuing-authorizations/1",
          "webhook-id": request.messageId,
          "webhook-timestamp": String(timestampSeconds),
          "webhook-signature": signatureHeader(request.keys, request.messageId, timestampSeconds, request.body)
        }
      })
      // The whole exchange — connection, request, the answer's last byte — within the timeout.
      timer = setTimeout(() => {
        settle({ _tag: "TimedOut" })
        outgoing.destroy()
      }, request.timeoutMs)
      signal?.addEventListener("abort", () => {
        settle({ _tag: "Failed", reason: "interrupted" })
        outgoing.destroy()
      })
      outgoing.on("error", (error: NodeJS.ErrnoException) => settle({ _tag: "Failed", reason: error.code ?? error.message }))
      outgoing.on("response", (response) => {
        const chunks: Array<Buffer> = []
        let size = 0
        response.on("data", (chunk: Buffer) => {
          size += chunk.length
          if (size > AUTHORIZATION_DECISION_LIMITS.maxAnswerBytes) {
            settle({ _tag: "Failed", reason: "the answer is too large" })
            response.destroy()
            return
          }
          chunks.push(chunk)
        })
        response.on("end", () => settle(answerOfResponse(response.statusCode ?? 0, Buffer.concat(chunks).toString("utf8"))))
        // Closed before its end: the connection dropped mid-answer.
        response.on("close", () => settle({ _tag: "Failed", reason: "the connection closed before the answer ended" }))
        response.on("error", () => settle({ _tag: "Failed", reason: "the connection failed during the answer" }))
      })
      outgoing.end(body)
    })

  return {
    post,
    /** Destroys the pooled sockets. */
    close: () => {
      httpAgent.destroy()
      httpsAgent.destroy()
    }
  }
}
