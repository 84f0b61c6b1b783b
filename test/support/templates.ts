import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import pg from "pg"
import { runCli } from "./cli.js"

/**
 * One database of each kind migrated once per run, which `createTestDatabase(kind, { migrated: true })`
 * copies instead of running every migration again: a PostgreSQL database each new one is created
 * from (`CREATE DATABASE … TEMPLATE`), and a SQLite file each new one is a copy of.
 *
 * Why: startPlatform, the store contract suites and most tests start on a migrated database, and
 * migrating an empty PostgreSQL database took about 2.5 s (and ~0.4 s on SQLite) of a platform's
 * start, hundreds of times a run (docs/testing.md). The copy is what `issuing migrate` leaves,
 * made by the same CLI bundle the tests spawn; a platform started on it still runs its migrations
 * (finding none pending) and checks its stored functions, as a restarted server does. Tests of
 * migrating itself ask for an empty database (the default).
 */
export interface MigratedTemplates {
  /** The PostgreSQL database to create others from (connections to it are refused). */
  readonly pgDatabase: string
  /** The migrated SQLite file. */
  readonly sqliteFile: string
  readonly drop: () => Promise<void>
}

const adminQuery = async (adminUrl: string, text: string) => {
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try {
    await client.query(text)
  } finally {
    await client.end()
  }
}

/** Migrates the two templates with `issuing migrate` (the CLI bundle must exist: cliBundle.ts). */
export const migrateTemplates = async (adminUrl: string): Promise<MigratedTemplates> => {
  const pgDatabase = `issuing_template_${process.pid}_${Date.now().toString(36)}`
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "issuing-template-"))
  const sqliteFile = path.join(dir, "issuing.db")
  const url = new URL(adminUrl)
  url.pathname = `/${pgDatabase}`
  await adminQuery(adminUrl, `CREATE DATABASE ${pgDatabase}`)
  const drop = async () => {
    await adminQuery(adminUrl, `ALTER DATABASE ${pgDatabase} WITH IS_TEMPLATE false`).catch(() => {})
    await adminQuery(adminUrl, `DROP DATABASE IF EXISTS ${pgDatabase} WITH (FORCE)`)
    fs.rmSync(dir, { recursive: true, force: true })
  }
  try {
    const results = await Promise.all([
      runCli(["migrate"], { ISSUING_DATABASE_URL: url.toString() }, dir),
      runCli(["migrate"], { ISSUING_DATABASE_URL: `sqlite:${sqliteFile}` }, dir)
    ])
    for (const result of results) {
      if (result.code !== 0) throw new Error(`issuing migrate failed on a template database: ${result.stderr}`)
    }
    // The SQLite writer closed its file, so a copy is whole without its -wal file; refuse otherwise.
    if (fs.existsSync(`${sqliteFile}-wal`) && fs.statSync(`${sqliteFile}-wal`).size > 0) {
      throw new Error("the migrated SQLite template still has a write-ahead log")
    }
    // A template nobody can connect to stays as migrated: CREATE DATABASE copies it without connecting.
    await adminQuery(adminUrl, `ALTER DATABASE ${pgDatabase} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`)
  } catch (error) {
    await drop()
    throw error
  }
  return { pgDatabase, sqliteFile, drop }
}
