// The platform's server in a process of its own, for `npm run bench -- profile`: createIssuing
// over the store its config names (`{ kind, url }` or `{ kind, filename }`) behind node:http, as
// `issuing serve` runs it, with the bench's 64 funded wallets. Prints one JSON line on stdout —
// `{ port, apiKey, programId, accounts }` — and exits on SIGTERM after closing the platform. The
// profiler controls it over its IPC channel (support/serverControl.js: a CPU profile, or with
// `count: true` in its config the counts of support/counters.js). Its CPU time is its own: the
// load comes from another process.
import { Access } from "@issuing/core"
import { Effect } from "effect"
import * as crypto from "node:crypto"
import * as http from "node:http"
import { createRequire } from "node:module"
import { answerControl } from "./serverControl.js"
import { fundedWallets } from "./wallets.js"

const config = JSON.parse(process.argv[2])
// `http`: another build of @issuing/http to serve with (its dist/index.js), to compare two builds.
const { createIssuing, storeFor } = await import(config.http ?? "@issuing/http")
const WALLETS = 64
const FUNDING_MINOR = 1_000_000_000_000

const server = http.createServer()
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve))
const baseUrl = `http://127.0.0.1:${server.address().port}`
const instance = await createIssuing({
  store: storeFor(config),
  vaultKeys: [crypto.randomBytes(32)],
  background: false,
  log: null,
  settings: { baseUrl, rateLimitPerSecond: 1_000_000, rateLimitBurst: 1_000_000 }
})
server.on("request", instance.listener)
server.keepAliveTimeout = 60_000
const org = await instance.runtime.runPromise(Effect.flatMap(Access, (access) => access.createOrganization("profile")))
const accounts = await fundedWallets(instance, org.program_id, WALLETS, FUNDING_MINOR)
await answerControl({ entry: config.http ?? createRequire(import.meta.url).resolve("@issuing/http"), count: config.count })
process.stdout.write(`${JSON.stringify({ port: server.address().port, apiKey: org.api_key, programId: org.program_id, accounts })}\n`)
process.on("SIGTERM", async () => {
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
  await instance.dispose()
  process.exit(0)
})
