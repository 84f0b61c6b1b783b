import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import pg from "pg"
import { inject } from "vitest"

/** The two stores every suite runs against. */
export const STORE_KINDS = ["sqlite", "postgres"] as const
export type StoreKind = (typeof STORE_KINDS)[number]

/** A fresh database of the given kind: a SQLite file, or a new database on the test server. */
export interface TestDatabase {
  readonly kind: StoreKind
  /** An ISSUING_DATABASE_URL value for it. */
  readonly url: string
  /** For SQLite, the file path. */
  readonly filename?: string
  /** Made at the current schema (`TestDatabaseOptions.migrated`), not empty. */
  readonly migrated: boolean
  readonly drop: () => Promise<void>
}

export interface TestDatabaseOptions {
  /**
   * Already at the current schema, as `issuing migrate` leaves an empty database, with no rows of
   * anyone's: a copy of the run's migrated template (templates.ts), much cheaper than migrating.
   * Without it the database is empty, for tests of migrating itself.
   */
  readonly migrated?: boolean
}

let counter = 0

/** Creates a fresh database: empty, or migrated (`options.migrated`). */
export const createTestDatabase = async (kind: StoreKind, options: TestDatabaseOptions = {}): Promise<TestDatabase> => {
  counter += 1
  if (kind === "sqlite") {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "issuing-sqlite-"))
    const filename = path.join(dir, "issuing.db")
    if (options.migrated === true) fs.copyFileSync(inject("sqliteTemplateFile"), filename)
    return {
      kind,
      url: `sqlite:${filename}`,
      filename,
      migrated: options.migrated === true,
      drop: async () => fs.rmSync(dir, { recursive: true, force: true })
    }
  }
  const adminUrl = inject("pgAdminUrl")
  const name = `issuing_test_${process.pid}_${Date.now().toString(36)}_${counter}`
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  try {
    await admin.query(`CREATE DATABASE ${name}${options.migrated === true ? ` TEMPLATE ${inject("pgTemplateDatabase")}` : ""}`)
  } finally {
    await admin.end()
  }
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return {
    kind,
    url: url.toString(),
    migrated: options.migrated === true,
    drop: async () => {
      const client = new pg.Client({ connectionString: adminUrl })
      await client.connect()
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      } finally {
        await client.end()
      }
    }
  }
}
