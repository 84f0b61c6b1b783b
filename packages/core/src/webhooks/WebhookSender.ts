import { Context, Effect, Layer } from "effect"
import * as http from "node:http"
import * as https from "node:https"
import * as net from "node:net"
import { IssuingConfig } from "../platform/IssuingConfig.js"
import { signatureHeader } from "./Signing.js"
import { guardedLookup, isForbiddenAddress } from "./UrlGuard.js"

/** One signed POST to make. */
export interface OutgoingDelivery {
  readonly url: string
  /** `webhook-id`: the event id, the same on every retry, replay and resend. */
  readonly messageId: string
  readonly body: string
  /** HMAC keys that sign it, current first. */
  readonly keys: ReadonlyArray<Buffer>
}

/** How one try ended. */
export interface DeliveryOutcome {
  readonly status: "SUCCESS" | "FAILED"
  /** The receiver's HTTP status; 0 when there was no HTTP answer (refused, timed out, blocked). */
  readonly responseCode: number
  /** The receiver's body (truncated to the configured bound), or why there was no answer. */
  readonly responseBody: string
  /** A Retry-After given with 429 or 503, in milliseconds. */
  readonly retryAfterMs: number | undefined
  readonly attemptedAtMs: number
}

/** The HTTP side of delivery: signs and POSTs, never throws. */
export interface WebhookSenderService {
  readonly send: (delivery: OutgoingDelivery) => Effect.Effect<DeliveryOutcome>
  /** The same as a promise, for the worker's fiber-free hot path. */
  readonly sendAsync: (delivery: OutgoingDelivery) => Promise<DeliveryOutcome>
}

/** The webhook sender port (a test or host app may replace it). */
export class WebhookSender extends Context.Tag("@issuing/core/WebhookSender")<WebhookSender, WebhookSenderService>() {}

/** Bytes read from a response before the connection is dropped instead of drained. */
const MAX_DRAIN_BYTES = 1024 * 1024

/** Parses Retry-After: delay-seconds or an HTTP date. */
export const parseRetryAfterMs = (value: string | undefined, nowMs: number): number | undefined => {
  if (value === undefined) return undefined
  const text = value.trim()
  if (/^\d+$/.test(text)) return Number(text) * 1000
  const date = Date.parse(text)
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs)
}

export interface SenderOptions {
  readonly timeoutMs: number
  readonly allowPrivate: boolean
  readonly maxResponseBodyBytes: number
  /** Sockets kept per receiver host. */
  readonly maxSocketsPerHost?: number | undefined
}

/** A keep-alive sender over node:http(s); `close` destroys its pooled sockets. */
export const makeSender = (options: SenderOptions) => {
  const agentOptions = {
    keepAlive: true,
    keepAliveMsecs: 1000,
    maxSockets: options.maxSocketsPerHost ?? 128,
    maxFreeSockets: 64,
    scheduling: "lifo" as const,
    ...(options.allowPrivate ? {} : { lookup: guardedLookup })
  }
  // Parsed targets, so a hot receiver's URL is parsed once, not per delivery.
  const targets = new Map<string, { readonly https: boolean; readonly hostname: string; readonly port: number; readonly path: string } | undefined>()
  const parseTarget = (text: string) => {
    if (targets.has(text)) return targets.get(text)
    let target: { https: boolean; hostname: string; port: number; path: string } | undefined
    try {
      const url = new URL(text)
      const https = url.protocol === "https:"
      target = url.protocol === "http:" || https
        ? {
          https,
          hostname: url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname,
          port: url.port === "" ? (https ? 443 : 80) : Number(url.port),
          path: `${url.pathname}${url.search}`
        }
        : undefined
    } catch {
      target = undefined
    }
    if (targets.size >= 10_000) targets.clear()
    targets.set(text, target)
    return target
  }
  const httpAgent = new http.Agent(agentOptions)
  const httpsAgent = new https.Agent(agentOptions)

  const sendPromise = (delivery: OutgoingDelivery): Promise<DeliveryOutcome> =>
    new Promise((resolve) => {
      const startedMs = Date.now()
      let settled = false
      let timer: ReturnType<typeof setTimeout> | undefined
      const finish = (outcome: Omit<DeliveryOutcome, "attemptedAtMs">) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        resolve({ ...outcome, attemptedAtMs: startedMs })
      }
      const failed = (reason: string, code = 0) =>
        finish({ status: "FAILED", responseCode: code, responseBody: reason.slice(0, options.maxResponseBodyBytes), retryAfterMs: undefined })

      const target = parseTarget(delivery.url)
      if (target === undefined) return failed("invalid url")
      const host = target.hostname
      // node:net skips `lookup` for IP literals, so those are checked here.
      if (!options.allowPrivate && net.isIP(host) !== 0 && isForbiddenAddress(host)) {
        return failed(`refused: ${host} is a loopback, private, link-local or metadata address`)
      }
      const timestampSeconds = Math.floor(startedMs / 1000)
      const body = Buffer.from(delivery.body, "utf8")
      const isHttps = target.https
      const request = (isHttps ? https : http).request({
        host: target.hostname,
        port: target.port,
        path: target.path,
        servername: isHttps && net.isIP(target.hostname) === 0 ? target.hostname : undefined,
        method: "POST",
        agent: isHttps ? httpsAgent : httpAgent,
        headers: {
          "content-type": "application/json",
          "content-length": body.length,
          "user-agent": "issuing-webhooks/1",
          "webhook-id": delivery.messageId,
          "webhook-timestamp": String(timestampSeconds),
          "webhook-signature": signatureHeader(delivery.keys, delivery.messageId, timestampSeconds, delivery.body)
        }
      })
      timer = setTimeout(() => {
        request.destroy()
        failed(`timeout after ${options.timeoutMs} ms`)
      }, options.timeoutMs)
      request.on("error", (error: NodeJS.ErrnoException) => failed(error.code === "ESSRFBLOCKED" ? `refused: ${error.message}` : `${error.code ?? "error"}: ${error.message}`))
      request.on("response", (response) => {
        const chunks: Array<Buffer> = []
        let kept = 0
        let seen = 0
        response.on("data", (chunk: Buffer) => {
          seen += chunk.length
          if (kept < options.maxResponseBodyBytes) {
            const part = chunk.subarray(0, options.maxResponseBodyBytes - kept)
            chunks.push(part)
            kept += part.length
          }
          // A receiver streaming a huge body loses its connection rather than our time.
          if (seen > MAX_DRAIN_BYTES) response.destroy()
        })
        const done = () => {
          const code = response.statusCode ?? 0
          const text = Buffer.concat(chunks).toString("utf8").replace(/\uFFFD+$/, "")
          const retryAfterMs = code === 429 || code === 503
            ? parseRetryAfterMs(response.headers["retry-after"] as string | undefined, Date.now())
            : undefined
          finish({ status: code >= 200 && code < 300 ? "SUCCESS" : "FAILED", responseCode: code, responseBody: text, retryAfterMs })
        }
        response.on("end", done)
        response.on("close", done)
        response.on("error", done)
      })
      request.end(body)
    })

  return {
    send: (delivery: OutgoingDelivery): Effect.Effect<DeliveryOutcome> => Effect.promise(() => sendPromise(delivery)),
    sendAsync: sendPromise,
    close: () => {
      httpAgent.destroy()
      httpsAgent.destroy()
    }
  }
}

/** The sender built from the settings; its sockets close with the layer. */
export const WebhookSenderLive: Layer.Layer<WebhookSender, never, IssuingConfig> = Layer.scoped(
  WebhookSender,
  Effect.gen(function*() {
    const config = yield* IssuingConfig
    const sender = yield* Effect.acquireRelease(
      Effect.sync(() =>
        makeSender({
          timeoutMs: config.webhookTimeoutMs,
          allowPrivate: config.webhookAllowPrivateUrls,
          maxResponseBodyBytes: config.webhookMaxResponseBodyBytes,
          maxSocketsPerHost: Math.max(config.webhookConcurrency, 8)
        })
      ),
      (sender) => Effect.sync(sender.close)
    )
    return { send: sender.send, sendAsync: sender.sendAsync }
  })
)
