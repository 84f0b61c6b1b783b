// `npm run bench -- webhooks [--events=20000] [--rates=200,1000] [--seconds=5] [--replay=100000] [--concurrency=64] [--store=sqlite,postgres,postgres-notify-off] [--cross=1] [--volume=0]`
//
// Webhook delivery on SQLite and on PostgreSQL, to a loopback receiver running in a worker thread
// (its own event loop, so it does not share the worker's):
//   1. throughput: `--events` deliveries queued, then the delivery worker drains them; deliveries/s
//      as the receiver sees them (and until every attempt is recorded);
//   2. latency: events emitted at each of `--rates` per second for `--seconds`, as the API writes
//      them (a transaction per change) in ticks of at least 5 ms: at 200/s one event per
//      transaction, at 1,000/s five (a lone emit costs the emitter ≈ 1.5 ms of this thread's CPU
//      on PostgreSQL, so 1,000 one-event transactions a second would measure the emitter, not the
//      worker); event created_at → receiver arrival, p50/p99, split into the emitting commit
//      (created_at → the emitter sees its commit) and the rest (commit → receiver: wake-up, claim, send);
//   3. baseline: a bare keep-alive node:http client posting the same bodies to the same receiver
//      at the same concurrency, in the same run; ratio = worker deliveries/s ÷ bare requests/s;
//   4. replay: `--replay` events in the window, queued by one replay call; time to queue.
// `postgres-notify-off` is PostgreSQL with `notify: false` (ISSUING_PG_NOTIFY=off): no LISTEN/NOTIFY,
// the worker polls the queue. With `--cross=1` the latency events are emitted by a second instance
// on the same database (another node: its commits do not ring this worker's doorbell), so the
// latency is what a worker on another node sees — the wake-up by NOTIFY, or the poll.
// `--volume=N` first fills the tables a delivery touches as N transfers would have (docs/webhooks.md):
// 3N events of the program a month old and N delivered attempts (another subscription's), written
// by one INSERT … SELECT each (the maintained counts' triggers run), so the latency and throughput
// are measured against indexes of that size; the ledger's tables do not take part in a delivery.
import { Events, ReplayRequest, runDeliveryWorker, Transactor, Webhooks, WebhookStore } from "@issuing/core"
import { createIssuing, storeFor } from "@issuing/http"
import { SqlClient } from "@effect/sql"
import { Effect, Fiber, Schema } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { monitorEventLoopDelay, PerformanceObserver } from "node:perf_hooks"
import { v7 as uuidv7 } from "uuid"
import { createDatabase, startPostgres, walSyncs } from "./support/postgres.js"
import { isMainThread, parentPort, Worker } from "node:worker_threads"

let CONCURRENCY = 64

const option = (args, name, fallback) => {
  const found = args.find((arg) => arg.startsWith(`--${name}=`))
  return found === undefined ? fallback : found.slice(name.length + 3)
}
const percentile = (sorted, p) => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))])
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

// ---- receiver (worker thread) -------------------------------------------------------------------

if (!isMainThread && parentPort) {
  let count = 0
  let latencies = []
  let arrivals = []
  const server = http.createServer({ keepAliveTimeout: 60_000 }, (request, response) => {
    const chunks = []
    request.on("data", (chunk) => chunks.push(chunk))
    request.on("end", () => {
      count += 1
      if (request.headers["x-measure-latency"] !== "0") {
        const event = JSON.parse(Buffer.concat(chunks).toString("utf8"))
        latencies.push(Date.now() - Date.parse(event.created_at))
        arrivals.push([event.id, Date.now()])
      }
      response.writeHead(200, { "content-type": "text/plain", "content-length": 2 })
      response.end("ok")
    })
  })
  server.listen(0, "127.0.0.1", () => parentPort.postMessage({ port: server.address().port }))
  parentPort.on("message", (message) => {
    if (message === "reset") {
      count = 0
      latencies = []
      arrivals = []
      parentPort.postMessage({ reset: true })
    } else if (message === "count") {
      parentPort.postMessage({ count })
    } else if (message === "stats") {
      parentPort.postMessage({ count, latencies, arrivals })
    }
  })
}

const startReceiver = async () => {
  const worker = new Worker(new URL(import.meta.url))
  const port = await new Promise((resolve) => worker.once("message", (m) => resolve(m.port)))
  const ask = (message) =>
    new Promise((resolve) => {
      worker.once("message", resolve)
      worker.postMessage(message)
    })
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    reset: () => ask("reset"),
    stats: () => ask("stats"),
    waitForCount: async (n, timeoutMs = 120_000) => {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        // Polls the count alone: copying every latency across threads each time would load the run.
        const { count } = await ask("count")
        if (count >= n) return ask("stats")
        if (Date.now() > deadline) throw new Error(`receiver got ${count} of ${n}`)
        await sleep(5)
      }
    },
    stop: () => worker.terminate()
  }
}

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
            headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body), "x-measure-latency": "0" }
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
 * transaction) and waits for every delivery: sorted latencies created_at → receiver, and their two
 * parts, created_at → the emitter sees its commit, and that → receiver. With `server` (PostgreSQL
 * started with `commitTiming`), also the server's side: each event's commit time as the server
 * recorded it (`pg_xact_commit_timestamp`, taken as the commit record is written, before its WAL
 * flush) → receiver, created_at → that commit, and the WAL fsyncs made meanwhile.
 */
const latencyAt = async (run, receiver, programId, rate, seconds, server) => {
  await receiver.reset()
  const tickMs = Math.max(1000 / rate, 5)
  const perTransaction = Math.max(1, Math.round((rate * tickMs) / 1000))
  const ticks = Math.round((seconds * 1000) / tickMs)
  const committedAt = new Map()
  const items = Array.from({ length: perTransaction }, () => ({ type: "transaction.updated", object: { status: "SETTLED" } }))
  // This thread runs the emitter and the worker: its stalls (event loop delay, GC pauses) are in
  // both parts of the latency, so the line shows them.
  const loop = monitorEventLoopDelay({ resolution: 5 })
  let longestGcMs = 0
  const gc = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) longestGcMs = Math.max(longestGcMs, entry.duration)
  })
  gc.observe({ entryTypes: ["gc"] })
  loop.enable()
  const walBefore = server === undefined ? undefined : await walSyncs(server.adminUrl)
  const t0 = performance.now()
  const pending = []
  for (let i = 0; i < ticks; i++) {
    const wait = t0 + i * tickMs - performance.now()
    if (wait > 1) await sleep(wait)
    pending.push(
      run(Effect.flatMap(Events, (events) => events.emitAll(programId, items))).then((emitted) => {
        const now = Date.now()
        for (const event of emitted) committedAt.set(event.id, { createdMs: Date.parse(event.created_at), committedMs: now })
      })
    )
  }
  await Promise.all(pending)
  const count = ticks * perTransaction
  const stats = await receiver.waitForCount(count)
  loop.disable()
  gc.disconnect()
  const stalls = { loopP99Ms: loop.percentile(99) / 1e6, loopMaxMs: loop.max / 1e6, longestGcMs }
  const walAfter = server === undefined ? undefined : await walSyncs(server.adminUrl)
  const serverCommittedMs = server === undefined ? new Map() : await server.commitTimes([...committedAt.keys()])
  const commit = []
  const rest = []
  const toServerCommit = []
  const fromServerCommit = []
  for (const [id, arrivedMs] of stats.arrivals) {
    const event = committedAt.get(id)
    if (event === undefined) continue
    commit.push(event.committedMs - event.createdMs)
    rest.push(arrivedMs - event.committedMs)
    const serverMs = serverCommittedMs.get(id)
    if (serverMs === undefined) continue
    toServerCommit.push(serverMs - event.createdMs)
    fromServerCommit.push(arrivedMs - serverMs)
  }
  const sort = (values) => Float64Array.from(values).sort()
  const wal =
    walBefore === undefined ? undefined : { fsyncs: walAfter.fsyncs - walBefore.fsyncs, fsyncMs: walAfter.fsyncMs - walBefore.fsyncMs }
  return {
    rate,
    count,
    perTransaction,
    total: sort(stats.latencies),
    commit: sort(commit),
    rest: sort(rest),
    toServerCommit: sort(toServerCommit),
    fromServerCommit: sort(fromServerCommit),
    wal,
    stalls
  }
}

// ---- one store --------------------------------------------------------------------------------------

/** `--volume`: 3n events and n delivered attempts, written in bulk before the measurements (see the top). */
const fillVolume = async (run, kind, programId, n) => {
  const started = performance.now()
  const since = Date.now() - 30 * 86_400_000
  await run(
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      kind === "postgres"
        ? Effect.zipRight(
            sql`INSERT INTO issuing_events (id, program_id, type, created_at, data)
                SELECT 'evt-volume-' || i, ${programId}, (ARRAY['transfer.created', 'transaction.updated', 'transfer.settled'])[i % 3 + 1],
                       to_timestamp((${since}::bigint + i) / 1000.0), '{"status":"SETTLED"}'
                FROM generate_series(0, ${3 * n - 1}) AS i`,
            sql`INSERT INTO issuing_webhook_attempts (id, program_id, event_id, subscription_id, status, response_code, response_body,
                  attempted_at, created_at, updated_at)
                SELECT 'wha-volume-' || i, ${programId}, 'evt-volume-' || (3 * i + 1), 'whsub-volume', 'SUCCESS', 200, '',
                       t, t, t FROM (SELECT i, to_timestamp((${since}::bigint + 3 * i + 1) / 1000.0) AS t FROM generate_series(0, ${n - 1}) AS i) x`
          )
        : Effect.zipRight(
            sql`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${3 * n - 1})
                INSERT INTO issuing_events (id, program_id, type, created_at, data)
                SELECT 'evt-volume-' || i, ${programId},
                       CASE i % 3 WHEN 0 THEN 'transfer.created' WHEN 1 THEN 'transaction.updated' ELSE 'transfer.settled' END,
                       strftime('%Y-%m-%dT%H:%M:%fZ', (${since} + i) / 1000.0, 'unixepoch'), '{"status":"SETTLED"}' FROM n`,
            sql`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${n - 1})
                INSERT INTO issuing_webhook_attempts (id, program_id, event_id, subscription_id, status, response_code, response_body,
                  attempted_at, created_at, updated_at)
                SELECT 'wha-volume-' || i, ${programId}, 'evt-volume-' || (3 * i + 1), 'whsub-volume', 'SUCCESS', 200, '', t, t, t
                FROM (SELECT i, strftime('%Y-%m-%dT%H:%M:%fZ', (${since} + 3 * i + 1) / 1000.0, 'unixepoch') AS t FROM n) x`
          )
    )
  )
  console.log(
    `${kind.padEnd(9)} volume   ${(3 * n).toLocaleString("en-US")} events and ${n.toLocaleString("en-US")} attempts written in ${((performance.now() - started) / 1000).toFixed(0)} s`
  )
}

/**
 * The server-side timing of a PostgreSQL run (`latencyAt`), when the server records commit times:
 * `{ adminUrl, commitTimes(ids) → Map(id → the ms its transaction's commit record was written) }`.
 */
const serverTiming = async (run, adminUrl) => {
  const [setting] = await run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT current_setting('track_commit_timestamp') AS on`))
  if (setting.on !== "on") return undefined
  const commitTimes = async (ids) => {
    const rows = await run(
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql`SELECT id, (extract(epoch FROM pg_xact_commit_timestamp(xmin)) * 1000)::float8 AS ms
                     FROM issuing_events WHERE id = ANY(${ids}::text[])`
      )
    )
    return new Map(rows.map((row) => [row.id, Number(row.ms)]))
  }
  return { adminUrl, commitTimes }
}

const benchStore = async (label, target, options) => {
  const receiver = await startReceiver()
  const vaultKeys = [crypto.randomBytes(32)]
  const makeInstance = () =>
    createIssuing({
      store: storeFor(target),
      vaultKeys,
      background: false,
      log: null,
      settings: { webhookConcurrency: CONCURRENCY, webhookAllowPrivateUrls: true, webhookRetryScheduleMs: [1000, 5000] }
    })
  const instance = await makeInstance()
  const emitter = options.cross ? await makeInstance() : instance
  const run = (effect) => instance.runtime.runPromise(effect)
  const emit = (effect) => emitter.runtime.runPromise(effect)
  try {
    const org = await run(Effect.flatMap((await import("@issuing/core")).Access, (access) => access.createOrganization("bench")))
    const programId = org.program_id
    if (options.volume > 0) await fillVolume(run, target.kind, programId, options.volume)
    const subscription = await run(
      Effect.flatMap(Webhooks, (w) => w.create(programId, { url: receiver.url, event_types: ["transaction.updated"] }))
    )

    // 1. throughput: queue `events` deliveries, then start the worker and let it drain them.
    const emitBatch = (n) =>
      Effect.flatMap(Transactor, (tx) =>
        tx.withTransaction(
          Effect.flatMap(Events, (events) =>
            Effect.forEach(Array.from({ length: n }), () =>
              events.emit(programId, "transaction.updated", { id: uuidv7(), status: "SETTLED", amount: 1234 })
            )
          )
        )
      )
    const bodies = []
    for (let done = 0; done < options.events; done += 500) {
      const batch = await run(emitBatch(Math.min(500, options.events - done)))
      for (const event of batch) bodies.push(JSON.stringify(event))
    }
    await receiver.reset()
    const started = performance.now()
    const cpuBefore = process.cpuUsage()
    const worker = instance.runtime.runFork(runDeliveryWorker())
    await receiver.waitForCount(options.events)
    const receivedMs = performance.now() - started
    const cpu = process.cpuUsage(cpuBefore)
    const cpuPerDeliveryUs = (cpu.user + cpu.system) / options.events
    // Drained = every attempt recorded and the queue empty.
    for (;;) {
      const due = await run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT COUNT(*) AS n FROM issuing_webhook_deliveries`))
      if (Number(due[0].n) === 0) break
      await sleep(5)
    }
    const drainedMs = performance.now() - started
    const deliveriesPerSecond = options.events / (receivedMs / 1000)

    // 2. latency at each rate, the worker waiting for wake-ups.
    const latencies = []
    const server = target.kind === "postgres" && options.adminUrl ? await serverTiming(run, options.adminUrl) : undefined
    for (const rate of options.rates) latencies.push(await latencyAt(emit, receiver, programId, rate, options.seconds, server))
    await run(Fiber.interrupt(worker))

    // 3. the bare keep-alive client, same bodies, same receiver, same concurrency.
    await receiver.reset()
    const { perSecond: barePerSecond, cpuPerRequestUs } = await bare(receiver.url, bodies, CONCURRENCY)

    // 4. replay: `replay` events written straight into the event table (no fan-out), then one replay.
    const begin = new Date(Date.now() + 60_000)
    await run(
      Effect.flatMap(SqlClient.SqlClient, (sql) => {
        const rows = Array.from({ length: options.replay }, (_, i) => ({
          id: uuidv7(),
          program_id: programId,
          type: "transaction.updated",
          created_at: new Date(begin.getTime() + Math.floor(i / 10)).toISOString(),
          data: '{"status":"SETTLED"}'
        }))
        const chunks = []
        for (let i = 0; i < rows.length; i += 1000) chunks.push(rows.slice(i, i + 1000))
        return Effect.forEach(chunks, (chunk) => sql`INSERT INTO issuing_events ${sql.insert(chunk)}`, { discard: true })
      })
    )
    const end = new Date(begin.getTime() + Math.ceil(options.replay / 10))
    const replayStarted = performance.now()
    const window = Schema.decodeUnknownSync(ReplayRequest)({ begin: begin.toISOString(), end: end.toISOString() })
    const replay = await run(Effect.flatMap(Webhooks, (w) => w.replay(programId, subscription.id, window)))
    const replayMs = performance.now() - replayStarted
    await run(Effect.flatMap(WebhookStore, (store) => store.dropQueued([subscription.id])))

    console.log(
      `${label.padEnd(9)} worker   ${deliveriesPerSecond.toFixed(0).padStart(6)} deliveries/s (${options.events} in ${receivedMs.toFixed(0)} ms; all attempts recorded after ${drainedMs.toFixed(0)} ms; main-thread CPU ${cpuPerDeliveryUs.toFixed(0)} µs/delivery)`
    )
    console.log(
      `${"".padEnd(9)} bare     ${barePerSecond.toFixed(0).padStart(6)} requests/s (keep-alive node:http, concurrency ${CONCURRENCY}, same bodies; CPU ${cpuPerRequestUs.toFixed(0)} µs/request)`
    )
    console.log(`${"".padEnd(9)} ratio    ${(deliveriesPerSecond / barePerSecond).toFixed(2)}`)
    for (const l of latencies) {
      const pair = (sorted) => `${percentile(sorted, 0.5).toFixed(0)} / ${percentile(sorted, 0.99).toFixed(0)} ms`
      console.log(
        `${"".padEnd(9)} latency  ${`${l.rate}/s`.padStart(7)}  p50 ${percentile(l.total, 0.5).toFixed(1)} ms  p99 ${percentile(l.total, 0.99).toFixed(1)} ms  (${l.count} events, ${l.perTransaction} per transaction; p50 / p99 of the emitting commit ${pair(l.commit)}, of commit → receiver ${pair(l.rest)}; this thread's event loop delay p99 / max ${l.stalls.loopP99Ms.toFixed(0)} / ${l.stalls.loopMaxMs.toFixed(0)} ms, longest GC pause ${l.stalls.longestGcMs.toFixed(0)} ms)`
      )
      if (l.wal !== undefined) {
        console.log(
          `${"".padEnd(18)}server: p50 / p99 of created_at → commit record ${pair(l.toServerCommit)}, of commit record → receiver ${pair(l.fromServerCommit)}; ${l.wal.fsyncs} WAL fsyncs, ${(l.wal.fsyncMs / Math.max(1, l.wal.fsyncs)).toFixed(1)} ms each on average`
        )
      }
    }
    console.log(`${"".padEnd(9)} replay   ${replay.events_queued} events queued in ${replayMs.toFixed(0)} ms`)
  } finally {
    if (emitter !== instance) await emitter.dispose()
    await instance.dispose()
    await receiver.stop()
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
    volume: Number(option(args, "volume", "0"))
  }
  const stores = option(args, "store", "sqlite,postgres").split(",")
  console.log(
    `webhooks: worker concurrency ${CONCURRENCY}, ${options.events} deliveries, latency at ${options.rates.map((rate) => `${rate}/s`).join(" and ")} for ${options.seconds}s${options.cross ? " emitted by another instance" : ""}, replay of ${options.replay}${options.volume > 0 ? `, over the rows of ${options.volume} transfers` : ""}, ${os.cpus().length} cores, load average ${os.loadavg()[0].toFixed(1)}`
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
    const server = await startPostgres({ commitTiming: true })
    try {
      for (const store of pgStores) {
        const url = await createDatabase(server.adminUrl, `issuing_bench_webhooks_${store.replaceAll("-", "_")}`)
        await benchStore(
          store === "postgres" ? "postgres" : "pg-poll",
          { kind: "postgres", url, notify: store === "postgres" },
          { ...options, adminUrl: server.adminUrl }
        )
      }
    } finally {
      await server.stop()
    }
  }
}
