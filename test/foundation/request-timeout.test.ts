import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { startPlatform, type TestPlatform } from "../support/platform.js"

/**
 * 408 request_timeout (docs/api.md#errors): a request that does not arrive in time is answered by
 * the platform's `clientErrorListener` with the error envelope and a Request-Id, then the
 * connection is closed. Node's server produces the time-out (`headersTimeout` for the head,
 * `requestTimeout` for the whole request); `issuing serve` keeps Node's defaults (60 s and 300 s),
 * so the platform is mounted here the way a host application mounts it (docs/api.md), on a server
 * whose time-outs are short.
 */
describe.each(STORE_KINDS)("request time-out on %s", (kind) => {
  let platform: TestPlatform
  let server: http.Server
  let port: number
  beforeAll(async () => {
    platform = await startPlatform(kind)
    server = http.createServer({ headersTimeout: 400, requestTimeout: 800, connectionsCheckingInterval: 50 })
    server.on("request", platform.instance.listener)
    server.on("clientError", platform.instance.clientErrorListener)
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    port = (server.address() as AddressInfo).port
  })
  afterAll(async () => {
    server?.closeAllConnections()
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()))
    await platform?.close()
  })

  /** Writes `bytes`, then sends nothing more, and reads what the server answers until it closes. */
  const stall = (bytes: string) =>
    new Promise<string>((resolve, reject) => {
      const socket = net.connect(port, "127.0.0.1", () => socket.write(bytes))
      let text = ""
      socket.on("data", (chunk) => (text += chunk))
      socket.on("close", () => resolve(text))
      socket.on("error", reject)
    })

  const expect408 = (answer: string) => {
    const [head, payload] = answer.split("\r\n\r\n")
    expect(head!.split("\r\n")[0]).toBe("HTTP/1.1 408 Request Timeout")
    expect(head).toMatch(/\r\nConnection: close/i)
    const requestId = /\r\nRequest-Id: (\S+)/i.exec(head!)?.[1]
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/)
    expect(JSON.parse(payload!).error).toEqual({
      type: "invalid_request_error",
      code: "request_timeout",
      message: expect.any(String),
      param: null,
      request_id: requestId,
      doc_url: expect.stringMatching(/\/docs\/errors\/request_timeout$/)
    })
  }

  it("answers 408 when the headers stall", async () => {
    expect408(await stall(`GET /v1/programs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${platform.org.api_key}\r\n`))
  })

  it("answers 408 when the body stalls after the headers, and writes nothing", async () => {
    const body = JSON.stringify({ holder: { name: "Never" } })
    const answer = await stall(
      "POST /v1/wallets HTTP/1.1\r\nHost: x\r\n" +
        `Authorization: Bearer ${platform.org.api_key}\r\nX-Program-ID: ${platform.org.program_id}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`
    )
    expect408(answer)
    const wallets = await platform.request("GET", "/v1/wallets")
    expect(wallets.body.total_count).toBe(0)
  })
})
