import { Context, Effect, Layer } from "effect"
import * as http from "node:http"
import * as https from "node:https"
import * as net from "node:net"
import { StringDecoder } from "node:string_decoder"
import { IssuingConfig } from "../platform/IssuingConfig.js"
import { signatureHeader } from "./Signing.js"
import { isForbiddenAddress, makeGuardedLookup } from "./UrlGuard.js"

/** One signed POST to make. */
export interface OutgoingDelivery {
  readonly url: string
  /** `webhook-id`: the event id, the same on every retry, replay and resend. */
  readonly messageId: string
  readonly body: string
  /** HMAC keys that sign it, current first. */
  readonly keys: ReadonlyArray<Buffer>
  /**
   * Aborted when the try must end at once (the worker's claim on the delivery could not be
   * renewed): the request is destroyed and the try fails with its reason.
   */
  readonly signal?: AbortSignal | undefined
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
  /** Keep bodies of loopback or private peers too (default false: PRIVATE_BODY_NOT_STORED). */
  readonly storePrivateBodies?: boolean | undefined
  /** Sockets kept per receiver host. */
  readonly maxSocketsPerHost?: number | undefined
}

/** Where a delivery is POSTed: a parsed http(s) URL. */
interface Target {
  readonly https: boolean
  readonly hostname: string
  readonly port: number
  readonly path: string
}

/** Receiver URLs whose parsed target is kept; the cache is emptied when it reaches this bound. */
const MAX_CACHED_TARGETS = 10_000

/** The target of an http(s) URL, or undefined for anything else. */
const parseTarget = (text: string): Target | undefined => {
  try {
    const url = new URL(text)
    const https = url.protocol === "https:"
    if (url.protocol !== "http:" && !https) return undefined
    return {
      https,
      hostname: url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname,
      port: url.port === "" ? (https ? 443 : 80) : Number(url.port),
      path: `${url.pathname}${url.search}`
    }
  } catch {
    return undefined
  }
}

/** A bounded cache of parsed targets, so a hot receiver's URL is parsed once, not per delivery. */
const cachedTargets = () => {
  const targets = new Map<string, Target | undefined>()
  return (text: string): Target | undefined => {
    if (targets.has(text)) return targets.get(text)
    const target = parseTarget(text)
    if (targets.size >= MAX_CACHED_TARGETS) targets.clear()
    targets.set(text, target)
    return target
  }
}

type Settle = (outcome: Omit<DeliveryOutcome, "attemptedAtMs">) => void

/**
 * The text kept of a response body's first bytes (docs/webhooks.md, Delivery semantics): UTF-8 of
 * at most `maxBytes` bytes without NUL. Bytes that are not UTF-8 decode as U+FFFD, three bytes
 * each, so a binary body would otherwise be stored at up to three times the bound; NUL becomes
 * U+FFFD too, since PostgreSQL text refuses it (a receiver answering NULs made the whole batch's
 * recording fail, losing its attempts). A character cut at the bound is dropped (a StringDecoder
 * holds back an incomplete last sequence).
 */
export const storedBodyText = (bytes: Buffer, maxBytes: number): string => {
  const text = new StringDecoder("utf8").write(bytes).replaceAll("\u0000", "\uFFFD")
  return Buffer.byteLength(text) <= maxBytes ? text : new StringDecoder("utf8").write(Buffer.from(text, "utf8").subarray(0, maxBytes))
}

/**
 * What `response_body` holds instead of the body of a receiver at a loopback or private address:
 * with private targets allowed (sandbox), a stored body would let anyone who reads attempts read
 * internal services through the platform (docs/webhooks.md#ssrf-guard). Only the status is kept.
 */
export const PRIVATE_BODY_NOT_STORED = "(response body not stored: the receiver is at a loopback or private address)"

/**
 * True when the connection's peer is a loopback, private, link-local or other non-public address
 * (an unknown peer counts as one): its answer's body is never stored.
 */
const privatePeer = (response: http.IncomingMessage): boolean => {
  const peer = response.socket?.remoteAddress
  return peer === undefined || isForbiddenAddress(peer, false)
}

/**
 * Reads a receiver's answer: its status, up to `maxBodyBytes` of its body (a body streaming past
 * MAX_DRAIN_BYTES loses its connection rather than our time; a private peer's body is not kept:
 * PRIVATE_BODY_NOT_STORED), and Retry-After on 429/503.
 */
const readResponse = (response: http.IncomingMessage, options: SenderOptions, settle: Settle): void => {
  const maxBodyBytes = options.maxResponseBodyBytes
  const keepBody = options.storePrivateBodies === true || !privatePeer(response)
  const chunks: Array<Buffer> = []
  let kept = 0
  let seen = 0
  response.on("data", (chunk: Buffer) => {
    seen += chunk.length
    if (keepBody && kept < maxBodyBytes) {
      const part = chunk.subarray(0, maxBodyBytes - kept)
      chunks.push(part)
      kept += part.length
    }
    if (seen > MAX_DRAIN_BYTES) response.destroy()
  })
  const done = () => {
    const code = response.statusCode ?? 0
    const text = keepBody ? storedBodyText(Buffer.concat(chunks), maxBodyBytes) : PRIVATE_BODY_NOT_STORED
    const retryAfterMs =
      code === 429 || code === 503 ? parseRetryAfterMs(response.headers["retry-after"] as string | undefined, Date.now()) : undefined
    settle({ status: code >= 200 && code < 300 ? "SUCCESS" : "FAILED", responseCode: code, responseBody: text, retryAfterMs })
  }
  response.on("end", done)
  response.on("close", done)
  response.on("error", done)
}

/** What every POST of one sender shares. */
interface SenderContext {
  readonly options: SenderOptions
  readonly targetOf: (url: string) => Target | undefined
  readonly httpAgent: http.Agent
  readonly httpsAgent: https.Agent
}

/** One signed POST; resolves with its outcome, never rejects. */
const post = (context: SenderContext, delivery: OutgoingDelivery): Promise<DeliveryOutcome> =>
  new Promise((resolve) => {
    const { options } = context
    const startedMs = Date.now()
    let settled = false
    let timer: ReturnType<typeof setTimeout> | undefined
    let onAbort: (() => void) | undefined
    const settle: Settle = (outcome) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      if (onAbort !== undefined) delivery.signal?.removeEventListener("abort", onAbort)
      resolve({ ...outcome, attemptedAtMs: startedMs })
    }
    const failed = (reason: string) =>
      settle({ status: "FAILED", responseCode: 0, responseBody: reason.slice(0, options.maxResponseBodyBytes), retryAfterMs: undefined })

    const abandoned = () => `abandoned: ${String(delivery.signal?.reason ?? "aborted")}`
    if (delivery.signal?.aborted === true) return failed(abandoned())
    const target = context.targetOf(delivery.url)
    if (target === undefined) return failed("invalid url")
    // node:net skips `lookup` for IP literals, so those are checked here.
    // Every environment refuses some addresses (metadata services…), so the check always runs.
    if (net.isIP(target.hostname) !== 0 && isForbiddenAddress(target.hostname, options.allowPrivate)) {
      return failed(`refused: ${target.hostname} is a loopback, private, link-local or metadata address`)
    }
    const timestampSeconds = Math.floor(startedMs / 1000)
    const body = Buffer.from(delivery.body, "utf8")
    const request = (target.https ? https : http).request({
      host: target.hostname,
      port: target.port,
      path: target.path,
      servername: target.https && net.isIP(target.hostname) === 0 ? target.hostname : undefined,
      method: "POST",
      agent: target.https ? context.httpsAgent : context.httpAgent,
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
    if (delivery.signal !== undefined) {
      onAbort = () => {
        request.destroy()
        failed(abandoned())
      }
      delivery.signal.addEventListener("abort", onAbort, { once: true })
    }
    request.on("error", (error: NodeJS.ErrnoException) =>
      failed(error.code === "ESSRFBLOCKED" ? `refused: ${error.message}` : `${error.code ?? "error"}: ${error.message}`)
    )
    request.on("response", (response) => readResponse(response, options, settle))
    request.end(body)
  })

/** A keep-alive sender over node:http(s); `close` destroys its pooled sockets. */
export const makeSender = (options: SenderOptions) => {
  const agentOptions = {
    keepAlive: true,
    keepAliveMsecs: 1000,
    maxSockets: options.maxSocketsPerHost ?? 128,
    maxFreeSockets: 64,
    scheduling: "lifo" as const,
    lookup: makeGuardedLookup(options.allowPrivate)
  }
  const context: SenderContext = {
    options,
    targetOf: cachedTargets(),
    httpAgent: new http.Agent(agentOptions),
    httpsAgent: new https.Agent(agentOptions)
  }
  const sendAsync = (delivery: OutgoingDelivery) => post(context, delivery)
  return {
    send: (delivery: OutgoingDelivery): Effect.Effect<DeliveryOutcome> => Effect.promise(() => sendAsync(delivery)),
    sendAsync,
    close: () => {
      context.httpAgent.destroy()
      context.httpsAgent.destroy()
    }
  }
}

/** The sender built from the settings; its sockets close with the layer. */
export const WebhookSenderLive: Layer.Layer<WebhookSender, never, IssuingConfig> = Layer.scoped(
  WebhookSender,
  Effect.gen(function* () {
    const config = yield* IssuingConfig
    const sender = yield* Effect.acquireRelease(
      Effect.sync(() =>
        makeSender({
          timeoutMs: config.webhookTimeoutMs,
          allowPrivate: config.webhookAllowPrivateUrls,
          maxResponseBodyBytes: config.webhookMaxResponseBodyBytes,
          storePrivateBodies: config.webhookStorePrivateResponseBodies,
          maxSocketsPerHost: Math.max(config.webhookConcurrency, 8)
        })
      ),
      (sender) => Effect.sync(sender.close)
    )
    return { send: sender.send, sendAsync: sender.sendAsync }
  })
)
