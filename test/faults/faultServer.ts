import { type ChildProcess, spawn } from "node:child_process"
import { cliArgv, ROOT, waitForOutput } from "../support/cli.js"
import { TEST_VAULT_KEY } from "../support/platform.js"

/**
 * `issuing serve` as a child process that the fault scenarios kill, restart and starve.
 *
 * It runs as `spawnCli` does (cliArgv): the CLI globalSetup bundled once from the sources, so each
 * start takes about a second of CPU: the crash scenario starts the server twelve times.
 */
export interface ServerBundle {
  /** The command and arguments that run `issuing <args>`. */
  readonly command: (args: ReadonlyArray<string>) => { readonly file: string; readonly argv: ReadonlyArray<string> }
  readonly dispose: () => void
}

/** The CLI as the fault scenarios start it. */
export const bundleServer = async (): Promise<ServerBundle> => ({
  command: (args) => ({ file: process.execPath, argv: cliArgv(args) }),
  dispose: () => {}
})

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
