import * as http from "node:http"
import type { AddressInfo } from "node:net"

/** One request a receiver got. */
export interface Received {
  readonly id: string
  readonly headers: Record<string, string>
  readonly body: string
  readonly receivedAtMs: number
  /** The sender's TCP port (tells apart the processes that sent). */
  readonly remotePort: number
  /** The request's path (tells apart subscriptions on one receiver). */
  readonly path: string
}

/** What the receiver answers: a status, optional body and headers, and an optional delay. */
export interface Reply {
  readonly status: number
  readonly body?: string
  readonly headers?: Record<string, string>
  readonly delayMs?: number
}

/** A real local webhook receiver (node:http on 127.0.0.1) that records every request. */
export interface Receiver {
  readonly url: string
  readonly port: number
  readonly received: Array<Received>
  /** Decides each reply; the default answers 200. */
  reply: (request: Received) => Reply
  /** Requests being handled right now, per webhook-id, and the most ever seen at once. */
  readonly maxConcurrentPerId: () => number
  /** Waits until `predicate` holds over the received requests. */
  readonly waitFor: (predicate: (received: ReadonlyArray<Received>) => boolean, timeoutMs?: number) => Promise<void>
  readonly close: () => Promise<void>
}

/** Starts a receiver on a free loopback port (or the given one). */
export const startReceiver = async (port = 0): Promise<Receiver> => {
  const received: Array<Received> = []
  const active = new Map<string, number>()
  let maxConcurrent = 0
  const receiver: Receiver = {
    url: "",
    port: 0,
    received,
    reply: () => ({ status: 200, body: "ok" }),
    maxConcurrentPerId: () => maxConcurrent,
    waitFor: async (predicate, timeoutMs = 20_000) => {
      const deadline = Date.now() + timeoutMs
      while (!predicate(received)) {
        if (Date.now() > deadline) throw new Error(`Receiver timed out; got ${received.length} requests`)
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
    },
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
  const server = http.createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk) => chunks.push(chunk))
    request.on("end", () => {
      const headers = Object.fromEntries(
        Object.entries(request.headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(",") : (value ?? "")])
      )
      const entry: Received = {
        id: headers["webhook-id"] ?? "",
        headers,
        body: Buffer.concat(chunks).toString("utf8"),
        receivedAtMs: Date.now(),
        remotePort: request.socket.remotePort ?? 0,
        path: request.url ?? ""
      }
      received.push(entry)
      const now = (active.get(entry.id) ?? 0) + 1
      active.set(entry.id, now)
      maxConcurrent = Math.max(maxConcurrent, now)
      const reply = receiver.reply(entry)
      const send = () => {
        active.set(entry.id, (active.get(entry.id) ?? 1) - 1)
        response.writeHead(reply.status, { "content-type": "text/plain", ...reply.headers })
        response.end(reply.body ?? "")
      }
      if (reply.delayMs) setTimeout(send, reply.delayMs)
      else send()
    })
  })
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve))
  const actual = (server.address() as AddressInfo).port
  Object.assign(receiver, { url: `http://127.0.0.1:${actual}/hooks`, port: actual })
  return receiver
}

/** A receiver that holds every request open until `release()`, then answers `status` with `body`. */
export interface HeldReceiver {
  readonly url: string
  /** Resolves when the first request has arrived (and is being held). */
  readonly arrival: Promise<void>
  /** Requests received so far. */
  readonly calls: () => number
  /** True while a held request's response is still open. */
  readonly heldOpen: () => boolean
  readonly release: () => void
  readonly close: () => Promise<void>
}

/** Starts a held receiver on a free loopback port; `path` is appended to its URL. */
export const startHeldReceiver = async (status: number, body: string, path = "/held"): Promise<HeldReceiver> => {
  let arrived!: () => void
  const arrival = new Promise<void>((resolve) => (arrived = resolve))
  let release!: () => void
  const released = new Promise<void>((resolve) => (release = resolve))
  let calls = 0
  let open = 0
  const server = http.createServer((request, response) => {
    request.resume()
    calls += 1
    open += 1
    response.on("close", () => (open -= 1))
    arrived()
    void released.then(() => response.writeHead(status).end(body))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`,
    arrival,
    calls: () => calls,
    heldOpen: () => open > 0,
    release,
    close: async () => {
      release()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
