import * as http from "node:http"
import type { AddressInfo } from "node:net"

/** What the proxy does with one request: answer in its place, drop it, hold it, or forward it. */
export type Behaviour =
  | { readonly kind: "status"; readonly status: number; readonly headers?: Record<string, string>; readonly body?: string }
  | { readonly kind: "drop" }
  | { readonly kind: "hang" }
  | { readonly kind: "forward-then-drop" }
  | { readonly kind: "forward" }

/** One request as the proxy saw it. */
export interface Seen {
  readonly method: string
  readonly path: string
  readonly idempotencyKey: string | undefined
  readonly behaviour: Behaviour["kind"]
}

/** A flaky node:http proxy in front of the real platform. */
export interface FlakyProxy {
  readonly url: string
  readonly seen: Array<Seen>
  /** Behaviours for the next requests, in order; once used up, requests are forwarded. */
  script: Array<Behaviour>
  readonly close: () => Promise<void>
}

const readBody = (request: http.IncomingMessage) =>
  new Promise<Buffer>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => resolve(Buffer.concat(chunks)))
    request.on("error", reject)
  })

const forward = async (target: string, request: http.IncomingMessage, body: Buffer) => {
  const headers = new Headers()
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined && !["host", "connection", "content-length"].includes(name)) headers.set(name, String(value))
  }
  const response = await fetch(`${target}${request.url}`, {
    method: request.method,
    headers,
    body: body.length > 0 ? new Uint8Array(body) : undefined
  })
  return { status: response.status, headers: response.headers, body: Buffer.from(await response.arrayBuffer()) }
}

/** Starts a proxy to `target` that follows `script` for the first requests, then forwards everything. */
export const startFlakyProxy = async (target: string): Promise<FlakyProxy> => {
  const seen: Array<Seen> = []
  const hung = new Set<http.ServerResponse>()
  const proxy: { script: Array<Behaviour> } = { script: [] }
  const server = http.createServer(async (request, response) => {
    const body = await readBody(request)
    const behaviour = proxy.script.shift() ?? { kind: "forward" }
    const key = request.headers["idempotency-key"]
    seen.push({
      method: request.method!,
      path: request.url!,
      idempotencyKey: typeof key === "string" ? key : undefined,
      behaviour: behaviour.kind
    })
    switch (behaviour.kind) {
      case "status":
        response.writeHead(behaviour.status, { "content-type": "application/json", ...behaviour.headers })
        response.end(behaviour.body ?? "")
        return
      case "drop":
        request.socket.destroy()
        return
      case "hang":
        hung.add(response)
        return
      case "forward-then-drop":
        // The platform does the work; its answer is lost on the way back.
        await forward(target, request, body)
        request.socket.destroy()
        return
      case "forward": {
        const answer = await forward(target, request, body)
        const headers: Record<string, string> = {}
        answer.headers.forEach((value, name) => {
          if (!["content-length", "connection", "keep-alive", "transfer-encoding"].includes(name)) headers[name] = value
        })
        response.writeHead(answer.status, headers)
        response.end(answer.body)
      }
    }
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    get script() {
      return proxy.script
    },
    set script(next) {
      proxy.script = next
    },
    close: async () => {
      for (const response of hung) response.destroy()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
