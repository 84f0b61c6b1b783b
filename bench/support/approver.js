// The program's authorization endpoint as the benches stand it up: a local node:http receiver that
// verifies nothing and approves at once, so a figure beside the plain one shows what the real-time
// decision itself adds (docs/card-transactions.md#performance).
import * as http from "node:http"

/** `{ url, close }` of a receiver that approves every authorization request at once. */
export const startApprover = async () => {
  const server = http.createServer((request, response) => {
    request.resume()
    request.on("end", () => {
      response.writeHead(200, { "content-type": "application/json" })
      response.end('{"approved":true}')
    })
  })
  server.keepAliveTimeout = 65_000
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve))
  return { url: `http://127.0.0.1:${server.address().port}/decide`, close: () => new Promise((resolve) => server.close(resolve)) }
}
