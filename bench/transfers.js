// `npm run bench -- transfers [--seconds=5] [--concurrency=32] [--store=sqlite,postgres] [--batch=100] [--batch-concurrency=8] [--writer-thread=on|off] [--only=batch] [--runs=1] [--statements]`
//
// Book transfers per second over HTTP (keep-alive client at concurrency 32, in a worker thread so
// it does not share the server's event loop), p50/p99 latency, on SQLite and on PostgreSQL; then,
// in the same run, a raw baseline that writes the same rows with the same driver and no HTTP, the
// way a hand-rolled ledger would: one durable transaction per transfer that reads both accounts,
// locks the balance rows (FOR UPDATE on PostgreSQL), inserts the transaction, transfer, book
// transfer, 4 entries, upserts the balances, inserts 3 events and runs their webhook fan-out
// INSERT … SELECT. SQLite raw: prepared statements, one synchronous BEGIN IMMEDIATE transaction per
// transfer. PostgreSQL raw: the whole transaction as ONE simple-query round trip (BEGIN; …; COMMIT)
// over a pool of 10 at the same concurrency — the fastest shape node-postgres allows. And a bare
// baseline: a node:http server in its own process doing that same SQL behind JSON in and out (no
// auth, no validation, no events; support/bareServer.js), driven like ours. And a lean baseline
// (support/leanLedger.js): that same bare server over the leanest schema holding these rows — 7
// tables, text ids, primary keys only, no foreign keys — writing each transfer on PostgreSQL as ONE
// call of a plpgsql function (locks both accounts' balance rows in id order, updates 4 balances,
// inserts the transaction, transfer, book transfer, 4 entries and 3 events), on SQLite as one
// BEGIN IMMEDIATE transaction of prepared statements; beside it ("lean SQL") that write alone,
// no HTTP, on 16 connections (SQLite: one). Bare uses the platform's own schema, so our/bare hides
// what the schema and the posting SQL cost; our/lean is the distance to the limit of any Node
// service writing these rows durably (issue 24; docs/operations.md#volume). Prints our/bare,
// our/lean and our/raw as ratios, and the load average (the machine is shared: compare figures of
// one run).
// --runs=3 repeats every measurement three times (each run side by side with its own baselines)
// and ends with each store's ratios run by run.
import { Access, CreateWallet, Ledger } from "@issuing/core"
import { createIssuing, storeFor } from "@issuing/http"
import * as SqliteStore from "@issuing/store-sqlite"
import Database from "better-sqlite3"
import { Effect, Schema } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import { spawn } from "node:child_process"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { prepareLean, leanWriter } from "./support/leanLedger.js"
import { benchPool, createDatabase, resetStatements, startPostgres, statementsOf } from "./support/postgres.js"
import { fundedWallets } from "./support/wallets.js"
import { postgresTransferText, rawParams, rowsOf, sqliteTransfer, withFanOuts } from "./support/rawLedger.js"
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads"
import { option, percentile } from "./support/common.js"

// The services take input decoded as the API decodes a body.
const decodeWallet = Schema.decodeUnknownSync(CreateWallet)

const WALLETS = 64
// Connections of the lean write alone (the HTTP servers, ours included, keep pools of 10).
const LEAN_CONNECTIONS = 16
const FUNDING_MINOR = 1_000_000_000_000

// ---- load generator (worker thread) ---------------------------------------------------------

// idempotencyKeys: every request carries an Idempotency-Key of its own (a new UUID), as a careful client's do.
const drive = async ({ baseUrl, apiKey, programId, accounts, seconds, concurrency, batch, idempotencyKeys = false }) => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency })
  // batch > 0: POST /v1/transfers/batch with `batch` transfers per request; ok counts transfers.
  const url = new URL(batch > 0 ? "/v1/transfers/batch" : "/v1/transfers", baseUrl)
  const latencies = []
  let ok = 0
  let failed = 0
  const statuses = {}
  const deadline = performance.now() + seconds * 1000
  const one = () =>
    new Promise((resolve) => {
      const item = () => {
        const from = Math.floor(Math.random() * accounts.length)
        let to = Math.floor(Math.random() * (accounts.length - 1))
        if (to >= from) to += 1
        return {
          paymentRail: "book",
          amount: 1 + Math.floor(Math.random() * 100),
          currency: "USD",
          from_financial_account_id: accounts[from],
          to_financial_account_id: accounts[to]
        }
      }
      const body = JSON.stringify(batch > 0 ? { transfers: Array.from({ length: batch }, item) } : item())
      const started = performance.now()
      const request = http.request(
        url,
        {
          method: "POST",
          agent,
          headers: {
            authorization: `Bearer ${apiKey}`,
            "x-program-id": programId,
            "content-type": "application/json",
            "content-length": Buffer.byteLength(body),
            ...(idempotencyKeys ? { "idempotency-key": crypto.randomUUID() } : {})
          }
        },
        (response) => {
          const chunks = []
          if (batch > 0) response.on("data", (chunk) => chunks.push(chunk))
          else response.resume()
          response.on("end", () => {
            latencies.push(performance.now() - started)
            if (response.statusCode === 200 && batch > 0) {
              const items = JSON.parse(Buffer.concat(chunks).toString()).data
              const posted = items.filter((entry) => entry.object === "transfer").length
              ok += posted
              failed += items.length - posted
            } else if (response.statusCode === 200) ok += 1
            else {
              failed += 1
              statuses[response.statusCode] = (statuses[response.statusCode] ?? 0) + 1
            }
            resolve()
          })
        }
      )
      request.on("error", () => {
        failed += 1
        resolve()
      })
      request.end(body)
    })
  const started = performance.now()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) await one()
    })
  )
  const elapsedMs = performance.now() - started
  agent.destroy()
  return { ok, failed, statuses, elapsedMs, latencies }
}

if (!isMainThread && workerData?.role === "driver") {
  drive(workerData).then((result) => parentPort.postMessage(result))
}

// ---- the platform over HTTP ----------------------------------------------------------------

export const httpRun = async (target, seconds, concurrency, batch = 0, beforeLoad = async () => {}) => {
  const server = http.createServer()
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve))
  const baseUrl = `http://127.0.0.1:${server.address().port}`
  const instance = await createIssuing({
    // --writer-thread=off: SQLite batches written on the main connection (for a side-by-side figure).
    store: target.writerThread === false ? SqliteStore.layer({ filename: target.filename, writerThread: false }) : storeFor(target),
    vaultKeys: [crypto.randomBytes(32)],
    background: false,
    log: null,
    settings: { baseUrl, rateLimitPerSecond: 1_000_000, rateLimitBurst: 1_000_000 }
  })
  server.on("request", instance.listener)
  server.keepAliveTimeout = 60_000
  const org = await instance.runtime.runPromise(Effect.flatMap(Access, (access) => access.createOrganization("bench")))
  const accounts = await fundedWallets(instance, org.program_id, WALLETS, FUNDING_MINOR)
  await beforeLoad()
  const worker = new Worker(new URL(import.meta.url), {
    workerData: { role: "driver", baseUrl, apiKey: org.api_key, programId: org.program_id, accounts, seconds, concurrency, batch }
  })
  const result = await new Promise((resolve, reject) => {
    worker.once("message", resolve)
    worker.once("error", reject)
  })
  await worker.terminate()
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
  await instance.dispose()
  const sorted = Float64Array.from(result.latencies).sort()
  return {
    perSecond: result.ok / (result.elapsedMs / 1000),
    ok: result.ok,
    failed: result.failed,
    statuses: result.statuses,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99)
  }
}

// ---- raw baselines: the same rows, the same drivers, no HTTP -------------------------------

/** Starts the bare node:http baseline (support/bareServer.js) in its own process and drives it like ours. */
export const bareRun = async (target, seconds, concurrency) => {
  const { programId, accounts } = await prepareRaw(target)
  return serverRun({ ...target, programId }, accounts, seconds, concurrency)
}

/** The same server over the lean schema (support/leanLedger.js), in its own process, driven like ours. */
export const leanRun = async (target, seconds, concurrency) => {
  const programId = crypto.randomUUID()
  const accounts = await prepareLean(target, programId, WALLETS)
  return serverRun({ ...target, programId, lean: true }, accounts, seconds, concurrency)
}

/**
 * The lean write alone, no HTTP: on PostgreSQL `lean_post_transfer` called by `concurrency`
 * loops over as many connections; on SQLite its transaction in a loop (one connection, as SQLite
 * has one writer).
 */
const leanAlone = async (target, seconds, concurrency) => {
  const programId = crypto.randomUUID()
  const accounts = await prepareLean(target, programId, WALLETS)
  const writer = leanWriter(target, concurrency)
  const latencies = []
  let ok = 0
  const deadline = performance.now() + seconds * 1000
  const started = performance.now()
  await Promise.all(
    Array.from({ length: target.kind === "sqlite" ? 1 : concurrency }, async () => {
      while (performance.now() < deadline) {
        const [from, to] = pick(accounts)
        const t0 = performance.now()
        await writer.write(programId, from, to, 1 + Math.floor(Math.random() * 100))
        latencies.push(performance.now() - t0)
        ok += 1
      }
    })
  )
  const elapsedMs = performance.now() - started
  await writer.close()
  const sorted = Float64Array.from(latencies).sort()
  return { perSecond: ok / (elapsedMs / 1000), p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99) }
}

/** Starts support/bareServer.js with `config` in its own process and drives it like ours. */
const serverRun = async (config, accounts, seconds, concurrency) => {
  const { programId } = config
  const child = spawn(process.execPath, [path.join(import.meta.dirname, "support", "bareServer.js"), JSON.stringify(config)], {
    stdio: ["ignore", "pipe", "inherit"]
  })
  try {
    const port = await new Promise((resolve, reject) => {
      child.stdout.once("data", (data) => resolve(Number(String(data).trim())))
      child.once("exit", (code) => reject(new Error(`bare server exited with ${code}`)))
    })
    const worker = new Worker(new URL(import.meta.url), {
      workerData: { role: "driver", baseUrl: `http://127.0.0.1:${port}`, apiKey: "-", programId, accounts, seconds, concurrency, batch: 0 }
    })
    const result = await new Promise((resolve, reject) => {
      worker.once("message", resolve)
      worker.once("error", reject)
    })
    await worker.terminate()
    const sorted = Float64Array.from(result.latencies).sort()
    return {
      perSecond: result.ok / (result.elapsedMs / 1000),
      ok: result.ok,
      failed: result.failed,
      p50: percentile(sorted, 0.5),
      p99: percentile(sorted, 0.99)
    }
  } finally {
    child.kill("SIGTERM")
    await new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once("exit", resolve)))
  }
}

/** Creates the schema and the accounts through the platform, then closes it. */
const prepareRaw = async (target) => {
  const instance = await createIssuing({ store: storeFor(target), vaultKeys: [crypto.randomBytes(32)], background: false, log: null })
  const org = await instance.runtime.runPromise(Effect.flatMap(Access, (access) => access.createOrganization("raw")))
  const accounts = await instance.runtime.runPromise(
    Effect.flatMap(Ledger, (ledger) =>
      Effect.forEach(
        Array.from({ length: WALLETS }, (_, i) => i),
        (i) =>
          Effect.map(
            ledger.createWallet(org.program_id, decodeWallet({ holder: { name: `Wallet ${i}` } })),
            (wallet) => wallet.financial_account_id
          )
      )
    )
  )
  await instance.dispose()
  return { programId: org.program_id, accounts }
}

const pick = (accounts) => {
  const from = Math.floor(Math.random() * accounts.length)
  let to = Math.floor(Math.random() * (accounts.length - 1))
  if (to >= from) to += 1
  return [accounts[from], accounts[to]]
}

const rawSqlite = async (filename, seconds) => {
  const { programId, accounts } = await prepareRaw({ kind: "sqlite", filename })
  const db = new Database(filename)
  db.pragma("journal_mode = WAL")
  db.pragma("synchronous = FULL")
  db.pragma("foreign_keys = ON")
  const one = sqliteTransfer(db)
  const latencies = []
  let ok = 0
  const deadline = performance.now() + seconds * 1000
  const started = performance.now()
  while (performance.now() < deadline) {
    const [from, to] = pick(accounts)
    const t0 = performance.now()
    one.immediate(withFanOuts(rawParams(rowsOf(programId, from, to, 1))))
    latencies.push(performance.now() - t0)
    ok += 1
  }
  const elapsedMs = performance.now() - started
  db.close()
  const sorted = Float64Array.from(latencies).sort()
  return { perSecond: ok / (elapsedMs / 1000), p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99) }
}

/** One round trip per transfer: BEGIN; read; lock; inserts; upsert; events; fan-out; COMMIT as one simple query. */
const rawPostgres = async (url, seconds, concurrency) => {
  const { programId, accounts } = await prepareRaw({ kind: "postgres", url })
  const pool = benchPool(url, 10)
  const latencies = []
  let ok = 0
  const deadline = performance.now() + seconds * 1000
  const started = performance.now()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        const [from, to] = pick(accounts)
        const p = withFanOuts(rawParams(rowsOf(programId, from, to, 1)))
        const text = postgresTransferText(p)
        const t0 = performance.now()
        await pool.query(text)
        latencies.push(performance.now() - t0)
        ok += 1
      }
    })
  )
  const elapsedMs = performance.now() - started
  await pool.end()
  const sorted = Float64Array.from(latencies).sort()
  return { perSecond: ok / (elapsedMs / 1000), p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99) }
}

// ---- PostgreSQL server for the run (bench/support/postgres.js) ------------------------------

// Idle pool clients see "terminating connection due to administrator command" (57P01) when the
// embedded server stops at the end of the run; that is expected, not a failure of the benchmark.
process.on("uncaughtException", (error) => {
  if (error?.code === "57P01") return
  console.error(error)
  process.exit(1)
})

const fmt = (n) => n.toFixed(0).padStart(6)
const ms = (n) => `${n.toFixed(2)} ms`

const load = () =>
  os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(" ")

/** A ratio with two decimals, a rate as a whole number. */
const shown = (value) => (value >= 100 ? value.toFixed(0) : value.toFixed(2))

/** Ratios of every run, per store and measurement, for the summary of --runs. */
const ratios = new Map()
const keep = (name, value) => ratios.set(name, [...(ratios.get(name) ?? []), value])

const report = (store, ours, raw, batch = 0, bare = undefined, lean = undefined) => {
  const label = batch > 0 ? `batch ${batch}`.padEnd(9) : "HTTP".padEnd(8)
  console.log(
    `${store.padEnd(9)} ${label} ${fmt(ours.perSecond)} transfers/s  p50 ${ms(ours.p50)}  p99 ${ms(ours.p99)}  (ok ${ours.ok}, failed ${ours.failed}${ours.failed ? ` ${JSON.stringify(ours.statuses)}` : ""})`
  )
  console.log(`${"".padEnd(9)} ${"raw".padEnd(label.length)} ${fmt(raw.perSecond)} transfers/s  p50 ${ms(raw.p50)}  p99 ${ms(raw.p99)}`)
  if (bare !== undefined) {
    console.log(
      `${"".padEnd(9)} ${"bare".padEnd(label.length)} ${fmt(bare.perSecond)} transfers/s  p50 ${ms(bare.p50)}  p99 ${ms(bare.p99)}  (node:http + the same SQL, failed ${bare.failed})`
    )
  }
  if (lean !== undefined) {
    console.log(
      `${"".padEnd(9)} ${"lean".padEnd(label.length)} ${fmt(lean.http.perSecond)} transfers/s  p50 ${ms(lean.http.p50)}  p99 ${ms(lean.http.p99)}  (node:http + the lean schema, ${store === "postgres" ? "one plpgsql call per transfer" : "one prepared transaction per transfer"}, failed ${lean.http.failed})`
    )
    console.log(
      `${"".padEnd(9)} ${"lean SQL".padEnd(label.length)} ${fmt(lean.alone.perSecond)} transfers/s  p50 ${ms(lean.alone.p50)}  p99 ${ms(lean.alone.p99)}  (the lean write alone, no HTTP, ${store === "postgres" ? `${LEAN_CONNECTIONS} connections` : "one connection"})`
    )
  }
  if (bare !== undefined) {
    console.log(
      `${"".padEnd(9)} ratio our/bare ${(ours.perSecond / bare.perSecond).toFixed(2)}${lean === undefined ? "" : `   ratio our/lean ${(ours.perSecond / lean.http.perSecond).toFixed(2)}`}`
    )
    keep(`${store} HTTP our/bare`, ours.perSecond / bare.perSecond)
  }
  if (lean !== undefined) {
    keep(`${store} HTTP our/lean`, ours.perSecond / lean.http.perSecond)
    keep(`${store} lean SQL transfers/s`, lean.alone.perSecond)
  }
  keep(`${store} ${batch > 0 ? `batch ${batch}` : "HTTP"} our/raw`, ours.perSecond / raw.perSecond)
  if (batch > 0) keep(`${store} batch ${batch} transfers/s`, ours.perSecond)
  console.log(`${"".padEnd(9)} ratio our/raw ${(ours.perSecond / raw.perSecond).toFixed(2)}   (load average ${load()})`)
}

/** Each statement's calls and execution time per transfer; `n` marks a nested one (inside a function or trigger). */
const printStatements = (rows, transfers) => {
  console.log(`postgres  statements of the HTTP run per transfer (${transfers} transfers; nested times are within their caller's)`)
  for (const row of rows) {
    const text = row.query.replace(/\s+/g, " ").slice(0, 110)
    console.log(
      `          ${row.toplevel ? "top" : "  n"} ${(row.calls / transfers).toFixed(2).padStart(6)} calls ${(row.ms / transfers).toFixed(3).padStart(8)} ms  ${text}`
    )
  }
}

/** Entry point for bench/run.js. */
export async function run(args) {
  const seconds = Number(option(args, "seconds", "5"))
  const concurrency = Number(option(args, "concurrency", "32"))
  const stores = option(args, "store", "sqlite,postgres").split(",")
  // --batch=100: transfers per POST /v1/transfers/batch request, after the single-transfer run.
  const batch = Number(option(args, "batch", "0"))
  const runs = Number(option(args, "runs", "1"))
  // --only=batch: the batch run and its raw baseline alone (for profiling the batch path).
  const onlyBatch = option(args, "only", "") === "batch" && batch > 0
  // --batch-concurrency: batch requests in flight (default 8, at most --concurrency).
  const batchConcurrency = Math.min(concurrency, Number(option(args, "batch-concurrency", "8")))
  const writerThread = option(args, "writer-thread", "on") !== "off"
  // --statements: PostgreSQL's statements of our HTTP run, per transfer (pg_stat_statements on the embedded server).
  const statements = args.includes("--statements")
  console.log(
    `transfers: book transfers over HTTP, concurrency ${concurrency}${batch > 0 ? ` (batches: ${batchConcurrency} in flight, SQLite writer thread ${writerThread ? "on" : "off"})` : ""}, ${seconds}s per run, ${os.cpus().length} cores, load average ${load()}`
  )
  for (let round = 1; round <= runs; round++) {
    if (runs > 1) console.log(`run ${round} of ${runs}`)
    await oneRun(stores, seconds, concurrency, batch, batchConcurrency, onlyBatch, writerThread, statements)
  }
  if (runs > 1) {
    console.log(`over ${runs} runs:`)
    for (const [name, values] of ratios)
      console.log(`  ${name.padEnd(32)} ${values.map(shown).join("  ")}  (min ${shown(Math.min(...values))})`)
  }
}

const oneRun = async (stores, seconds, concurrency, batch, batchConcurrency, onlyBatch, writerThread, statements) => {
  if (stores.includes("sqlite")) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "issuing-bench-"))
    try {
      const raw = await rawSqlite(path.join(dir, "raw.db"), seconds)
      if (!onlyBatch) {
        const ours = await httpRun({ kind: "sqlite", filename: path.join(dir, "http.db") }, seconds, concurrency)
        const bare = await bareRun({ kind: "sqlite", filename: path.join(dir, "bare.db") }, seconds, concurrency)
        const lean = {
          http: await leanRun({ kind: "sqlite", filename: path.join(dir, "lean.db") }, seconds, concurrency),
          alone: await leanAlone({ kind: "sqlite", filename: path.join(dir, "lean-alone.db") }, seconds, LEAN_CONNECTIONS)
        }
        report("sqlite", ours, raw, 0, bare, lean)
      }
      if (batch > 0)
        report(
          "sqlite",
          await httpRun({ kind: "sqlite", filename: path.join(dir, "batch.db"), writerThread }, seconds, batchConcurrency, batch),
          raw,
          batch
        )
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }
  if (stores.includes("postgres")) {
    const server = await startPostgres({ statements })
    try {
      const raw = await rawPostgres(await createDatabase(server.adminUrl, "issuing_bench_raw"), seconds, concurrency)
      if (!onlyBatch) {
        const ours = await httpRun(
          { kind: "postgres", url: await createDatabase(server.adminUrl, "issuing_bench_http") },
          seconds,
          concurrency,
          0,
          statements ? () => resetStatements(server.adminUrl) : undefined
        )
        if (statements) printStatements(await statementsOf(server.adminUrl, "issuing_bench_http"), ours.ok)
        const bare = await bareRun(
          { kind: "postgres", url: await createDatabase(server.adminUrl, "issuing_bench_bare") },
          seconds,
          concurrency
        )
        const lean = {
          http: await leanRun({ kind: "postgres", url: await createDatabase(server.adminUrl, "issuing_bench_lean") }, seconds, concurrency),
          alone: await leanAlone(
            { kind: "postgres", url: await createDatabase(server.adminUrl, "issuing_bench_lean_alone") },
            seconds,
            LEAN_CONNECTIONS
          )
        }
        report("postgres", ours, raw, 0, bare, lean)
      }
      if (batch > 0) {
        const batched = await httpRun(
          { kind: "postgres", url: await createDatabase(server.adminUrl, "issuing_bench_batch") },
          seconds,
          batchConcurrency,
          batch
        )
        report("postgres", batched, raw, batch)
      }
    } finally {
      await server.stop()
    }
  }
}
