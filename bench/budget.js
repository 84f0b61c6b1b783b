// `npm run bench -- budget [--seconds=4] [--store=sqlite,postgres]`
//
// The write path's performance budget (issue 46; docs/operations.md#the-performance-budget), in
// under three minutes on a quiet machine: the transfers, profile and webhooks benches run briefly,
// side by side with their baselines, and each figure is printed beside the goal it must meet.
//   - transfers (bench/transfers.js): single `POST /v1/transfers` over HTTP against the lean
//     baseline the goal is set against (a node:http server over the leanest schema of the same
//     rows), beside the bare one (that server over the platform's own schema, which hides what the
//     schema costs, so its ratio has no goal), and batches of 100 (`POST /v1/transfers/batch`),
//     on each store;
//   - the API node's and PostgreSQL's CPU per transfer (bench/profile.js): our server in a process
//     of its own under the same load, its CPU and every PostgreSQL process's per request, and the
//     lean baseline's PostgreSQL CPU per request (one plpgsql call per transfer);
//   - webhooks (bench/webhooks.js): deliveries/s against a bare keep-alive client posting the
//     same bodies to the same receiver, and event → delivery p50 / p99 at 200 events/s;
//   - keyed requests (no goal of the issue, shown): each store's CPU per transfer when every request
//     carries an Idempotency-Key of its own, over the same server's unkeyed (bench/profile.js).
// Every measurement is one short run, so a figure near its goal needs the full bench (three
// alternated runs) before it is called won or lost; the load average is printed at the start and
// the end, since on a shared machine it moves every figure.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { option } from "./support/common.js"
import { createDatabase, startPostgres } from "./support/postgres.js"
import { cpuPerTransfer } from "./profile.js"
import { bareRun, httpRun, leanRun } from "./transfers.js"
import { benchStore } from "./webhooks.js"

/** The goals of issue 46, each `{ name, unit, goal, atMost }`: met when the figure is ≤ (atMost) or ≥ the goal. */
const GOALS = {
  sqliteTransfersVsLean: { name: "SQLite transfers ÷ lean", unit: "×", goal: 0.7 },
  postgresTransfersVsLean: { name: "PostgreSQL transfers ÷ lean", unit: "×", goal: undefined },
  apiCpuPerTransfer: { name: "API node CPU per transfer, PostgreSQL", unit: "ms", goal: 0.45, atMost: true },
  databaseCpuVsLean: { name: "PostgreSQL CPU per transfer ÷ lean", unit: "×", goal: 1.3, atMost: true },
  sqliteBatchVsSingle: { name: "SQLite batches of 100 ÷ single", unit: "×", goal: 6 },
  sqliteBatched: { name: "SQLite transfers/s in batches", unit: "/s", goal: 15_000 },
  postgresBatchVsSingle: { name: "PostgreSQL batches of 100 ÷ single", unit: "×", goal: 6 },
  postgresBatched: { name: "PostgreSQL transfers/s in batches", unit: "/s", goal: 15_000 },
  postgresWebhookP99: { name: "webhook p99 at 200/s, PostgreSQL", unit: "ms", goal: 50, atMost: true },
  sqliteDeliveriesVsBare: { name: "webhook deliveries ÷ bare, SQLite", unit: "×", goal: 0.55 },
  postgresDeliveriesVsBare: { name: "webhook deliveries ÷ bare, PostgreSQL", unit: "×", goal: 0.55 },
  // Not issue 46's goals, shown because a careful client sends an Idempotency-Key with every POST
  // and the lines above send none (docs/operations.md#the-performance-budget).
  sqliteKeyedVsUnkeyed: { name: "SQLite keyed ÷ unkeyed server CPU", unit: "×", goal: undefined },
  postgresKeyedApiVsUnkeyed: { name: "PostgreSQL keyed ÷ unkeyed API node CPU", unit: "×", goal: undefined },
  postgresKeyedDatabaseVsUnkeyed: { name: "PostgreSQL keyed ÷ unkeyed database CPU", unit: "×", goal: undefined }
}

const BATCH = 100
const CONCURRENCY = 32
const BATCH_CONCURRENCY = 8
/** The keyed comparison's warm-up: the keyed path's own functions compiled, in a few seconds. */
const KEYED_WARMUP_REQUESTS = 1_000

/**
 * Our server's CPU per transfer with an Idempotency-Key of its own on every request, on a database
 * of its own (`databaseOf(name)`), beside `unkeyed` (measured alike by profile.js, or here first
 * when not given).
 */
const keyedAndUnkeyed = async (databaseOf, seconds, dataDir, unkeyed) => {
  const cpu = { seconds, warmup: 1, warmupRequests: KEYED_WARMUP_REQUESTS, concurrency: CONCURRENCY, dataDir }
  const plain = unkeyed ?? (await cpuPerTransfer(await databaseOf("unkeyed"), cpu))
  const keyed = await cpuPerTransfer(await databaseOf("keyed"), { ...cpu, keyed: true })
  return { unkeyed: plain, keyed }
}

/** The keyed comparison's line of figures. */
const keyedLine = (store, { unkeyed, keyed }) =>
  `${store.padEnd(9)} keyed (a new Idempotency-Key a request) ${keyed.perSecond.toFixed(0)}/s (failed ${keyed.failed}), server CPU ${keyed.serverMs.toFixed(2)} ms${keyed.databaseMs === undefined ? "" : `, database ${keyed.databaseMs.toFixed(2)} ms`}; unkeyed ${unkeyed.perSecond.toFixed(0)}/s, server CPU ${unkeyed.serverMs.toFixed(2)} ms${unkeyed.databaseMs === undefined ? "" : `, database ${unkeyed.databaseMs.toFixed(2)} ms`}`

/** The commit measured (and whether the tree differs from it), for the note the output goes into. */
const measuredCommit = () => {
  try {
    const git = (...args) => execFileSync("git", args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim()
    return `${git("rev-parse", "--short", "HEAD")}${git("status", "--porcelain", "--untracked-files=no") === "" ? "" : " with uncommitted changes"}`
  } catch {
    return "an unknown commit"
  }
}

const loadAverage = () =>
  os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(" ")

const shown = (value, unit) =>
  unit === "/s"
    ? `${Math.round(value).toLocaleString("en-US")}/s`
    : unit === "ms"
      ? `${value.toFixed(value >= 10 ? 0 : 2)} ms`
      : `${value.toFixed(2)}×`

/** The webhooks bench's phases, kept short: 5,000 deliveries, 200 events/s for 5 s, a replay of 100. */
const webhookOptions = { events: 5000, rates: [200], seconds: 5, replay: 100, cross: false, volume: 0, packages: undefined }

const sqliteFigures = async (seconds, figures) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "issuing-bench-budget-"))
  try {
    const file = (name) => ({ kind: "sqlite", filename: path.join(dir, name) })
    const single = await httpRun(file("single.db"), seconds, CONCURRENCY)
    const bare = await bareRun(file("bare.db"), seconds, CONCURRENCY)
    const lean = await leanRun(file("lean.db"), seconds, CONCURRENCY)
    const batched = await httpRun(file("batch.db"), seconds, BATCH_CONCURRENCY, BATCH)
    console.log(
      `sqlite    transfers/s: ours ${single.perSecond.toFixed(0)} (failed ${single.failed}), bare ${bare.perSecond.toFixed(0)}, lean ${lean.perSecond.toFixed(0)}, batches of ${BATCH} ${batched.perSecond.toFixed(0)} (failed ${batched.failed})`
    )
    figures.set("sqliteTransfersVsLean", single.perSecond / lean.perSecond)
    figures.set("sqliteBatchVsSingle", batched.perSecond / single.perSecond)
    figures.set("sqliteBatched", batched.perSecond)
    const webhooks = await benchStore("sqlite", file("webhooks.db"), webhookOptions)
    figures.set("sqliteDeliveriesVsBare", webhooks.deliveriesPerSecond / webhooks.barePerSecond)
    const keyed = await keyedAndUnkeyed(async (name) => file(`${name}.db`), seconds)
    console.log(keyedLine("sqlite", keyed))
    figures.set("sqliteKeyedVsUnkeyed", keyed.keyed.serverMs / keyed.unkeyed.serverMs)
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

const postgresFigures = async (seconds, figures) => {
  const server = await startPostgres()
  try {
    const database = async (name) => ({ kind: "postgres", url: await createDatabase(server.adminUrl, name) })
    const single = await httpRun(await database("issuing_budget_single"), seconds, CONCURRENCY)
    const bare = await bareRun(await database("issuing_budget_bare"), seconds, CONCURRENCY)
    const leanHttp = await leanRun(await database("issuing_budget_lean_http"), seconds, CONCURRENCY)
    const batched = await httpRun(await database("issuing_budget_batch"), seconds, BATCH_CONCURRENCY, BATCH)
    console.log(
      `postgres  transfers/s: ours ${single.perSecond.toFixed(0)} (failed ${single.failed}), bare ${bare.perSecond.toFixed(0)}, lean ${leanHttp.perSecond.toFixed(0)}, batches of ${BATCH} ${batched.perSecond.toFixed(0)} (failed ${batched.failed})`
    )
    figures.set("postgresTransfersVsLean", single.perSecond / leanHttp.perSecond)
    figures.set("postgresBatchVsSingle", batched.perSecond / single.perSecond)
    figures.set("postgresBatched", batched.perSecond)
    // Both servers run with profile.js's DEFAULT_NODE_FLAGS (the young generation an API node runs
    // with), after a warm-up of 1 s and at least WARMUP_REQUESTS requests (their JIT's, profile.js).
    const cpu = { seconds, warmup: 1, concurrency: CONCURRENCY, dataDir: server.dataDir }
    const ours = await cpuPerTransfer(await database("issuing_budget_cpu"), cpu)
    const lean = await cpuPerTransfer(await database("issuing_budget_lean"), { ...cpu, lean: true })
    console.log(
      `postgres  CPU per transfer: API node ${ours.serverMs.toFixed(2)} ms (lean server ${lean.serverMs.toFixed(2)}), PostgreSQL ${ours.databaseMs?.toFixed(2) ?? "-"} ms (lean ${lean.databaseMs?.toFixed(2) ?? "-"} ms)`
    )
    figures.set("apiCpuPerTransfer", ours.serverMs)
    if (ours.databaseMs !== undefined && lean.databaseMs !== undefined) figures.set("databaseCpuVsLean", ours.databaseMs / lean.databaseMs)
    const webhooks = await benchStore("postgres", await database("issuing_budget_webhooks"), { ...webhookOptions, dataDir: server.dataDir })
    figures.set("postgresDeliveriesVsBare", webhooks.deliveriesPerSecond / webhooks.barePerSecond)
    figures.set("postgresWebhookP99", webhooks.latencies.find((l) => l.rate === 200).p99Ms)
    const keyed = await keyedAndUnkeyed((name) => database(`issuing_budget_${name}`), seconds, server.dataDir, ours)
    console.log(keyedLine("postgres", keyed))
    figures.set("postgresKeyedApiVsUnkeyed", keyed.keyed.serverMs / keyed.unkeyed.serverMs)
    if (keyed.keyed.databaseMs !== undefined && keyed.unkeyed.databaseMs !== undefined)
      figures.set("postgresKeyedDatabaseVsUnkeyed", keyed.keyed.databaseMs / keyed.unkeyed.databaseMs)
  } finally {
    await server.stop()
  }
}

/** Entry point for bench/run.js. */
export async function run(args) {
  const seconds = Number(option(args, "seconds", "4"))
  const stores = option(args, "store", "sqlite,postgres").split(",")
  const startedAt = new Date()
  console.log(
    `budget: issue 46's goals, ${measuredCommit()}, ${seconds} s per measurement, ${os.cpus().length} cores, load average ${loadAverage()}`
  )
  const figures = new Map()
  if (stores.includes("sqlite")) await sqliteFigures(seconds, figures)
  if (stores.includes("postgres")) await postgresFigures(seconds, figures)
  console.log(
    `budget   ${startedAt.toISOString()}, ${((Date.now() - startedAt.getTime()) / 1000).toFixed(0)} s, load average ${loadAverage()} at the end`
  )
  let met = 0
  let goals = 0
  for (const [key, { name, unit, goal, atMost }] of Object.entries(GOALS)) {
    const value = figures.get(key)
    if (value === undefined) continue
    const verdict = goal === undefined ? "" : (atMost ? value <= goal : value >= goal) ? "met" : "MISSED"
    if (goal !== undefined) goals++
    if (verdict === "met") met++
    const target = goal === undefined ? "(no goal)" : `${atMost ? "≤" : "≥"} ${shown(goal, unit)}`
    console.log(`  ${name.padEnd(40)} ${shown(value, unit).padStart(10)}   goal ${target.padEnd(12)} ${verdict}`)
  }
  console.log(`  ${met} of ${goals} goals met`)
}
