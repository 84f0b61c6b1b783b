// `npm run bench -- profile [--store=postgres,sqlite] [--seconds=10] [--concurrency=32] [--batch=100] [--warmup=3] [--warmup-requests=5000] [--runs=1] [--cpu-prof] [--flame] [--count] [--top=25] [--lean=off] [--floor[=db|=both]] [--against=<dist/index.js>[,<dist/index.js>…]] [--node-flags="--max-semi-space-size=64"] [--idempotency-keys]`
//
// Where the Node server's CPU goes under the transfers bench's load (issue 24;
// docs/operations.md, "Where a PostgreSQL transfer's time goes"). The platform serves
// `POST /v1/transfers` in a process of its own (support/profiledServer.js); the load — the same
// keep-alive book transfers at concurrency 32 as `bench -- transfers` — comes from a worker thread of
// this process. After a warm-up, the server's CPU time over the load (user + system, from
// /proc/<pid>/stat) divided by the transfers it answered is the figure printed: CPU ms per request,
// which holds still on a shared machine better than rates do. Then the same for the lean baseline
// (support/bareServer.js over support/leanLedger.js, one plpgsql call per transfer), driven alike;
// with --floor, then the framework alone (support/floorServer.js: an @effect/platform HttpApi with
// one schema-decoded endpoint and no database), the least any server built on it pays a request.
// --floor=db (PostgreSQL only) serves the same floor with ONE @effect/sql-pg statement per request
// (an INSERT of a transfer-shaped row, through a pool of 10 like ours) on a database of the bench's
// embedded server, at the same concurrency: the least an HttpApi + @effect/sql server pays a request
// that waits for the database; --floor=both runs the two floors, the bare one first.
//
// --cpu-prof also records a V8 CPU profile of the server over the same window (through
// node:inspector, started after the warm-up; the profile's own cost is in that run's CPU figure, so
// compare CPU figures of runs without it) and prints its self time grouped by package, by phase of
// the request (the innermost frame of each sample that a phase rule below recognises, so a schema
// decode called by a handler counts as schema work, and the fiber loop is its own line) and the
// `--top` functions. The .cpuprofile file is kept (path printed) for a viewer. Our server and the
// floor are profiled over the load window; the lean server over its whole life.
//
// --count then drives our server (and the floor, and the build --against) for another window with
// counters installed (support/counters.js) and prints, per request: Effect operations by kind and
// by origin (the source of the function each runs: `acquireUseRelease`, `onExit`, our closures), the
// fibers that ran them, FiberRef writes, fiber suspensions, socket writes (HTTP, and the others:
// the pg driver's), pg statements by their first words, and the bytes allocated with the functions
// allocating most. The counters patch the process (it runs slower): read CPU figures from runs
// without --count.
//
// Each server is warmed up for --warmup seconds AND until it has answered --warmup-requests
// requests (transfers, in a batch run; at most WARMUP_MAX_SECONDS): V8 optimizes a server's functions as they get hot, and
// ours has many — in its first 1,000 requests it compiled 200 functions in 4 s, with
// the compilations (on V8's worker threads) doubling its CPU per request, and it settles after
// 3,000–5,000 (docs/decisions.md, "A fifth round: the floor with a database"). A warm-up in
// seconds alone measured ours mid-compilation whenever the machine was slow, and the small floor
// already compiled.
//
// Every server (ours, the builds --against, lean, the floors) runs with the same Node flags,
// `--node-flags` (default `--max-semi-space-size=64`, the young generation docs/operations.md
// says to run an API node with, "The API node's cost per request"; `--node-flags=` for Node's
// default). Each run prints the server's garbage collections per 1,000 requests beside its CPU.
//
// --idempotency-keys: every request carries an Idempotency-Key of its own (a new UUID), as a
// careful client sends them; the lean server ignores it.
//
// --against takes several builds, comma-separated (each named by the folder holding its
// `packages/`, e.g. a detached worktree of an older commit): each is served the same way after
// ours in every run, the order turned by one each run so no build always goes first, and with
// --runs above 1 the summary prints every build's rate and CPU per request ÷ the first build's of
// the same run — the ratios a load that moves between runs cancels out of (docs/decisions.md,
// "SQLite: what the last round cost").
import * as fs from "node:fs"
import { spawn } from "node:child_process"
import * as os from "node:os"
import * as path from "node:path"
import { Worker } from "node:worker_threads"
import * as crypto from "node:crypto"
import { prepareLean } from "./support/leanLedger.js"
import { createDatabase, startPostgres } from "./support/postgres.js"
import { option } from "./support/common.js"
import { flameLines } from "./support/flame.js"

/** The least share of the busy samples a path of the --flame graph shows. */
const FLAME_MIN_PERCENT = 2

const load = () =>
  os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(" ")

const TICKS_PER_SECOND = 100

/** The process's user and system CPU time so far, ms (Linux /proc; CLK_TCK is 100). */
const cpuMsOf = (pid) => {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  // Fields 14 and 15 of stat(5), counted from the state (field 3) here.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND
}

/** The CPU time so far (ms) of a process's main thread (its first task: SQLite's writer thread and libuv's pool are the others). */
/** The process's read and write system calls so far, and its user and system CPU ms apart (/proc/<pid>/io, /proc/<pid>/stat). */
const syscallsOf = (pid) => {
  const io = Object.fromEntries(
    fs
      .readFileSync(`/proc/${pid}/io`, "utf8")
      .trim()
      .split("\n")
      .map((line) => line.split(": "))
  )
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return {
    reads: Number(io.syscr),
    writes: Number(io.syscw),
    userMs: (Number(fields[11]) * 1000) / TICKS_PER_SECOND,
    systemMs: (Number(fields[12]) * 1000) / TICKS_PER_SECOND
  }
}

/** The main thread's read and write system calls so far (/proc/<pid>/task/<pid>/io): the rest of the process's are its other threads' (SQLite's writer thread above all). */
const mainThreadSyscallsOf = (pid) => {
  const io = Object.fromEntries(
    fs
      .readFileSync(`/proc/${pid}/task/${pid}/io`, "utf8")
      .trim()
      .split("\n")
      .map((line) => line.split(": "))
  )
  return { reads: Number(io.syscr), writes: Number(io.syscw) }
}

const mainThreadCpuMs = (pid) => {
  const stat = fs.readFileSync(`/proc/${pid}/task/${pid}/stat`, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND
}

/** The CPU time so far (ms) of an embedded PostgreSQL server: its postmaster and every process it started. */
export const postgresCpuMs = (dataDir) => {
  const postmaster = Number(fs.readFileSync(path.join(dataDir, "postmaster.pid"), "utf8").split("\n")[0])
  let total = 0
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8")
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      if (Number(entry) === postmaster || Number(fields[1]) === postmaster) total += cpuMsOf(Number(entry))
    } catch {
      // A process that ended meanwhile.
    }
  }
  return total
}

/** The transfers bench's load generator (bench/transfers.js, role "driver") for `seconds`. */
const drive = (server, seconds, concurrency, batch = 0) =>
  new Promise((resolve, reject) => {
    const worker = new Worker(new URL("./transfers.js", import.meta.url), {
      workerData: {
        role: "driver",
        baseUrl: `http://127.0.0.1:${server.port}`,
        apiKey: server.apiKey,
        programId: server.programId,
        accounts: server.accounts,
        seconds,
        concurrency,
        batch,
        idempotencyKeys
      }
    })
    worker.once("message", (result) => worker.terminate().then(() => resolve(result)))
    worker.once("error", reject)
  })

/** Whether every request carries an Idempotency-Key of its own (`--idempotency-keys`). */
let idempotencyKeys = false

/** The Node flags every served process runs with (`--node-flags`). */
export const DEFAULT_NODE_FLAGS = "--max-semi-space-size=64"
let nodeFlags = DEFAULT_NODE_FLAGS.split(" ")

/** The default requests of a warm-up (`--warmup-requests`), and the longest a warm-up runs. */
export const WARMUP_REQUESTS = 5000
const WARMUP_MAX_SECONDS = 60

/**
 * Drives `server` for `seconds`, then on in windows of 2 s until it has answered `requests`
 * (its JIT's warm-up, above), for at most WARMUP_MAX_SECONDS; resolves with the requests answered.
 */
const warmUp = async (server, { seconds, requests, concurrency, batch = 0 }) => {
  const started = Date.now()
  const first = await drive(server, seconds, concurrency, batch)
  let answered = first.ok + first.failed
  while (answered < requests && Date.now() - started < WARMUP_MAX_SECONDS * 1000) {
    const more = await drive(server, 2, concurrency, batch)
    answered += more.ok + more.failed
  }
  return answered
}

/** Starts support/profiledServer.js over `target`; resolves with its child process and what it printed. */
const startServer = (target) =>
  new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [...nodeFlags, path.join(import.meta.dirname, "support", "profiledServer.js"), JSON.stringify(target)],
      {
        stdio: ["ignore", "pipe", "inherit", "ipc"]
      }
    )
    let out = ""
    child.stdout.on("data", (data) => {
      out += String(data)
      const line = out.indexOf("\n")
      if (line >= 0) resolve({ child, ...JSON.parse(out.slice(0, line)) })
    })
    child.once("exit", (code) => reject(new Error(`server exited with ${code}`)))
  })

/**
 * Starts the lean baseline (support/bareServer.js over support/leanLedger.js, as `bench --
 * transfers` runs it) over `target`, with `--cpu-prof` into `profileDir` when given (written when
 * it exits).
 */
const startLean = async (target, profileDir) => {
  const programId = crypto.randomUUID()
  const accounts = await prepareLean(target, programId, 64)
  const flags = profileDir === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${profileDir}`]
  const child = spawn(
    process.execPath,
    [
      ...nodeFlags,
      ...flags,
      path.join(import.meta.dirname, "support", "bareServer.js"),
      JSON.stringify({ ...target, programId, lean: true })
    ],
    { stdio: ["ignore", "pipe", "inherit"] }
  )
  const port = await new Promise((resolve, reject) => {
    child.stdout.once("data", (data) => resolve(Number(String(data).trim())))
    child.once("exit", (code) => reject(new Error(`lean server exited with ${code}`)))
  })
  return { child, port, apiKey: "-", programId, accounts }
}

/**
 * Starts the framework's floor (support/floorServer.js: an HttpApi with one endpoint and no
 * database; with `url`, one @effect/sql-pg statement per request on that database).
 */
const startFloor = async (count, url) => {
  const child = spawn(
    process.execPath,
    [...nodeFlags, path.join(import.meta.dirname, "support", "floorServer.js"), JSON.stringify({ count, url })],
    {
      stdio: ["ignore", "pipe", "inherit", "ipc"]
    }
  )
  const port = await new Promise((resolve, reject) => {
    child.stdout.once("data", (data) => resolve(Number(String(data).trim())))
    child.once("exit", (code) => reject(new Error(`floor server exited with ${code}`)))
  })
  return { child, port, apiKey: "-", programId: "-", accounts: Array.from({ length: 64 }, () => crypto.randomUUID()) }
}

/** Sends the server a profiler command and waits for its answer. */
const ask = (child, message) =>
  new Promise((resolve) => {
    child.once("message", resolve)
    child.send(message)
  })

const stopServer = async (child) => {
  const exited = new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once("exit", resolve)))
  child.kill("SIGTERM")
  await exited
}

// ---- reading a .cpuprofile ------------------------------------------------------------------

/** The package a frame's url belongs to. */
const packageOf = (url, functionName) => {
  if (url === "") {
    if (functionName === "(garbage collector)") return "GC"
    if (functionName === "(idle)") return "(idle)"
    if (functionName === "(program)") return "(program: V8 and native)"
    return "native / builtins"
  }
  if (url.startsWith("node:")) return "node internals"
  const dist = url.match(/packages\/([^/]+)\/(?:dist|src)\//)
  if (dist) return `@issuing/${dist[1]}`
  const modules = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)\//g)
  if (modules) {
    const name = modules.at(-1).slice("node_modules/".length, -1)
    if (name === "pg" || name.startsWith("pg-") || name === "postgres-array" || name === "postgres-date") return "pg (driver)"
    return name
  }
  return "other"
}

// Phase rules, tried on each sample's frames from the innermost outward; the first match names
// the sample's phase. Rules look at the url (and the function name for Node's JSON and crypto).
const PHASES = [
  ["JSON parse/stringify", (f) => f.url === "" && /^(parse|stringify|JSONParse|JSONStringify)$/.test(f.functionName)],
  ["crypto (ids, HMAC)", (f) => /node:internal\/crypto|\/uuid\//.test(f.url)],
  ["schema decode/encode", (f) => /effect\/dist\/(esm|cjs)\/(Schema|ParseResult|SchemaAST|internal\/schema)/.test(f.url)],
  ["pg driver", (f) => /node_modules\/(pg|pg-[a-z-]+|postgres-[a-z]+)\//.test(f.url)],
  ["better-sqlite3 (SQLite's own work)", (f) => /better-sqlite3/.test(f.url)],
  ["@effect/sql client", (f) => /@effect\/sql(-pg)?\//.test(f.url)],
  ["store (SQL, posting)", (f) => /packages\/store-(pg|sqlite)\//.test(f.url) || /core\/dist\/sql\//.test(f.url)],
  ["change feed", (f) => /core\/dist\/changes\//.test(f.url)],
  ["auth", (f) => /core\/dist\/access\/(Authentication|Access|Secrets|SqlAccessStore)\.js/.test(f.url)],
  ["rate limit", (f) => /core\/dist\/access\/RateLimiter\.js/.test(f.url)],
  ["idempotency", (f) => /core\/dist\/idempotency\//.test(f.url)],
  ["ledger service", (f) => /core\/dist\/(ledger|events|platform)\//.test(f.url)],
  ["body read and checks", (f) => /http\/dist\/middleware\/RequestBody\.js/.test(f.url)],
  ["envelope, errors", (f) => /http\/dist\/errors\.js/.test(f.url)],
  ["handler, api", (f) => /http\/dist\/(handlers|api)\//.test(f.url)],
  ["pipeline (route, scope)", (f) => /http\/dist\/middleware\//.test(f.url)],
  [
    "HttpApi, router, middleware",
    (f) => /@effect\/platform\/dist\/(esm|cjs)\/(HttpApi|HttpRouter|HttpMiddleware|internal\/http(Router|Middleware|App))/.test(f.url)
  ],
  ["request, response objects", (f) => /@effect\/platform(-node)?\//.test(f.url)],
  [
    "logging, tracing, annotations",
    (f) =>
      /effect\/dist\/(esm|cjs)\/internal\/(tracer|logger|logSpan|fiberRefs|core-effect)/.test(f.url) &&
      /[Ss]pan|[Ll]og|annotat|[Tt]race/.test(f.functionName)
  ],
  ["Effect runtime (fibers, scheduling)", (f) => /effect\/dist\//.test(f.url)],
  ["node http, net, streams", (f) => f.url.startsWith("node:")],
  ["GC", (f) => f.functionName === "(garbage collector)"]
]

/** Self time (ms) of a profile by package, by phase and by function. */
export const aggregate = (profile) => {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const parentOf = new Map()
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id)
  const selfMs = new Map()
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]
    selfMs.set(id, (selfMs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000)
  }
  const phaseOf = (id) => {
    for (let at = id; at !== undefined; at = parentOf.get(at)) {
      const frame = byId.get(at).callFrame
      for (const [phase, matches] of PHASES) if (matches(frame)) return phase
    }
    return "other"
  }
  // Stopping the profiler serializes the profile inside the sampled process: not the server's work.
  const isProfiler = (id) => {
    for (let at = id; at !== undefined; at = parentOf.get(at)) if (byId.get(at).callFrame.url === "node:inspector") return true
    return false
  }
  const byPackage = new Map()
  const byPhase = new Map()
  const byFunction = new Map()
  let busyMs = 0
  for (const [id, ms] of selfMs) {
    const frame = byId.get(id).callFrame
    if (frame.functionName === "(idle)" || isProfiler(id)) continue
    busyMs += ms
    const pkg = packageOf(frame.url, frame.functionName)
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + ms)
    const phase = phaseOf(id)
    byPhase.set(phase, (byPhase.get(phase) ?? 0) + ms)
    const name = `${frame.functionName || "(anonymous)"} ${frame.url.replace(/^.*node_modules\//, "").replace(/^.*packages\//, "")}:${frame.lineNumber + 1}`
    byFunction.set(name, (byFunction.get(name) ?? 0) + ms)
  }
  return { busyMs, byPackage, byPhase, byFunction }
}

const printTable = (title, entries, busyMs, perRequest, limit = Number.POSITIVE_INFINITY) => {
  console.log(`  ${title}`)
  const sorted = [...entries].sort((a, b) => b[1] - a[1]).slice(0, limit)
  for (const [name, ms] of sorted) {
    console.log(`    ${((100 * ms) / busyMs).toFixed(1).padStart(5)} %  ${(ms / perRequest).toFixed(3).padStart(7)} ms/req  ${name}`)
  }
}

// ---- the run ----------------------------------------------------------------------------------

/** Prints the counts of a --count window, per request. */
const printCounts = (counts, requests, top) => {
  const per = (n) => (n / requests).toFixed(n / requests < 10 ? 2 : 1)
  const opsTotal = Object.values(counts.ops).reduce((a, b) => a + b, 0)
  console.log(
    `  per request: ${per(opsTotal)} Effect operations in ${per(counts.fibers)} fibers, ${per(counts.fiberRefSets)} FiberRef writes, ${per(counts.suspensions)} suspensions`
  )
  console.log(
    `    operations: ${Object.entries(counts.ops)
      .sort((a, b) => b[1] - a[1])
      .map(([op, n]) => `${op} ${per(n)}`)
      .join(", ")}`
  )
  console.log("    operations by origin (the source of the function each runs):")
  for (const [origin, n] of Object.entries(counts.origins).slice(0, top)) console.log(`      ${per(n).padStart(6)}  ${origin}`)
  console.log("    FiberRef writes by FiberRef (named by its initial value):")
  for (const [name, n] of Object.entries(counts.fiberRefWriters).slice(0, top)) console.log(`      ${per(n).padStart(6)}  ${name}`)
  const w = counts.writes
  console.log(`    socket writes: HTTP ${per(w.http)} (${per(w.httpBytes)} bytes), other (pg) ${per(w.other)} (${per(w.otherBytes)} bytes)`)
  const statements = Object.entries(counts.statements).sort((a, b) => b[1] - a[1])
  if (statements.length > 0) console.log(`    pg statements: ${statements.map(([text, n]) => `${per(n)} × ${text}`).join("; ")}`)
  console.log(
    `    allocated: ${(counts.allocatedBytes / requests / 1024).toFixed(1)} KB per request, the counting's own ${((counts.countingBytes ?? 0) / requests / 1024).toFixed(1)} KB left out (${counts.heapProfile}); most by`
  )
  for (const [name, bytes] of Object.entries(counts.allocatedBy).slice(0, top))
    console.log(`      ${(bytes / requests).toFixed(0).padStart(7)} B  ${name}`)
}

const oneStore = async (
  target,
  { seconds, concurrency, warmup, warmupRequests, cpuProf, flame, count, top, label, lean, floor, dataDir, http, batch }
) => {
  // The baselines take single transfers only; a batch run counts per transfer, not per request.
  const items = lean || floor ? 0 : batch
  const profileDir = lean && cpuProf ? fs.mkdtempSync(path.join(os.tmpdir(), "issuing-lean-profile-")) : undefined
  const counted = count && !lean
  const server = floor
    ? await startFloor(counted, target.url)
    : lean
      ? await startLean(target, profileDir)
      : await startServer({ ...target, ...(http === undefined ? {} : { http }), count: counted })
  let file = path.join(os.tmpdir(), `issuing-${label}-${process.pid}-${Date.now()}.cpuprofile`)
  let stopped = false
  try {
    const warmed = await warmUp(server, { seconds: warmup, requests: warmupRequests, concurrency, batch: items })
    const profiled = cpuProf && !lean
    if (profiled) await ask(server.child, { profile: "start" })
    // The lean server answers no control messages.
    if (!lean) await ask(server.child, { gc: "start" })
    const databaseBefore = dataDir === undefined ? 0 : postgresCpuMs(dataDir)
    const before = cpuMsOf(server.child.pid)
    const mainBefore = mainThreadCpuMs(server.child.pid)
    const callsBefore = syscallsOf(server.child.pid)
    const mainCallsBefore = mainThreadSyscallsOf(server.child.pid)
    const result = await drive(server, seconds, concurrency, items)
    const callsAfter = syscallsOf(server.child.pid)
    const mainCallsAfter = mainThreadSyscallsOf(server.child.pid)
    const cpuMs = cpuMsOf(server.child.pid) - before
    const mainMs = mainThreadCpuMs(server.child.pid) - mainBefore
    const databaseMs = dataDir === undefined ? undefined : postgresCpuMs(dataDir) - databaseBefore
    const gc = lean ? undefined : await ask(server.child, { gc: "stop" })
    if (profiled) await ask(server.child, { profile: "stop", file })
    if (profileDir !== undefined) {
      // The lean server's profile covers its whole life (warm-up included), written as it exits.
      await stopServer(server.child)
      stopped = true
      file = path.join(profileDir, fs.readdirSync(profileDir)[0])
    }
    const requests = result.ok + result.failed
    console.log(
      `${label.padEnd(9)} ${(result.ok / (result.elapsedMs / 1000)).toFixed(0).padStart(6)} transfers/s  server CPU ${(cpuMs / requests).toFixed(2)} ms/request (main thread ${(mainMs / requests).toFixed(2)})${databaseMs === undefined ? "" : `, PostgreSQL CPU ${(databaseMs / requests).toFixed(2)}`}  (${requests} requests after ${warmed} of warm-up, failed ${result.failed}${result.failed ? ` ${JSON.stringify(result.statuses)}` : ""}; load average ${load()})`
    )
    console.log(
      `          per request: ${((callsAfter.reads - callsBefore.reads) / requests).toFixed(2)} read and ${((callsAfter.writes - callsBefore.writes) / requests).toFixed(2)} write system calls (main thread ${((mainCallsAfter.reads - mainCallsBefore.reads) / requests).toFixed(2)} and ${((mainCallsAfter.writes - mainCallsBefore.writes) / requests).toFixed(2)}), CPU ${((callsAfter.userMs - callsBefore.userMs) / requests).toFixed(2)} ms user + ${((callsAfter.systemMs - callsBefore.systemMs) / requests).toFixed(2)} ms system`
    )
    if (gc !== undefined)
      console.log(
        `          garbage collection per 1,000 requests: ${((1000 * gc.scavenges) / requests).toFixed(1)} scavenges (${((1000 * gc.scavengeMs) / requests).toFixed(0)} ms), ${((1000 * gc.markCompacts) / requests).toFixed(1)} mark-compacts and steps (${((1000 * gc.markCompactMs) / requests).toFixed(0)} ms); young generation ${(gc.newSpaceBytes / 1048576).toFixed(1)} MB, old generation ${(gc.oldBefore / 1048576).toFixed(1)} → ${(gc.oldAfter / 1048576).toFixed(1)} MB`
      )
    if (cpuProf) {
      const { busyMs, byPackage, byPhase, byFunction } = aggregate(JSON.parse(fs.readFileSync(file, "utf8")))
      console.log(`  profile ${file}: ${(busyMs / requests).toFixed(2)} ms of samples per request (idle left out)`)
      printTable("by package", byPackage, busyMs, requests)
      printTable("by phase (innermost recognised frame)", byPhase, busyMs, requests)
      printTable(`top ${top} functions (self)`, byFunction, busyMs, requests, top)
      if (flame) {
        console.log(`  flame graph (inclusive share of the busy samples, paths of ${FLAME_MIN_PERCENT} % and more)`)
        for (const line of flameLines(JSON.parse(fs.readFileSync(file, "utf8")), { minPercent: FLAME_MIN_PERCENT }))
          console.log(`  ${line}`)
      }
    }
    if (counted) {
      await ask(server.child, { count: "start" })
      const countedRun = await drive(server, Math.min(seconds, 5), concurrency, items)
      const counts = await ask(server.child, { count: "stop" })
      console.log(`  counted over ${countedRun.ok + countedRun.failed} more requests (failed ${countedRun.failed}):`)
      printCounts(counts, countedRun.ok + countedRun.failed, top)
    }
    return { cpuMs: cpuMs / requests, mainMs: mainMs / requests, perSecond: result.ok / (result.elapsedMs / 1000) }
  } finally {
    if (!stopped) await stopServer(server.child)
  }
}

/**
 * One measured window, for `bench -- budget`: our server (or the lean baseline, `lean: true`) over
 * `target` under the transfers load for `seconds` after `warmup` seconds, as `oneStore` measures
 * it without a profile: `{ perSecond, failed, serverMs, databaseMs }`, the CPU per request of the
 * server's process and (with the embedded server's `dataDir`) of every PostgreSQL process.
 */
export const cpuPerTransfer = async (
  target,
  { seconds, warmup, warmupRequests = WARMUP_REQUESTS, concurrency, lean = false, dataDir, keyed = false }
) => {
  const server = lean ? await startLean(target) : await startServer(target)
  // `keyed`: every request of the warm-up and the window carries an Idempotency-Key of its own.
  const keyedBefore = idempotencyKeys
  idempotencyKeys = keyed
  try {
    await warmUp(server, { seconds: warmup, requests: warmupRequests, concurrency })
    const databaseBefore = dataDir === undefined ? 0 : postgresCpuMs(dataDir)
    const before = cpuMsOf(server.child.pid)
    const result = await drive(server, seconds, concurrency)
    const requests = Math.max(1, result.ok + result.failed)
    return {
      perSecond: result.ok / (result.elapsedMs / 1000),
      failed: result.failed,
      serverMs: (cpuMsOf(server.child.pid) - before) / requests,
      databaseMs: dataDir === undefined ? undefined : (postgresCpuMs(dataDir) - databaseBefore) / requests
    }
  } finally {
    idempotencyKeys = keyedBefore
    await stopServer(server.child)
  }
}

/** Entry point for bench/run.js. */
export async function run(args) {
  const stores = option(args, "store", "postgres,sqlite").split(",")
  const options = {
    seconds: Number(option(args, "seconds", "10")),
    concurrency: Number(option(args, "concurrency", "32")),
    warmup: Number(option(args, "warmup", "3")),
    warmupRequests: Number(option(args, "warmup-requests", String(WARMUP_REQUESTS))),
    cpuProf: args.includes("--cpu-prof") || args.includes("--flame"),
    // --flame: with the profile, its flame graph as text (support/flame.js).
    flame: args.includes("--flame"),
    count: args.includes("--count"),
    top: Number(option(args, "top", "25")),
    // --batch=100: our server driven with POST /v1/transfers/batch of that many transfers; figures per transfer.
    batch: Number(option(args, "batch", "0")),
    // --against=<path to another build's @issuing/http dist/index.js>[,…]: that build (or each of
    // those) served the same way right after ours, run by run (say the tree before a change, copied aside).
    against: option(args, "against", undefined)?.split(",")
  }
  const runs = Number(option(args, "runs", "1"))
  nodeFlags = option(args, "node-flags", DEFAULT_NODE_FLAGS).split(" ").filter(Boolean)
  idempotencyKeys = args.includes("--idempotency-keys")
  // --lean=off: our server alone, without the lean baseline's figure after it.
  const withLean = option(args, "lean", "on") !== "off"
  // --floor: then the framework alone (support/floorServer.js), the CPU no change of ours can save.
  // --floor=db: the framework with one @effect/sql-pg statement a request (PostgreSQL only); --floor=both: the two.
  const floorKind = args.includes("--floor") ? "bare" : option(args, "floor", undefined)
  const floorKinds = floorKind === undefined ? [] : floorKind === "both" ? ["bare", "db"] : [floorKind]
  console.log(
    `profile: the server's CPU per ${options.batch > 0 ? `transfer in POST /v1/transfers/batch of ${options.batch}` : "POST /v1/transfers"}, concurrency ${options.concurrency}, ${options.seconds}s after a warm-up of ${options.warmup}s and ${options.warmupRequests} requests, ${os.cpus().length} cores, server Node flags "${nodeFlags.join(" ")}", load average ${load()}`
  )
  const figures = new Map()
  for (let round = 1; round <= runs; round++) {
    for (const kind of stores) {
      const both = async (targetOf) => {
        const ours = await oneStore(await targetOf("issuing_bench_profile", "profile.db"), { ...options, label: kind })
        figures.set(kind, [...(figures.get(kind) ?? []), ours])
        const builds = options.against ?? []
        // Several builds: the order turned by one each run (the first build is the ratios' reference).
        for (let i = 0; i < builds.length; i++) {
          const at = builds.length > 1 ? (i + round - 1) % builds.length : i
          const label = builds.length > 1 ? buildName(builds[at]) : "against"
          const other = await oneStore(await targetOf(`issuing_bench_profile_against${at}`, `against${at}.db`), {
            ...options,
            label,
            http: builds[at]
          })
          figures.set(`${kind} ${label}`, [...(figures.get(`${kind} ${label}`) ?? []), other])
        }
        if (withLean) {
          const lean = await oneStore(await targetOf("issuing_bench_profile_lean", "lean.db"), { ...options, label: "lean", lean: true })
          figures.set(`${kind} lean`, [...(figures.get(`${kind} lean`) ?? []), lean])
        }
        for (const floorOf of floorKinds) {
          if (floorOf === "db" && kind !== "postgres") continue
          const label = floorOf === "db" ? "floor+db" : "floor"
          const target = floorOf === "db" ? await targetOf("issuing_bench_profile_floor", "floor.db") : { kind }
          const floor = await oneStore(target, { ...options, label, floor: true, dataDir: floorOf === "db" ? options.dataDir : undefined })
          figures.set(`${kind} ${label}`, [...(figures.get(`${kind} ${label}`) ?? []), floor])
        }
      }
      if (kind === "postgres") {
        const pg = await startPostgres()
        try {
          options.dataDir = pg.dataDir
          await both(async (database) => ({ kind, url: await createDatabase(pg.adminUrl, database) }))
        } finally {
          await pg.stop()
        }
      } else {
        options.dataDir = undefined
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "issuing-profile-"))
        try {
          await both(async (_, file) => ({ kind, filename: path.join(dir, file) }))
        } finally {
          fs.rmSync(dir, { recursive: true, force: true })
        }
      }
    }
  }
  if (runs > 1) {
    const list = (values, digits) => values.map((v) => v.toFixed(digits)).join("  ")
    for (const [kind, values] of figures)
      console.log(
        `  ${kind.padEnd(9)} server CPU ms/request: ${list(
          values.map((v) => v.cpuMs),
          2
        )}  (main thread ${list(
          values.map((v) => v.mainMs),
          2
        )}); transfers/s: ${list(
          values.map((v) => v.perSecond),
          0
        )}`
      )
    const builds = options.against ?? []
    if (builds.length > 1) {
      for (const kind of stores) {
        const reference = figures.get(`${kind} ${buildName(builds[0])}`)
        console.log(`  ÷ ${buildName(builds[0])} of the same run, ${kind}: transfers/s, server CPU per request`)
        for (const [name, values] of figures) {
          if (!name.startsWith(kind)) continue
          const ratios = (field) =>
            list(
              values.map((v, run) => v[field] / reference[run][field]),
              2
            )
          console.log(`    ${name.padEnd(24)} ${ratios("perSecond")}   ${ratios("cpuMs")}`)
        }
      }
    }
  }
}

/** A build's name in the figures: the folder holding its `packages/` (`/work/bisect-7973bbc/packages/http/dist/index.js` → bisect-7973bbc). */
const buildName = (entry) => path.basename(entry.replace(/\/packages\/.*$/, ""))
