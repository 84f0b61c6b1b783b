// `npm run bench -- webhooks [--events=20000] [--rates=200,1000] [--seconds=5] [--replay=100000] [--concurrency=64] [--store=sqlite,postgres,postgres-notify-off] [--cross=1] [--volume=0] [--packages=DIR] [--statements=1] [--waits=1] [--explain=MS] [--cpu-prof=DIR] [--top=25]`
//
// Webhook delivery on SQLite and on PostgreSQL, in three kinds of process so that no measurement
// shares an event loop with what it measures: the platform (bench/support/webhookPlatform.js:
// createIssuing and its delivery worker, as `issuing serve` runs them), the loopback receiver
// (bench/support/webhookReceiver.js), and this one, which schedules the emits, drives the phases
// and reads the results. Each latency phase prints the event loop delay of every process.
//   1. throughput: `--events` deliveries queued, then the delivery worker drains them; deliveries/s
//      as the receiver sees them (and until every attempt is recorded), with the platform's CPU
//      per delivery (and its main thread's alone, its event loop's busy time, and each other thread's
//      CPU), the receiver's and, on PostgreSQL, every server process's (from /proc); with
//      `--cpu-prof=DIR`, a V8 CPU profile of the platform over this phase, kept in DIR and summed
//      up per delivery (by phase, then the `--top` functions);
//   2. latency: events emitted at each of `--rates` per second for `--seconds`, as the API writes
//      them (a transaction per change, made in the platform's process) in ticks of at least 5 ms:
//      at 200/s one event per transaction, at 1,000/s five; event created_at → receiver arrival,
//      p50/p99, split into the emitting commit (created_at → the platform sees its commit) and the
//      rest (commit → receiver: wake-up, claim, send); on PostgreSQL, how long the platform's
//      statements waited for a pooled connection, per pool (the store's, the claim's own);
//   3. baseline: a bare keep-alive node:http client (in this process) posting the same bodies to
//      the same receiver at the same concurrency, in the same run; ratio = worker deliveries/s ÷
//      bare requests/s;
//   4. replay: `--replay` events in the window, queued by one replay call; time to queue.
// `postgres-notify-off` is PostgreSQL with `notify: false` (ISSUING_PG_NOTIFY=off): no LISTEN/NOTIFY,
// the worker polls the queue. With `--cross=1` the latency events are emitted by a second platform
// process on the same database (another node: its commits do not ring this worker's doorbell), so
// the latency is what a worker on another node sees — the wake-up by NOTIFY, or the poll.
// `--volume=N` first fills the tables a delivery touches as N transfers would have (docs/webhooks.md):
// 3N events of the program a month old and N delivered attempts (another subscription's), written
// by one INSERT … SELECT each (the maintained counts' triggers run), so the latency and throughput
// are measured against indexes of that size; the ledger's tables do not take part in a delivery.
// `--statements=1` (PostgreSQL) counts the statements the throughput phase sent per delivery (from the
// worker's start until every attempt is recorded) and each latency phase per event, the most called
// first, with their execution time, buffers and WAL bytes (pg_stat_statements, loaded into the
// embedded server).
// `--waits=1` (PostgreSQL) samples the backends' wait events every 2 ms through each latency phase,
// those of every active backend and those of statements already running 20 ms (the tail), with the
// machine's runnable threads at each sample: what a slow emit waits for — a lock, the WAL, or a core.
// `--packages=DIR` runs the platform from another build (a node_modules directory holding
// @issuing/*, e.g. the code before a change), so two builds are measured by the same bench.
import { fork } from "node:child_process"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { monitorEventLoopDelay } from "node:perf_hooks"
import { createDatabase, resetStatements, sampleWaits, showExplained, startPostgres, statementsOf, walSyncs } from "./support/postgres.js"
import { aggregate, postgresCpuMs } from "./profile.js"
import { numberOption, option, percentile } from "./support/common.js"

let CONCURRENCY = 64

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** A child process running bench/support/`file`, driven over IPC: `call(op, args)` → its answer. */
const child = async (file, args = []) => {
  const subprocess = fork(new URL(`./support/${file}`, import.meta.url), args, { stdio: "inherit" })
  const ready = await new Promise((resolve, reject) => {
    subprocess.once("message", resolve)
    subprocess.once("exit", (code) => reject(new Error(`${file} exited with ${code}`)))
  })
  const waiting = new Map()
  let next = 0
  subprocess.on("message", (message) => {
    const answer = waiting.get(message.id)
    if (answer === undefined) return
    waiting.delete(message.id)
    if (message.error !== undefined) answer.reject(new Error(message.error))
    else answer.resolve(message.result)
  })
  return {
    ready,
    call: (op, callArgs = {}) =>
      new Promise((resolve, reject) => {
        const id = next++
        waiting.set(id, { resolve, reject })
        subprocess.send({ id, op, ...callArgs })
      }),
    kill: () => subprocess.kill()
  }
}

const platformProcess = (target, vaultKey, packages) =>
  child("webhookPlatform.js", [JSON.stringify({ target, vaultKey, concurrency: CONCURRENCY, packages })])

// ---- the bare client baseline ---------------------------------------------------------------------

const bare = async (url, bodies, concurrency) => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency })
  let next = 0
  const started = performance.now()
  const cpuBefore = process.cpuUsage()
  const lane = async () => {
    while (next < bodies.length) {
      const body = bodies[next++]
      await new Promise((resolve, reject) => {
        const request = http.request(
          url,
          {
            method: "POST",
            agent,
            headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) }
          },
          (response) => {
            response.resume()
            response.on("end", resolve)
          }
        )
        request.on("error", reject)
        request.end(body)
      })
    }
  }
  await Promise.all(Array.from({ length: concurrency }, lane))
  const elapsed = performance.now() - started
  const cpu = process.cpuUsage(cpuBefore)
  agent.destroy()
  return { perSecond: bodies.length / (elapsed / 1000), cpuPerRequestUs: (cpu.user + cpu.system) / bodies.length }
}

// ---- latency at one rate ----------------------------------------------------------------------------

/**
 * Emits `rate` events a second for `seconds` (a tick every max(1000 / rate, 5) ms, its events in one
 * transaction of the emitting platform process) and waits for every delivery: sorted latencies
 * created_at → receiver, and their two parts, created_at → the platform sees its commit, and that
 * → receiver. With `adminUrl` (PostgreSQL started with `commitTiming`), also the server's side: each
 * event's commit time as the server recorded it (`pg_xact_commit_timestamp`, taken as the commit
 * record is written, before its WAL flush) → receiver, created_at → that commit, and the WAL
 * fsyncs made meanwhile. Every process's event loop delay during the phase comes with it.
 */
const latencyAt = async ({ platform, emitter, receiver, programId, rate, seconds, adminUrl, statementsIn, waitsIn }) => {
  await receiver.call("reset", { arrivals: true })
  const tickMs = Math.max(1000 / rate, 5)
  const perTransaction = Math.max(1, Math.round((rate * tickMs) / 1000))
  const ticks = Math.round((seconds * 1000) / tickMs)
  const committedAt = new Map()
  const others = emitter === platform ? [platform, receiver] : [platform, emitter, receiver]
  await Promise.all(others.map((p) => p.call("phaseStart")))
  const loop = monitorEventLoopDelay({ resolution: 5 })
  loop.enable()
  const walBefore = adminUrl === undefined ? undefined : await walSyncs(adminUrl)
  if (statementsIn !== undefined) await resetStatements(adminUrl)
  const sampler = waitsIn === undefined ? undefined : await sampleWaits(adminUrl, waitsIn)
  const t0 = performance.now()
  const pending = []
  for (let i = 0; i < ticks; i++) {
    const wait = t0 + i * tickMs - performance.now()
    if (wait > 1) await sleep(wait)
    pending.push(
      emitter.call("emit", { programId, n: perTransaction }).then((emitted) => {
        for (const [id, createdMs, committedMs] of emitted) committedAt.set(id, { createdMs, committedMs })
      })
    )
  }
  await Promise.all(pending)
  const count = ticks * perTransaction
  const stats = await receiver.call("waitFor", { n: count, timeoutMs: 120_000 })
  if (stats.timedOut) throw new Error(`receiver got ${stats.count} of ${count}`)
  const waits = sampler === undefined ? undefined : await sampler.stop()
  loop.disable()
  const phases = await Promise.all(others.map((p) => p.call("phaseStop")))
  const processes = {
    platform: phases[0],
    emitter: phases.length === 3 ? phases[1] : undefined,
    receiver: phases.at(-1),
    bench: { loopP99Ms: loop.percentile(99) / 1e6, loopMaxMs: loop.max / 1e6 }
  }
  const statements = statementsIn === undefined ? undefined : await statementsOf(adminUrl, statementsIn, 1000)
  const walAfter = adminUrl === undefined ? undefined : await walSyncs(adminUrl)
  const serverCommittedMs = new Map(adminUrl === undefined ? [] : await platform.call("commitTimes", { ids: [...committedAt.keys()] }))
  const total = []
  const commit = []
  const afterCommit = []
  const toServerCommit = []
  const fromServerCommit = []
  for (const [id, arrivedMs] of stats.arrivals) {
    const event = committedAt.get(id)
    if (event === undefined) continue
    total.push(arrivedMs - event.createdMs)
    commit.push(event.committedMs - event.createdMs)
    afterCommit.push(arrivedMs - event.committedMs)
    const serverMs = serverCommittedMs.get(id)
    if (serverMs === undefined) continue
    toServerCommit.push(serverMs - event.createdMs)
    fromServerCommit.push(arrivedMs - serverMs)
  }
  const sort = (values) => Float64Array.from(values).sort()
  const wal =
    walBefore === undefined
      ? undefined
      : {
          fsyncs: walAfter.fsyncs - walBefore.fsyncs,
          fsyncMs: walAfter.fsyncMs - walBefore.fsyncMs,
          inits: walAfter.inits - walBefore.inits,
          initMs: walAfter.initMs - walBefore.initMs
        }
  return {
    rate,
    count,
    perTransaction,
    total: sort(total),
    commit: sort(commit),
    rest: sort(afterCommit),
    toServerCommit: sort(toServerCommit),
    fromServerCommit: sort(fromServerCommit),
    wal,
    statements,
    waits,
    processes
  }
}

// ---- one store --------------------------------------------------------------------------------------

/**
 * The four phases on one store (`target`, as `storeFor` takes it), printed under `label`; answers
 * `{ deliveriesPerSecond, barePerSecond, latencies: [{ rate, p50Ms, p99Ms }] }` (for `bench -- budget`).
 */
export const benchStore = async (label, target, options) => {
  const receiver = await child("webhookReceiver.js")
  const receiverUrl = `http://127.0.0.1:${receiver.ready.port}/hooks`
  const vaultKey = crypto.randomBytes(32).toString("base64")
  const platform = await platformProcess(target, vaultKey, options.packages)
  const emitter = options.cross ? await platformProcess(target, vaultKey, options.packages) : platform
  try {
    const { programId, subscriptionId, volumeMs } = await platform.call("setup", { receiverUrl, volume: options.volume })
    if (options.volume > 0) {
      console.log(
        `${label.padEnd(9)} volume   ${(3 * options.volume).toLocaleString("en-US")} events and ${options.volume.toLocaleString("en-US")} attempts written in ${(volumeMs / 1000).toFixed(0)} s`
      )
    }

    // 1. throughput: queue `events` deliveries, then start the worker and let it drain them.
    const bodies = []
    for (let done = 0; done < options.events; done += 500) {
      bodies.push(...(await platform.call("queue", { programId, n: Math.min(500, options.events - done) })))
    }
    await receiver.call("reset")
    const profileFile =
      options.cpuProfDir === undefined ? undefined : path.join(options.cpuProfDir, `webhooks-${label}-${Date.now()}.cpuprofile`)
    if (profileFile !== undefined) await platform.call("profileStart")
    await Promise.all([platform.call("phaseStart"), receiver.call("phaseStart")])
    const databaseBefore = options.dataDir === undefined ? undefined : postgresCpuMs(options.dataDir)
    if (options.statementsIn !== undefined) await resetStatements(options.adminUrl)
    const started = performance.now()
    await platform.call("startWorker")
    const drained = await receiver.call("waitFor", { n: options.events, timeoutMs: 300_000 })
    if (drained.timedOut) throw new Error(`receiver got ${drained.count} of ${options.events}`)
    const receivedMs = performance.now() - started
    const databaseMs = databaseBefore === undefined ? undefined : postgresCpuMs(options.dataDir) - databaseBefore
    const [throughput, receiving] = await Promise.all([platform.call("phaseStop"), receiver.call("phaseStop")])
    if (profileFile !== undefined) await platform.call("profileStop", { file: profileFile })
    // Drained = every attempt recorded and the queue empty.
    while ((await platform.call("queued")) > 0) await sleep(5)
    const drainedMs = performance.now() - started
    const drainStatements =
      options.statementsIn === undefined ? undefined : await statementsOf(options.adminUrl, options.statementsIn, 1000)
    const deliveriesPerSecond = options.events / (receivedMs / 1000)

    // 2. latency at each rate, the worker waiting for wake-ups.
    const latencies = []
    const adminUrl = target.kind === "postgres" ? options.adminUrl : undefined
    for (const rate of options.rates) {
      latencies.push(
        await latencyAt({
          platform,
          emitter,
          receiver,
          programId,
          rate,
          seconds: options.seconds,
          adminUrl,
          statementsIn: options.statementsIn,
          waitsIn: options.waitsIn
        })
      )
    }
    await platform.call("stopWorker")

    // 3. the bare keep-alive client, same bodies, same receiver, same concurrency.
    await receiver.call("reset")
    await receiver.call("phaseStart")
    const { perSecond: barePerSecond, cpuPerRequestUs } = await bare(receiverUrl, bodies, CONCURRENCY)
    const bareReceiving = await receiver.call("phaseStop")

    // 4. replay: `replay` events written straight into the event table (no fan-out), then one replay.
    const replay = await platform.call("replay", { programId, subscriptionId, n: options.replay })

    console.log(
      `${label.padEnd(9)} worker   ${deliveriesPerSecond.toFixed(0).padStart(6)} deliveries/s (${options.events} in ${receivedMs.toFixed(0)} ms; all attempts recorded after ${drainedMs.toFixed(0)} ms; platform CPU ${((throughput.cpuMs * 1000) / options.events).toFixed(0)} µs/delivery${throughput.mainCpuMs === undefined ? "" : ` (main thread ${((throughput.mainCpuMs * 1000) / options.events).toFixed(0)}, its event loop busy ${((throughput.loopBusyMs * 1000) / options.events).toFixed(0)})`}${databaseMs === undefined ? "" : `, PostgreSQL ${((databaseMs * 1000) / options.events).toFixed(0)} µs/delivery`}, receiver ${((receiving.cpuMs * 1000) / options.events).toFixed(0)} µs/delivery, event loop delay p99 / max ${throughput.loopP99Ms.toFixed(0)} / ${throughput.loopMaxMs.toFixed(0)} ms)`
    )
    console.log(
      `${"".padEnd(9)} bare     ${barePerSecond.toFixed(0).padStart(6)} requests/s (keep-alive node:http, concurrency ${CONCURRENCY}, same bodies; CPU ${cpuPerRequestUs.toFixed(0)} µs/request, receiver ${((bareReceiving.cpuMs * 1000) / bodies.length).toFixed(0)} µs/request)`
    )
    if (throughput.threadsMs !== undefined && throughput.threadsMs.length > 0) {
      const threads = throughput.threadsMs.map((ms) => ((ms * 1000) / options.events).toFixed(0)).join(", ")
      console.log(
        `${"".padEnd(9)} threads  CPU µs/delivery of the platform's other threads (writer thread, V8's, libuv's), busiest first: ${threads}`
      )
    }
    if (profileFile !== undefined) {
      const { busyMs, byPhase, byFunction } = aggregate(JSON.parse(fs.readFileSync(profileFile, "utf8")))
      const per = (ms) => `${((ms * 1000) / options.events).toFixed(1).padStart(6)} µs`
      console.log(`${"".padEnd(9)} profile  ${profileFile}: ${per(busyMs)} busy per delivery; by phase, then the top functions:`)
      for (const [name, ms] of [...byPhase].sort((a, b) => b[1] - a[1])) console.log(`${"".padEnd(18)}${per(ms)}  ${name}`)
      for (const [name, ms] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, options.top)) {
        console.log(`${"".padEnd(18)}${per(ms)}  ${name}`)
      }
    }
    console.log(`${"".padEnd(9)} ratio    ${(deliveriesPerSecond / barePerSecond).toFixed(2)}`)
    for (const l of latencies) {
      const pair = (sorted) => `${percentile(sorted, 0.5).toFixed(0)} / ${percentile(sorted, 0.99).toFixed(0)} ms`
      const delay = (p) => `${p.loopP99Ms.toFixed(0)} / ${p.loopMaxMs.toFixed(0)} ms`
      const { bench, emitter: emitting, platform: plat, receiver: rec } = l.processes
      console.log(
        `${"".padEnd(9)} latency  ${`${l.rate}/s`.padStart(7)}  p50 ${percentile(l.total, 0.5).toFixed(1)} ms  p99 ${percentile(l.total, 0.99).toFixed(1)} ms  (${l.count} events, ${l.perTransaction} per transaction; p50 / p99 of the emitting commit ${pair(l.commit)}, of commit → receiver ${pair(l.rest)})`
      )
      console.log(
        `${"".padEnd(18)}event loop delay p99 / max: platform ${delay(plat)} (CPU ${((plat.cpuMs * 1000) / l.count).toFixed(0)} µs/event, ${((100 * plat.systemMs) / Math.max(1, plat.cpuMs)).toFixed(0)}% of it in the kernel, longest GC pause ${plat.longestGcMs.toFixed(0)} ms)${emitting === undefined ? "" : `, emitting platform ${delay(emitting)}`}, receiver ${delay(rec)}, bench ${delay(bench)}`
      )
      if (plat.pools.length > 0) {
        const pools = plat.pools.map(
          ([name, n, waited, p99, max]) =>
            `${name} ${n} checkouts, ${waited} waited ≥ 5 ms, p99 / max ${p99.toFixed(0)} / ${max.toFixed(0)} ms`
        )
        console.log(`${"".padEnd(18)}waits for a pooled connection in the platform: ${pools.join("; ")}`)
      }
      if (l.wal !== undefined) {
        console.log(
          `${"".padEnd(18)}server: p50 / p99 of created_at → commit record ${pair(l.toServerCommit)}, of commit record → receiver ${pair(l.fromServerCommit)}; ${l.wal.fsyncs} WAL fsyncs, ${(l.wal.fsyncMs / Math.max(1, l.wal.fsyncs)).toFixed(1)} ms each on average; ${l.wal.inits} new WAL segments (${l.wal.initMs.toFixed(0)} ms)`
        )
      }
    }
    for (const l of latencies.filter((l) => l.waits !== undefined)) {
      const { samples, all, slow, runnable } = l.waits
      const share = (ranked) => {
        const sum = ranked.reduce((n, [, c]) => n + c, 0)
        const shares = ranked.slice(0, 6).map(([event, c]) => `${event} ${((100 * c) / Math.max(1, sum)).toFixed(0)}%`)
        return `${shares.join(", ")} (${sum})`
      }
      console.log(
        `${"".padEnd(9)} waits at ${l.rate}/s: ${samples} samples; runnable threads p50 / p99 / max ${percentile(runnable, 0.5)} / ${percentile(runnable, 0.99)} / ${runnable.at(-1) ?? 0}`
      )
      console.log(`${"".padEnd(18)}active backends: ${share(all)}`)
      console.log(`${"".padEnd(18)}statements running 20 ms or more: ${share(slow)}`)
    }
    // Top-level statements only (a function's or a trigger's run inside the one that called them).
    const printStatements = (title, statements, count, unit) => {
      const top = statements.filter((s) => s.toplevel)
      const calls = top.reduce((sum, s) => sum + s.calls, 0)
      const sum = (key) => top.reduce((n, s) => n + s[key], 0)
      console.log(
        `${"".padEnd(9)} statements ${title}: ${(calls / count).toFixed(2)} per ${unit} (${calls} in all; ${((1000 * sum("ms")) / count).toFixed(0)} µs of execution, ${(sum("blocks") / count).toFixed(1)} buffers and ${(sum("wal") / count).toFixed(0)} WAL bytes per ${unit}); the most called, per ${unit}, mean ms and µs per ${unit}:`
      )
      for (const s of [...top].sort((a, b) => b.calls - a.calls).slice(0, 8)) {
        const mean = (s.ms / Math.max(1, s.calls)).toFixed(2).padStart(7)
        const share = ((1000 * s.ms) / count).toFixed(0).padStart(5)
        console.log(
          `${"".padEnd(18)}${(s.calls / count).toFixed(2).padStart(6)} ${mean} ${share}  ${s.query.replace(/\s+/g, " ").slice(0, 100)}`
        )
      }
    }
    if (drainStatements !== undefined) printStatements("draining the queue", drainStatements, options.events, "delivery")
    for (const l of latencies.filter((l) => l.statements !== undefined)) printStatements(`at ${l.rate}/s`, l.statements, l.count, "event")
    console.log(`${"".padEnd(9)} replay   ${replay.queued} events queued in ${replay.ms.toFixed(0)} ms`)
    return {
      deliveriesPerSecond,
      barePerSecond,
      latencies: latencies.map((l) => ({ rate: l.rate, p50Ms: percentile(l.total, 0.5), p99Ms: percentile(l.total, 0.99) }))
    }
  } finally {
    if (emitter !== platform) await emitter.call("dispose").catch(() => emitter.kill())
    await platform.call("dispose").catch(() => platform.kill())
    receiver.kill()
  }
}

/** Entry point for bench/run.js. */
export async function run(args) {
  CONCURRENCY = Number(option(args, "concurrency", "64"))
  const options = {
    events: Number(option(args, "events", "20000")),
    rates: option(args, "rates", option(args, "rate", "200,1000"))
      .split(",")
      .map(Number),
    seconds: Number(option(args, "seconds", "5")),
    replay: Number(option(args, "replay", "100000")),
    cross: option(args, "cross", "0") === "1",
    volume: Number(option(args, "volume", "0")),
    packages: option(args, "packages", undefined),
    statements: option(args, "statements", "0") === "1",
    waits: option(args, "waits", "0") === "1",
    // --explain=MS (PostgreSQL): the plans of the statements slower than MS over the run (auto_explain).
    explainOverMs: numberOption(args, "explain"),
    // --cpu-prof=DIR: a V8 CPU profile of the platform over the throughput phase, kept in DIR and summed up.
    cpuProfDir: option(args, "cpu-prof", undefined),
    top: Number(option(args, "top", "25"))
  }
  const stores = option(args, "store", "sqlite,postgres").split(",")
  console.log(
    `webhooks: worker concurrency ${CONCURRENCY}, ${options.events} deliveries, latency at ${options.rates.map((rate) => `${rate}/s`).join(" and ")} for ${options.seconds}s${options.cross ? " emitted by another instance" : ""}, replay of ${options.replay}${options.volume > 0 ? `, over the rows of ${options.volume} transfers` : ""}${options.packages === undefined ? "" : `, the platform from ${options.packages}`}, ${os.cpus().length} cores, load average ${os.loadavg()[0].toFixed(1)}`
  )
  if (stores.includes("sqlite")) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "issuing-bench-webhooks-"))
    try {
      await benchStore("sqlite", { kind: "sqlite", filename: path.join(dir, "webhooks.db") }, options)
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }
  const pgStores = stores.filter((store) => store === "postgres" || store === "postgres-notify-off")
  if (pgStores.length > 0) {
    const server = await startPostgres({ commitTiming: true, statements: options.statements, explainOverMs: options.explainOverMs })
    try {
      for (const store of pgStores) {
        const url = await createDatabase(server.adminUrl, `issuing_bench_webhooks_${store.replaceAll("-", "_")}`)
        await benchStore(
          store === "postgres" ? "postgres" : "pg-poll",
          { kind: "postgres", url, notify: store === "postgres" },
          {
            ...options,
            adminUrl: server.adminUrl,
            dataDir: server.dataDir,
            statementsIn: options.statements ? url.split("/").at(-1) : undefined,
            waitsIn: options.waits ? url.split("/").at(-1) : undefined
          }
        )
        if (options.explainOverMs !== undefined) {
          showExplained(server.takeExplained(), `statements over ${options.explainOverMs} ms`)
        }
      }
    } finally {
      await server.stop()
    }
  }
}
