// `npm run bench -- decisions [--requests=2000] [--concurrency=1]`
//
// What a real-time authorization decision adds (docs/card-transactions.md#real-time-decisions),
// in-process on a SQLite file (built packages): a receiver on loopback in its own process answers
// `{"approved": true}` at once; measured, p50/p99:
// - a bare keep-alive POST of the same body to the receiver (the floor: the receiver and the network);
// - `AuthorizationDecisions.decide` against the program's endpoint (the cached endpoint, signing, the POST, the answer's rules);
// - `decide` for a program without an endpoint (nothing asked: the cache lookup alone);
// - `decide` with an embedded decider answering at once.
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { Access, AuthorizationDecisions, AuthorizationEndpoints } from "@issuing/core"
import { createIssuing, storeFor } from "@issuing/http"
import { Effect } from "effect"
import { percentile } from "./support/common.js"

const option = (args, name, fallback) => {
  const found = args.find((arg) => arg.startsWith(`--${name}=`))
  return found === undefined ? fallback : Number(found.slice(name.length + 3))
}
const summary = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  return `p50 ${percentile(sorted, 0.5).toFixed(3)} ms, p99 ${percentile(sorted, 0.99).toFixed(3)} ms`
}

const RECEIVER = `
const http = require("node:http")
const answer = JSON.stringify({ approved: true })
const server = http.createServer({ keepAliveTimeout: 65000 }, (request, response) => {
  request.resume()
  request.on("end", () => {
    response.writeHead(200, { "content-type": "application/json", "content-length": answer.length })
    response.end(answer)
  })
})
server.listen(0, "127.0.0.1", () => process.stdout.write(server.address().port + "\\n"))
`

const startReceiver = () =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, ["-e", RECEIVER], { stdio: ["ignore", "pipe", "inherit"] })
    child.stdout.once("data", (chunk) => resolve({ url: `http://127.0.0.1:${String(chunk).trim()}/decide`, child }))
  })

/** Runs `once` `requests` times, `concurrency` at a time; the latency of each in ms. */
const measure = async (requests, concurrency, once) => {
  const latencies = []
  let next = 0
  const worker = async () => {
    while (next < requests) {
      next += 1
      const started = performance.now()
      await once()
      latencies.push(performance.now() - started)
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  return latencies
}

export const run = async (args) => {
  const requests = option(args, "requests", 2000)
  const concurrency = option(args, "concurrency", 1)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "issuing-bench-decisions-"))
  const receiver = await startReceiver()
  const vaultKeys = [Buffer.alloc(32, 5)]
  const store = () => storeFor({ kind: "sqlite", filename: path.join(dir, "issuing.db") })
  const instance = await createIssuing({ store: store(), vaultKeys, background: false, log: null })
  const embedded = await createIssuing({
    store: store(),
    vaultKeys,
    background: false,
    log: null,
    authorizationDecider: async () => ({ approved: true })
  })
  try {
    const run = (effect) => instance.runtime.runPromise(effect)
    const org = await run(Effect.flatMap(Access, (access) => access.createOrganization("bench")))
    const other = await run(Effect.flatMap(Access, (access) => access.createOrganization("bench, no endpoint")))
    await run(Effect.flatMap(AuthorizationEndpoints, (endpoints) => endpoints.create(org.program_id, { url: receiver.url })))
    const request = {
      transaction: { id: "0193f1f0-0000-7000-8000-000000000001", object: "transaction", amount: 2500, status: "PENDING" },
      card: { id: "0193f1f0-0000-7000-8000-0000000000c1", object: "card", program_id: org.program_id, last_four: "4242" },
      amount: 2500,
      kind: "AUTHORIZATION",
      partial_approval_capable: false
    }
    const body = JSON.stringify({ type: "authorization.request", data: { object: request.transaction, ...request } })
    const agent = new http.Agent({ keepAlive: true, maxSockets: 64 })
    const bare = () =>
      new Promise((resolve, reject) => {
        const outgoing = http.request(receiver.url, {
          method: "POST",
          agent,
          headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) }
        })
        outgoing.on("response", (response) => {
          response.resume()
          response.on("end", resolve)
        })
        outgoing.on("error", reject)
        outgoing.end(body)
      })
    const decide = (on, programId) => () =>
      on.runtime.runPromise(Effect.flatMap(AuthorizationDecisions, (d) => d.decide(programId, request)))
    // Warm up each path (connections, caches, JIT).
    for (const once of [bare, decide(instance, org.program_id), decide(instance, other.program_id), decide(embedded, org.program_id)]) {
      await measure(200, concurrency, once)
    }
    console.log(
      `decisions: ${requests} each, concurrency ${concurrency}, load average ${os
        .loadavg()
        .map((n) => n.toFixed(1))
        .join(" ")}`
    )
    console.log(`  bare keep-alive POST to the receiver:  ${summary(await measure(requests, concurrency, bare))}`)
    console.log(
      `  decide, the program's endpoint:        ${summary(await measure(requests, concurrency, decide(instance, org.program_id)))}`
    )
    console.log(
      `  decide, no endpoint (nothing asked):   ${summary(await measure(requests, concurrency, decide(instance, other.program_id)))}`
    )
    console.log(
      `  decide, embedded decider:              ${summary(await measure(requests, concurrency, decide(embedded, org.program_id)))}`
    )
    agent.destroy()
  } finally {
    await embedded.dispose()
    await instance.dispose()
    receiver.child.kill()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}
