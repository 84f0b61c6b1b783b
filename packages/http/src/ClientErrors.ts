import * as crypto from "node:crypto"
import type { Duplex } from "node:stream"
import { apiFailure, envelope } from "./errors.js"

/** What node:http reports before any request reaches a listener (its `clientError` event). */
interface ClientError extends Error {
  readonly code?: string | undefined
}

/** The status line and catalogue code for a request Node's parser refused. */
const answerFor = (error: ClientError) => {
  switch (error.code) {
    // The request line and headers together exceed Node's limit (16 KiB by default): a long URL too.
    case "HPE_HEADER_OVERFLOW":
      return {
        status: "431 Request Header Fields Too Large",
        failure: apiFailure(
          "request_header_too_large",
          "The request line and headers are too large. Send a shorter URL or fewer headers.",
          null
        )
      }
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return {
        status: "408 Request Timeout",
        failure: apiFailure("request_timeout", "The request was not received in time.", null)
      }
    default:
      return {
        status: "400 Bad Request",
        failure: apiFailure("invalid_request", "The request is not valid HTTP/1.1.", null)
      }
  }
}

/**
 * A `clientError` listener for a node:http server: a request Node's own parser refuses (headers over
 * its size limit, bytes that are not HTTP, an unknown method, a request that never finished) gets
 * the error envelope with a `Request-Id`, like every other non-2xx, instead of Node's bare status
 * line; then the connection is closed (its stream position is unknown). `issuing serve` installs
 * it; a host app mounting the platform on its own server may too:
 * `server.on("clientError", issuing.clientErrorListener)`.
 */
export const clientErrorListener =
  (baseUrl: () => string) =>
  (error: ClientError, socket: Duplex): void => {
    // A reset connection has nobody left to answer; on one that has already carried response bytes
    // a response may be half written, so (like Node's own handler) it is closed without an answer.
    const written = "bytesWritten" in socket && typeof socket.bytesWritten === "number" ? socket.bytesWritten : 0
    if (error.code === "ECONNRESET" || !socket.writable || written > 0) {
      socket.destroy()
      return
    }
    const requestId = crypto.randomUUID()
    const { failure, status } = answerFor(error)
    const body = JSON.stringify(envelope(failure, requestId, baseUrl()))
    socket.end(
      `HTTP/1.1 ${status}\r\n` +
        "Content-Type: application/json\r\n" +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `Request-Id: ${requestId}\r\n` +
        "Connection: close\r\n\r\n" +
        body
    )
  }

/**
 * A `connect` listener for a node:http server: node:http hands CONNECT requests (proxy tunnels) to
 * this event, never to the request listener, and closes the connection when nobody listens. The
 * platform is no proxy: the request gets the error envelope (405, no tunnel), then the connection
 * is closed. `issuing serve` installs it; a host app may too: `server.on("connect", issuing.connectListener)`.
 */
export const connectListener =
  (baseUrl: () => string) =>
  (_request: unknown, socket: Duplex): void => {
    if (!socket.writable) {
      socket.destroy()
      return
    }
    const requestId = crypto.randomUUID()
    const failure = apiFailure("method_not_allowed", "CONNECT is not supported: this server is not a proxy.", null)
    const body = JSON.stringify(envelope(failure, requestId, baseUrl()))
    socket.end(
      "HTTP/1.1 405 Method Not Allowed\r\n" +
        "Content-Type: application/json\r\n" +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `Request-Id: ${requestId}\r\n` +
        "Cache-Control: no-store\r\n" +
        "Connection: close\r\n\r\n" +
        body
    )
  }
