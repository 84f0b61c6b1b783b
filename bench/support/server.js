// The platform behind node:http on a free loopback port, as the benches run it: no background work,
// no log, rate limits out of the way (the benches measure the work, not the limiter).
import { createIssuing, storeFor } from "@issuing/http"
import * as crypto from "node:crypto"
import * as http from "node:http"

/**
 * `{ server, baseUrl, instance }` over the store `target` names (`{ kind, url }` or `{ kind, filename }`),
 * served by this checkout's build or by `build`, another's `{ createIssuing, storeFor }`.
 */
export const benchServer = async (target, serverOptions = {}, build = { createIssuing, storeFor }) => {
  const server = http.createServer(serverOptions)
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve))
  const baseUrl = `http://127.0.0.1:${server.address().port}`
  const instance = await build.createIssuing({
    store: build.storeFor(target),
    vaultKeys: [crypto.randomBytes(32)],
    background: false,
    log: null,
    settings: { baseUrl, rateLimitPerSecond: 1e9, rateLimitBurst: 1e9 }
  })
  server.on("request", instance.listener)
  return { server, baseUrl, instance }
}

/** Stops what `benchServer` started: its open connections, the server, then the instance. */
export const stopBenchServer = async ({ server, instance }) => {
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
  await instance.dispose()
}
