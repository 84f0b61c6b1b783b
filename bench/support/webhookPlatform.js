// The platform of `npm run bench -- webhooks`, in a process of its own: createIssuing over the
// store its config names, as `issuing serve` (or `issuing worker`) runs it. The bench's process
// drives it over the IPC channel — it emits events here (a change made on this node) and starts and
// stops the delivery worker here — so this process's event loop carries only the platform's work:
// the emits, the worker, the pg connections' parsing; the emitter's schedule and the receiver run
// in other processes. Each request `{ id, op, … }` is answered `{ id, result }` or `{ id, error }`.
//
// argv[2]: `{ target, vaultKey, concurrency, packages? }` — `packages`, a node_modules directory
// holding another build of @issuing/* (e.g. the code before a change), to measure that build.
import { SqlClient } from "@effect/sql"
import { Effect, Fiber, Schema } from "effect"
import * as path from "node:path"
import * as fs from "node:fs"
import { Session } from "node:inspector/promises"
import { monitorEventLoopDelay, PerformanceObserver } from "node:perf_hooks"
import { pathToFileURL } from "node:url"
import pg from "pg"
import { v7 as uuidv7 } from "uuid"

const config = JSON.parse(process.argv[2])

// Every pooled connection this process checks out (the store's pool, the worker's claim
// connection, named by their application_name), timed from the request to the connection: how
// long a statement waited for a connection before it could be sent (docs/webhooks.md#the-claims-own-connection).
// Patched before the store opens its pools; pg is the one @effect/sql-pg resolves (hoisted).
const checkouts = new Map()
const connect = pg.Pool.prototype.connect
pg.Pool.prototype.connect = function (callback) {
  if (typeof callback !== "function") return connect.call(this, callback)
  const requestedMs = performance.now()
  const name = this.options.application_name ?? "pg"
  return connect.call(this, (error, client, release) => {
    const waits = checkouts.get(name) ?? []
    waits.push(performance.now() - requestedMs)
    checkouts.set(name, waits)
    callback(error, client, release)
  })
}
const load = (name) =>
  import(
    config.packages === undefined ? `@issuing/${name}` : pathToFileURL(path.join(config.packages, "@issuing", name, "dist/index.js")).href
  )
const core = await load("core")
const { createIssuing, storeFor } = await load("http")
const { Access, Events, ReplayRequest, runDeliveryWorker, Transactor, Webhooks, WebhookStore } = core

const instance = await createIssuing({
  store: storeFor(config.target),
  vaultKeys: [Buffer.from(config.vaultKey, "base64")],
  background: false,
  log: null,
  settings: { webhookConcurrency: config.concurrency, webhookAllowPrivateUrls: true, webhookRetryScheduleMs: [1000, 5000] }
})
const run = (effect) => instance.runtime.runPromise(effect)
const withSql = (f) => run(Effect.flatMap(SqlClient.SqlClient, f))
const postgres = config.target.kind === "postgres"

/** `--volume`: 3n events of the program a month old and n delivered attempts, in bulk (docs/webhooks.md#benchmark). */
const fillVolume = (programId, n) => {
  const since = Date.now() - 30 * 86_400_000
  return withSql((sql) =>
    postgres
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
}

/**
 * The main thread's CPU so far, in ms, from /proc (Linux; undefined elsewhere): the process's CPU
 * counts its other threads too (SQLite's writer thread, libuv's pool, V8's GC helpers), and the main
 * thread is the one the deliveries' sends and their event loop share.
 */
const mainThreadCpuMs = () => {
  try {
    const stat = fs.readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    // utime and stime (fields 14 and 15 of stat, 12 and 13 after the command), in clock ticks of 10 ms.
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return undefined
  }
}

/**
 * CPU so far of each of this process's threads but the main one, in ms, by thread id (Linux; empty
 * elsewhere): SQLite's writer thread, V8's helpers (GC, compilation) and libuv's pool, which Node
 * all names "node" or close to it, so they are told apart by id only.
 */
const threadCpuMs = () => {
  const byTid = new Map()
  try {
    for (const tid of fs.readdirSync("/proc/self/task")) {
      if (tid === String(process.pid)) continue
      const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, "utf8")
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      byTid.set(tid, (Number(fields[11]) + Number(fields[12])) * 10)
    }
  } catch {}
  return byTid
}

// What this process's event loop and CPU did during a phase (between `phaseStart` and `phaseStop`).
let phase
const phaseStart = () => {
  const loop = monitorEventLoopDelay({ resolution: 5 })
  const gc = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) phase.longestGcMs = Math.max(phase.longestGcMs, entry.duration)
  })
  gc.observe({ entryTypes: ["gc"] })
  loop.enable()
  checkouts.clear()
  phase = {
    loop,
    gc,
    longestGcMs: 0,
    cpu: process.cpuUsage(),
    mainCpuMs: mainThreadCpuMs(),
    threads: threadCpuMs(),
    elu: performance.eventLoopUtilization(),
    started: performance.now()
  }
}
const phaseStop = () => {
  phase.loop.disable()
  phase.gc.disconnect()
  const cpu = process.cpuUsage(phase.cpu)
  return {
    loopP99Ms: phase.loop.percentile(99) / 1e6,
    loopMaxMs: phase.loop.max / 1e6,
    longestGcMs: phase.longestGcMs,
    // Per pool: [checkouts, those that waited 5 ms or more, p99 wait ms, longest wait ms].
    pools: [...checkouts].map(([name, waits]) => {
      const sorted = Float64Array.from(waits).sort()
      return [name, sorted.length, sorted.filter((ms) => ms >= 5).length, sorted[Math.floor(sorted.length * 0.99)] ?? 0, sorted.at(-1) ?? 0]
    }),
    cpuMs: (cpu.user + cpu.system) / 1000,
    systemMs: cpu.system / 1000,
    // The main thread alone: its CPU, and how long its event loop was not idle (a blocking fsync counts).
    mainCpuMs: phase.mainCpuMs === undefined ? undefined : mainThreadCpuMs() - phase.mainCpuMs,
    loopBusyMs: performance.eventLoopUtilization(phase.elu).active,
    // The other threads' CPU over the phase, the busiest first (those that used any).
    threadsMs: [...threadCpuMs()]
      .map(([tid, ms]) => ms - (phase.threads.get(tid) ?? 0))
      .filter((ms) => ms > 0)
      .sort((a, b) => b - a),
    elapsedMs: performance.now() - phase.started
  }
}

let worker
let profiler
const ops = {
  setup: async ({ receiverUrl, volume }) => {
    const org = await run(Effect.flatMap(Access, (access) => access.createOrganization("bench")))
    const volumeStarted = performance.now()
    if (volume > 0) await fillVolume(org.program_id, volume)
    const volumeMs = performance.now() - volumeStarted
    const subscription = await run(
      Effect.flatMap(Webhooks, (w) => w.create(org.program_id, { url: receiverUrl, event_types: ["transaction.updated"] }))
    )
    return { programId: org.program_id, subscriptionId: subscription.id, volumeMs }
  },
  // `n` deliveries queued in one transaction (the throughput phase); their bodies, for the bare client.
  queue: async ({ programId, n }) => {
    const events = await run(
      Effect.flatMap(Transactor, (tx) =>
        tx.withTransaction(
          Effect.flatMap(Events, (e) =>
            Effect.forEach(Array.from({ length: n }), () =>
              e.emit(programId, "transaction.updated", { id: uuidv7(), status: "SETTLED", amount: 1234 })
            )
          )
        )
      )
    )
    return events.map((event) => JSON.stringify(event))
  },
  startWorker: async () => {
    worker = instance.runtime.runFork(runDeliveryWorker())
  },
  stopWorker: async () => {
    await run(Fiber.interrupt(worker))
  },
  queued: async () => Number((await withSql((sql) => sql`SELECT COUNT(*) AS n FROM issuing_webhook_deliveries`))[0].n),
  // One change of `n` events, as a request that emits them would make it: created_at is taken in
  // `emitAll` before its statement is sent; `committedMs` is when this process saw the commit.
  emit: async ({ programId, n }) => {
    const items = Array.from({ length: n }, () => ({ type: "transaction.updated", object: { status: "SETTLED" } }))
    const emitted = await run(Effect.flatMap(Events, (events) => events.emitAll(programId, items)))
    const committedMs = Date.now()
    return emitted.map((event) => [event.id, Date.parse(event.created_at), committedMs])
  },
  // `--cpu-prof`: V8's CPU profiler over the throughput phase, written to `file`.
  profileStart: async () => {
    profiler = new Session()
    profiler.connect()
    await profiler.post("Profiler.enable")
    await profiler.post("Profiler.start")
  },
  profileStop: async ({ file }) => {
    const { profile } = await profiler.post("Profiler.stop")
    fs.writeFileSync(file, JSON.stringify(profile))
    profiler.disconnect()
  },
  phaseStart: async () => phaseStart(),
  phaseStop: async () => phaseStop(),
  // PostgreSQL with track_commit_timestamp: when each event's transaction wrote its commit record.
  commitTimes: async ({ ids }) => {
    const [setting] = await withSql((sql) => sql`SELECT current_setting('track_commit_timestamp') AS on`)
    if (setting.on !== "on") return []
    const rows = await withSql(
      (sql) => sql`SELECT id, (extract(epoch FROM pg_xact_commit_timestamp(xmin)) * 1000)::float8 AS ms
                   FROM issuing_events WHERE id = ANY(${ids}::text[])`
    )
    return rows.map((row) => [row.id, Number(row.ms)])
  },
  // `n` events written straight into the event table (no fan-out), then one replay of them: ms to queue.
  replay: async ({ programId, subscriptionId, n }) => {
    const begin = new Date(Date.now() + 60_000)
    await withSql((sql) => {
      const rows = Array.from({ length: n }, (_, i) => ({
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
    const end = new Date(begin.getTime() + Math.ceil(n / 10))
    const started = performance.now()
    const window = Schema.decodeUnknownSync(ReplayRequest)({ begin: begin.toISOString(), end: end.toISOString() })
    const replay = await run(Effect.flatMap(Webhooks, (w) => w.replay(programId, subscriptionId, window)))
    const ms = performance.now() - started
    await run(Effect.flatMap(WebhookStore, (store) => store.dropQueued([subscriptionId])))
    return { queued: replay.events_queued, ms }
  },
  dispose: async () => {
    await instance.dispose()
    setImmediate(() => process.exit(0))
  }
}

process.on("message", ({ id, op, ...args }) => {
  ops[op](args).then(
    (result) => process.send({ id, result }),
    (error) => process.send({ id, error: String(error?.stack ?? error) })
  )
})
process.send({ ready: true })
