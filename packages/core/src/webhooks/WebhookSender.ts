import { Context, Effect, Layer } from "effect"
import * as net from "node:net"
import { StringDecoder } from "node:string_decoder"
import { buildConnector, type Dispatcher, Pool } from "undici"
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
  /** `http://host:port`: the connection pool it is sent through. */
  readonly origin: string
  readonly hostname: string
  readonly path: string
}

/** Receiver URLs whose parsed target is kept; the cache is emptied when it reaches this bound. */
const MAX_CACHED_TARGETS = 10_000

/** Receiver origins whose connection pool is kept; the oldest pool is closed (gracefully) beyond it. */
const MAX_POOLS = 10_000

/** The target of an http(s) URL, or undefined for anything else. */
const parseTarget = (text: string): Target | undefined => {
  try {
    const url = new URL(text)
    if (url.protocol !== "http:" && url.protocol !== "https:") return undefined
    return {
      origin: url.origin,
      hostname: url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname,
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
 * The keep-alive connections to one receiver origin (an undici Pool), and whether any of them
 * reached a loopback, private, link-local or other non-public peer (an unknown peer counts as
 * one): from then on no answer through this pool has its body stored. The flag is set by the
 * connector as the connection opens, before any request is written on it, so an answer from such
 * a peer always finds it set; it stays set for the pool's life (a host that resolved to a public
 * address first and a private one later is judged by the worse).
 */
interface OriginPool {
  readonly pool: Pool
  privatePeer: boolean
}

/** What every POST of one sender shares. */
interface SenderContext {
  readonly options: SenderOptions
  readonly targetOf: (url: string) => Target | undefined
  readonly poolOf: (origin: string) => OriginPool
}

/** Undici's answer headers hold a repeated header as an array: its first value. */
const headerValue = (value: string | ReadonlyArray<string> | undefined): string | undefined =>
  typeof value === "string" ? value : value?.[0]

/**
 * Why a request failed, as `response_body` says it: the system's error code (ECONNREFUSED…) and
 * message. Undici's own codes for the same events are named as node:http named them, so a reason
 * reads the same whatever client sent the try: a connection closed before the whole answer came
 * is ECONNRESET (node:http's "socket hang up"), a connection not made in time is the try's timeout.
 */
const errorText = (error: Error & { readonly code?: string }, timeoutMs: number): string => {
  switch (error.code) {
    case "ESSRFBLOCKED":
      return `refused: ${error.message}`
    case "UND_ERR_SOCKET":
      return `ECONNRESET: ${error.message}`
    case "UND_ERR_CONNECT_TIMEOUT":
      return `timeout after ${timeoutMs} ms`
    default:
      return `${error.code ?? "error"}: ${error.message}`
  }
}

/**
 * One signed POST; resolves with its outcome, never rejects. Sent through undici's dispatcher
 * interface (one handler object per request, no stream or promise per response part): less than
 * half of node:http's client CPU per request (docs/decisions.md#webhook-deliveries-per-second).
 * The receiver's answer: its status, up to `maxResponseBodyBytes` of its body (a body streaming
 * past MAX_DRAIN_BYTES loses its connection rather than our time; a private peer's body is not
 * kept: PRIVATE_BODY_NOT_STORED), and Retry-After on 429/503.
 */
const post = (context: SenderContext, delivery: OutgoingDelivery): Promise<DeliveryOutcome> =>
  new Promise((resolve) => {
    const { options } = context
    const maxBodyBytes = options.maxResponseBodyBytes
    const startedMs = Date.now()
    let settled = false
    let timer: ReturnType<typeof setTimeout> | undefined
    let onAbort: (() => void) | undefined
    /** Aborts the request once undici has started it; until then, `cancelled` makes its start abort it. */
    let controller: Dispatcher.DispatchController | undefined
    let cancelled: Error | undefined
    const cancel = (reason: string) => {
      cancelled = new Error(reason)
      controller?.abort(cancelled)
    }
    const settle: Settle = (outcome) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      if (onAbort !== undefined) delivery.signal?.removeEventListener("abort", onAbort)
      resolve({ ...outcome, attemptedAtMs: startedMs })
    }
    const failed = (reason: string) =>
      settle({ status: "FAILED", responseCode: 0, responseBody: reason.slice(0, maxBodyBytes), retryAfterMs: undefined })

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
    const origin = context.poolOf(target.origin)
    let code = 0
    let keepBody = false
    let retryAfter: string | undefined
    const chunks: Array<Buffer> = []
    let kept = 0
    let seen = 0
    const answered = () => {
      const text = keepBody ? storedBodyText(Buffer.concat(chunks), maxBodyBytes) : PRIVATE_BODY_NOT_STORED
      const retryAfterMs = code === 429 || code === 503 ? parseRetryAfterMs(retryAfter, Date.now()) : undefined
      settle({ status: code >= 200 && code < 300 ? "SUCCESS" : "FAILED", responseCode: code, responseBody: text, retryAfterMs })
    }
    timer = setTimeout(() => {
      failed(`timeout after ${options.timeoutMs} ms`)
      cancel("timeout")
    }, options.timeoutMs)
    if (delivery.signal !== undefined) {
      onAbort = () => {
        failed(abandoned())
        cancel("abandoned")
      }
      delivery.signal.addEventListener("abort", onAbort, { once: true })
    }
    try {
      origin.pool.dispatch(
        {
          origin: target.origin,
          path: target.path,
          method: "POST",
          headers: {
            "content-type": "application/json",
            "user-agent": "issuing-webhooks/1",
            "webhook-id": delivery.messageId,
            "webhook-timestamp": String(timestampSeconds),
            "webhook-signature": signatureHeader(delivery.keys, delivery.messageId, timestampSeconds, delivery.body)
          },
          body: delivery.body
        },
        {
          onRequestStart: (started) => {
            controller = started
            if (cancelled !== undefined) started.abort(cancelled)
          },
          onResponseStart: (_, statusCode, headers) => {
            // 1xx answers come before the real one.
            if (statusCode < 200) return
            code = statusCode
            keepBody = options.storePrivateBodies === true || !origin.privatePeer
            retryAfter = headerValue(headers["retry-after"])
          },
          onResponseData: (running, chunk) => {
            seen += chunk.length
            if (keepBody && kept < maxBodyBytes) {
              const part = chunk.subarray(0, maxBodyBytes - kept)
              chunks.push(part)
              kept += part.length
            }
            if (seen > MAX_DRAIN_BYTES) {
              answered()
              running.abort(new Error("response body too long"))
            }
          },
          onResponseEnd: answered,
          // An answer cut off after its status still counts by its status (as a body dropped past MAX_DRAIN_BYTES).
          onResponseError: (_, error) => (code !== 0 ? answered() : failed(errorText(error, options.timeoutMs)))
        }
      )
    } catch (error) {
      failed(errorText(error as Error, options.timeoutMs))
    }
  })

/**
 * The connector of one origin's pool: connections refused at `lookup` when they resolve to a
 * forbidden address, and the pool marked as reaching a private peer (its answers' bodies are not
 * stored) before the connection carries a request.
 */
const guardedConnector = (options: SenderOptions, origin: () => OriginPool): buildConnector.connector => {
  const connect = buildConnector({ lookup: makeGuardedLookup(options.allowPrivate), timeout: options.timeoutMs })
  return (connectOptions, callback) =>
    connect(connectOptions, (error, socket) => {
      if (error !== null && error !== undefined) return callback(error, null)
      const peer = socket?.remoteAddress
      if (peer === undefined || isForbiddenAddress(peer, false)) origin().privatePeer = true
      callback(null, socket!)
    })
}

/** A bounded map of receiver origins to their pools; the oldest is closed (gracefully) to make room. */
const originPools = (options: SenderOptions) => {
  const pools = new Map<string, OriginPool>()
  const poolOf = (origin: string): OriginPool => {
    const existing = pools.get(origin)
    if (existing !== undefined) return existing
    if (pools.size >= MAX_POOLS) {
      const [oldest, entry] = pools.entries().next().value!
      pools.delete(oldest)
      void entry.pool.close().catch(() => undefined)
    }
    const entry: OriginPool = {
      pool: new Pool(origin, {
        connections: options.maxSocketsPerHost ?? 128,
        connect: guardedConnector(options, () => entry),
        // The try's own timer bounds it as a whole (connect, answer, body): none per phase.
        headersTimeout: 0,
        bodyTimeout: 0
      }),
      privatePeer: false
    }
    pools.set(origin, entry)
    return entry
  }
  const close = () => {
    for (const { pool } of pools.values()) void pool.destroy().catch(() => undefined)
    pools.clear()
  }
  return { poolOf, close }
}

/** A keep-alive sender over undici connection pools, one per receiver origin; `close` destroys their sockets. */
export const makeSender = (options: SenderOptions) => {
  const pools = originPools(options)
  const context: SenderContext = { options, targetOf: cachedTargets(), poolOf: pools.poolOf }
  const sendAsync = (delivery: OutgoingDelivery) => post(context, delivery)
  return {
    send: (delivery: OutgoingDelivery): Effect.Effect<DeliveryOutcome> => Effect.promise(() => sendAsync(delivery)),
    sendAsync,
    close: pools.close
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
