import { Worker } from "node:worker_threads"
import {
  ERROR_BODY_PREFIX as ERROR_PREFIX,
  FAULT_KINDS as KINDS,
  HUGE_BYTES as HUGE,
  HUGE_TEXT_PATTERN,
  SLOW_BODY as SLOW
} from "./chaosReceiverThread.js"

/**
 * What a chaos receiver does with one request (docs/webhooks.md, Delivery semantics, says how each
 * must end as an attempt):
 * - `ok`: 200 `ok` at once;
 * - `error500`: 500 with a short body naming the event;
 * - `hang`: never answers; the sender's time-out ends the try (FAILED, code 0);
 * - `reset`: destroys the connection after reading the request (half of them with a TCP RST);
 * - `slow`: a 200 answer written one byte at a time, status line included, over 0.2–1.6 time-outs
 *   (finished in time it is a SUCCESS, otherwise the time-out ends it);
 * - `hugeText` / `hugeBinary`: 200 with a 10 MB body, ASCII or random bytes (NULs and invalid
 *   UTF-8 included); the sender keeps its first bytes and drops the connection.
 */
export const FAULT_KINDS = KINDS as ReadonlyArray<FaultKind>
export type FaultKind = "ok" | "error500" | "hang" | "reset" | "slow" | "hugeText" | "hugeBinary"
export const HUGE_BYTES: number = HUGE
export const SLOW_BODY: string = SLOW
export const ERROR_BODY_PREFIX: string = ERROR_PREFIX
/** The first `bytes` bytes of the ASCII 10 MB body. */
export const hugeTextPrefix = (bytes: number): string => Buffer.alloc(bytes, HUGE_TEXT_PATTERN).toString("utf8")

/** Relative weights of the kinds per request: about a third of the answers fail a try. */
export const DEFAULT_WEIGHTS: Record<FaultKind, number> = {
  ok: 55,
  error500: 10,
  hang: 7,
  reset: 10,
  slow: 8,
  hugeText: 5,
  hugeBinary: 5
}

/** Two requests of one (event, subscription) pair in flight at once. */
export interface Overlap {
  readonly pair: string
  readonly first: FaultKind
  readonly second: FaultKind
  readonly firstStartedMs: number
  readonly secondStartedMs: number
}

/** What the receivers saw, collected at the end. */
export interface ChaosResults {
  /**
   * Every request: `<webhook-id>|<receiver index>` (one (event, subscription) pair), its kind, when
   * it arrived and when it ended (ms since the epoch; 0 while open).
   */
  readonly requests: ReadonlyArray<readonly [string, FaultKind, number, number]>
  readonly overlaps: ReadonlyArray<Overlap>
  readonly injected: Record<FaultKind, number>
  /** Requests whose response or connection is still open. */
  readonly inFlight: number
}

export interface ChaosReceivers {
  /** One URL per receiver (each its own server and port). */
  readonly urls: ReadonlyArray<string>
  /** Requests so far and those still open. */
  readonly stats: () => Promise<{ readonly requests: number; readonly inFlight: number; readonly overlaps: number }>
  readonly results: () => Promise<ChaosResults>
  readonly close: () => Promise<void>
}

/**
 * Starts `count` chaos receivers on loopback ports, in a worker thread. Each request gets a kind
 * drawn by `weights`; the receivers track the (event, subscription) pairs in flight — from the
 * request's arrival until its response is finished or its connection is gone — and record any pair
 * that arrives again while its previous request is still open.
 */
export const startChaosReceivers = async (
  count: number,
  timeoutMs: number,
  weights: Record<FaultKind, number> = DEFAULT_WEIGHTS
): Promise<ChaosReceivers> => {
  const worker = new Worker(new URL("./chaosReceiverThread.js", import.meta.url), {
    workerData: { role: "chaos-receivers", count, timeoutMs, weights }
  })
  // One question at a time; a crash of the thread fails the question waiting.
  let failWaiting: ((error: unknown) => void) | undefined
  worker.on("error", (error) => failWaiting?.(error))
  const next = <A>(): Promise<A> =>
    new Promise((resolve, reject) => {
      failWaiting = reject
      worker.once("message", resolve)
    })
  const ask = <A>(message: string): Promise<A> => {
    const answer = next<A>()
    worker.postMessage(message)
    return answer
  }
  const { ports } = await next<{ ports: ReadonlyArray<number> }>()
  return {
    urls: ports.map((port, index) => `http://127.0.0.1:${port}/chaos/${index}`),
    stats: () => ask("stats"),
    results: () => ask("results"),
    close: async () => {
      await ask("close")
      await worker.terminate()
    }
  }
}
