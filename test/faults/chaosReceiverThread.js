// The chaos receivers of test/faults/chaos.test.ts, run in a worker thread of their own (plain
// JavaScript: worker threads load no TypeScript), so that the delivery worker's event loop — which
// blocks on every SQLite commit — does not delay their answers or byte-by-byte writes, and their
// 10 MB writes do not delay it. The test process talks to them through chaosReceiver.ts.
import * as crypto from "node:crypto"
import * as http from "node:http"
import { isMainThread, parentPort, workerData } from "node:worker_threads"

/** The kinds of answer, in the order weights are given (chaosReceiver.ts documents each). */
export const FAULT_KINDS = ["ok", "error500", "hang", "reset", "slow", "hugeText", "hugeBinary"]
export const HUGE_BYTES = 10 * 1024 * 1024
export const HUGE_TEXT_PATTERN = "chaos-huge-body-0123456789abcdefghijklmnopqrstuvwxyz\n"
export const SLOW_BODY = "slow but complete"
export const ERROR_BODY_PREFIX = "chaos 500 for "

const pick = (weights) => {
  const total = FAULT_KINDS.reduce((sum, kind) => sum + weights[kind], 0)
  let roll = Math.random() * total
  for (const kind of FAULT_KINDS) {
    roll -= weights[kind]
    if (roll < 0) return kind
  }
  return "ok"
}

/** Writes a raw 200 answer one byte at a time over `totalMs`, status line included, then closes the connection. */
const dribble = (socket, totalMs) => {
  const bytes = Buffer.from(
    `HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: ${SLOW_BODY.length}\r\nconnection: close\r\n\r\n${SLOW_BODY}`
  )
  socket.setNoDelay(true)
  const stepMs = totalMs / bytes.length
  const began = Date.now()
  let next = 0
  const step = () => {
    if (socket.destroyed || !socket.writable) return
    socket.write(bytes.subarray(next, next + 1))
    next += 1
    if (next < bytes.length) setTimeout(step, Math.max(0, began + next * stepMs - Date.now()))
    else socket.end()
  }
  step()
}

const serve = async ({ count, timeoutMs, weights }) => {
  const hugeText = Buffer.alloc(HUGE_BYTES, HUGE_TEXT_PATTERN)
  const block = crypto.randomBytes(64 * 1024)
  block[0] = 0
  block[1] = 0xc3 // a lead byte without its continuation
  const hugeBinary = Buffer.alloc(HUGE_BYTES, block)

  /** Every request: [pair, kind index, started ms, ended ms or 0]. */
  const requests = []
  const overlaps = []
  /** Open requests per pair. */
  const active = new Map()
  const injected = Object.fromEntries(FAULT_KINDS.map((kind) => [kind, 0]))
  /** The request each socket carries now (a keep-alive socket carries one after another). */
  const current = new WeakMap()

  const end = (request) => {
    if (request.endedMs !== 0) return
    request.endedMs = Date.now()
    request.socket = undefined
    const open = active.get(request.pair)
    open?.delete(request)
    if (open?.size === 0) active.delete(request.pair)
  }

  const arrive = (request) => {
    const open = active.get(request.pair)
    if (open === undefined) {
      active.set(request.pair, new Set([request]))
      return
    }
    open.add(request)
    // The previous try's connection may have closed in this same turn of the event loop, its close
    // not yet processed: judge after two more turns (I/O, then close callbacks).
    setImmediate(() =>
      setImmediate(() => {
        for (const other of open) {
          if (other !== request && other.endedMs === 0 && request.endedMs === 0) {
            overlaps.push({
              pair: request.pair,
              first: other.kind,
              second: request.kind,
              firstStartedMs: other.startedMs,
              secondStartedMs: request.startedMs,
              checkedMs: Date.now(),
              firstSocket: {
                destroyed: other.socket?.destroyed,
                readableEnded: other.socket?.readableEnded,
                sameSocket: other.socket === request.socket
              }
            })
          }
        }
      })
    )
  }

  const servers = await Promise.all(
    Array.from({ length: count }, async (_, index) => {
      const server = http.createServer({ keepAliveTimeout: 30_000 })
      server.on("connection", (socket) => {
        const over = () => {
          const request = current.get(socket)
          if (request !== undefined) end(request)
        }
        socket.on("end", over)
        socket.on("close", over)
        socket.on("error", over)
      })
      server.on("request", (req, res) => {
        const kind = pick(weights)
        injected[kind] += 1
        const request = {
          pair: `${req.headers["webhook-id"] ?? ""}|${index}`,
          kind,
          startedMs: Date.now(),
          endedMs: 0,
          socket: req.socket
        }
        requests.push(request)
        current.set(req.socket, request)
        arrive(request)
        res.on("close", () => end(request))
        req.resume()
        req.on("end", () => {
          switch (kind) {
            case "ok":
              res.writeHead(200, { "content-type": "text/plain" }).end("ok")
              return
            case "error500":
              res.writeHead(500, { "content-type": "text/plain" }).end(`${ERROR_BODY_PREFIX}${req.headers["webhook-id"]}`)
              return
            case "hang":
              return
            case "reset":
              if (Math.random() < 0.5) req.socket.resetAndDestroy()
              else req.socket.destroy()
              return
            case "slow":
              dribble(req.socket, timeoutMs * (0.2 + 1.4 * Math.random()))
              return
            case "hugeText":
              res.writeHead(200, { "content-type": "text/plain", "content-length": HUGE_BYTES }).end(hugeText)
              return
            case "hugeBinary":
              res.writeHead(200, { "content-type": "application/octet-stream", "content-length": HUGE_BYTES }).end(hugeBinary)
              return
          }
        })
      })
      // Writes to a connection the sender dropped fail here; that is the point.
      server.on("clientError", (_error, socket) => socket.destroy())
      await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve))
      return server
    })
  )

  const inFlight = () => [...active.values()].reduce((sum, open) => sum + open.size, 0)
  parentPort.on("message", async (message) => {
    if (message === "stats") {
      parentPort.postMessage({ requests: requests.length, inFlight: inFlight(), overlaps: overlaps.length, injected })
    } else if (message === "results") {
      parentPort.postMessage({
        requests: requests.map((r) => [r.pair, r.kind, r.startedMs, r.endedMs]),
        overlaps,
        injected,
        inFlight: inFlight()
      })
    } else if (message === "close") {
      await Promise.all(
        servers.map(
          (server) =>
            new Promise((resolve) => {
              server.closeAllConnections()
              server.close(resolve)
            })
        )
      )
      parentPort.postMessage({ closed: true })
    }
  })
  parentPort.postMessage({ ports: servers.map((server) => server.address().port) })
}

if (!isMainThread && workerData?.role === "chaos-receivers") void serve(workerData)
