import { ConnectionError, errorFromResponse, type IssuingApiError, TimeoutError } from "./errors.js"

/** How the client reaches the platform; every field but `apiKey` has a default. */
export interface ClientOptions {
  /** The API key secret (`sk_sandbox_…` / `sk_live_…`). Keep it on the server. */
  readonly apiKey: string
  /** The platform's public base URL, mount path included; default `http://127.0.0.1:8080`. */
  readonly baseUrl?: string | undefined
  /** The default `X-Program-ID` for program-scoped calls; a call's `programId` overrides it. */
  readonly programId?: string | undefined
  /** Retries after the first try on 408, 429, 5xx, a dropped connection or a time-out; default 2. */
  readonly maxRetries?: number | undefined
  /** Time-out of each try, in milliseconds; default 60 000. */
  readonly timeoutMs?: number | undefined
  /** The first back-off delay, doubled per retry (with jitter); default 500 ms. */
  readonly initialRetryDelayMs?: number | undefined
  /** The largest back-off delay; default 8 000 ms. */
  readonly maxRetryDelayMs?: number | undefined
  /** A `Retry-After` longer than this fails at once instead of waiting; default 60 000 ms. */
  readonly maxRetryAfterMs?: number | undefined
  /** The fetch to use; default the global one. */
  readonly fetch?: typeof fetch | undefined
}

/** Per-call options, accepted by every method as its last argument. */
export interface RequestOptions {
  /** `X-Program-ID` of this call, instead of the client's. */
  readonly programId?: string | undefined
  /** A POST's Idempotency-Key (a UUID); by default one is generated per call and reused on its retries. */
  readonly idempotencyKey?: string | undefined
  readonly maxRetries?: number | undefined
  readonly timeoutMs?: number | undefined
  /** Aborts the call, its retries and back-off waits. */
  readonly signal?: AbortSignal | undefined
}

/** Query values as the client takes them; undefined ones are left out. */
export type Query = Readonly<Record<string, string | number | boolean | undefined>>

interface Call {
  readonly method: "GET" | "POST" | "PATCH" | "DELETE"
  readonly path: string
  readonly query?: Query | undefined
  readonly body?: unknown
}

const RETRY_STATUSES = new Set([408, 429])

/** Retry-After as delay-seconds or an HTTP date, in milliseconds; undefined when absent or unreadable. */
export const retryAfterMs = (value: string | null, nowMs = Date.now()): number | undefined => {
  if (value === null || value.trim() === "") return undefined
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs)
}

/** Sleeps `ms`, or rejects when `signal` aborts first. */
const sleep = (ms: number, signal: AbortSignal | undefined) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal!.reason)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort)
      resolve()
    }, ms)
    signal?.addEventListener("abort", onAbort, { once: true })
  })

/** One try's abort signal: the caller's, or the try's time-out, whichever comes first. */
const tryAbort = (timeoutMs: number, signal: AbortSignal | undefined) => {
  const controller = new AbortController()
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    controller.abort()
  }, timeoutMs)
  const onAbort = () => controller.abort(signal!.reason)
  if (signal?.aborted) controller.abort(signal.reason)
  else signal?.addEventListener("abort", onAbort, { once: true })
  return {
    signal: controller.signal,
    timedOut: () => timedOut,
    done: () => {
      clearTimeout(timer)
      signal?.removeEventListener("abort", onAbort)
    }
  }
}

const parseJson = (text: string): unknown => {
  if (text === "") return undefined
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** The HTTP side of the client: headers, Idempotency-Keys, time-outs, retries with back-off, typed errors. */
export class Transport {
  private readonly baseUrl: string
  private readonly fetch: typeof fetch

  constructor(readonly options: ClientOptions) {
    if (typeof options.apiKey !== "string" || options.apiKey === "") throw new TypeError("@issuing/client: apiKey is required")
    this.baseUrl = (options.baseUrl ?? "http://127.0.0.1:8080").replace(/\/+$/, "")
    this.fetch = options.fetch ?? globalThis.fetch.bind(globalThis)
  }

  /** The back-off before retry number `retry` (0-based): Retry-After when the answer gave one, else exponential with jitter. */
  private delayMs(retry: number, response: Response | undefined): number {
    const asked = response === undefined ? undefined : retryAfterMs(response.headers.get("retry-after"))
    if (asked !== undefined) return asked
    const initial = this.options.initialRetryDelayMs ?? 500
    const ceiling = Math.min(this.options.maxRetryDelayMs ?? 8000, initial * 2 ** retry)
    return ceiling * (0.5 + Math.random() / 2)
  }

  /** Sends one call, retrying what is safe to retry, and resolves with the parsed JSON body. */
  async request<A>(call: Call, options: RequestOptions = {}): Promise<A> {
    const url = new URL(`${this.baseUrl}${call.path}`)
    for (const [name, value] of Object.entries(call.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value))
    }
    const headers: Record<string, string> = { authorization: `Bearer ${this.options.apiKey}`, accept: "application/json" }
    const programId = options.programId ?? this.options.programId
    if (programId !== undefined) headers["x-program-id"] = programId
    // One key per call, the same on every retry: the platform then does the work at most once.
    if (call.method === "POST") headers["idempotency-key"] = options.idempotencyKey ?? globalThis.crypto.randomUUID()
    let body: string | undefined
    if (call.body !== undefined) {
      body = JSON.stringify(call.body)
      headers["content-type"] = "application/json"
    }
    const maxRetries = Math.max(0, options.maxRetries ?? this.options.maxRetries ?? 2)
    const timeoutMs = options.timeoutMs ?? this.options.timeoutMs ?? 60_000
    const maxRetryAfterMs = this.options.maxRetryAfterMs ?? 60_000

    for (let retry = 0; ; retry++) {
      const abort = tryAbort(timeoutMs, options.signal)
      let response: Response
      let text: string
      try {
        response = await this.fetch(url, { method: call.method, headers, body, signal: abort.signal })
        text = await response.text()
      } catch (cause) {
        const timedOut = abort.timedOut()
        abort.done()
        if (options.signal?.aborted) throw options.signal.reason
        if (retry < maxRetries) {
          await sleep(this.delayMs(retry, undefined), options.signal)
          continue
        }
        throw timedOut
          ? new TimeoutError(`${call.method} ${call.path}: no answer within ${timeoutMs} ms (${retry + 1} tries)`, { cause })
          : new ConnectionError(`${call.method} ${call.path}: connection failed (${retry + 1} tries)`, { cause })
      }
      abort.done()
      const parsed = parseJson(text)
      if (response.ok) return parsed as A
      const error: IssuingApiError = errorFromResponse(response.status, parsed, response.headers)
      if (retry < maxRetries && (RETRY_STATUSES.has(response.status) || response.status >= 500)) {
        const delay = this.delayMs(retry, response)
        if (delay <= maxRetryAfterMs) {
          await sleep(delay, options.signal)
          continue
        }
      }
      throw error
    }
  }
}
