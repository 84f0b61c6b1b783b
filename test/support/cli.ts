import { type ChildProcess, spawn } from "node:child_process"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as net from "node:net"
import * as path from "node:path"
import { pathToFileURL } from "node:url"

/** The repository root. */
export const ROOT = path.resolve(import.meta.dirname, "../..")

/**
 * The CLI bundled from the sources, written by the suite's globalSetup (test/support/cliBundle.ts)
 * under packages/http/.tmp/ (ignored by git).
 */
export const CLI_BUNDLE = path.join(ROOT, "packages/http/.tmp/cli/issuing.cjs")

/** tsx's loader, by absolute URL so the CLI can run from any working directory. */
const TSX_LOADER = pathToFileURL(createRequire(path.join(ROOT, "package.json")).resolve("tsx")).href

/**
 * The node arguments that run `issuing <args>` from the sources, so tests need no build step: the
 * bundle globalSetup made of them, or, without it (a script outside vitest), the sources through
 * tsx with the workspace packages resolved by their "source" export condition.
 */
export const cliArgv = (args: ReadonlyArray<string>): ReadonlyArray<string> =>
  fs.existsSync(CLI_BUNDLE)
    ? [CLI_BUNDLE, ...args]
    : ["--conditions=source", "--import", TSX_LOADER, path.join(ROOT, "packages/http/src/main.ts"), ...args]

/** Spawns the `issuing` CLI from source (cliArgv). */
export const spawnCli = (args: ReadonlyArray<string>, env: Record<string, string | undefined> = {}, cwd = ROOT): ChildProcess =>
  spawn(process.execPath, [...cliArgv(args)], {
    cwd,
    env: { ...cleanEnv(), ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })

/** The parent environment without any ISSUING_* variable, so tests start from defaults. */
const cleanEnv = () => Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("ISSUING_")))

/** Runs the CLI to completion; resolves with its exit code and output. */
export const runCli = (
  args: ReadonlyArray<string>,
  env: Record<string, string | undefined> = {},
  cwd = ROOT,
  timeoutMs = 60_000
): Promise<{ code: number | null; stdout: string; stderr: string }> =>
  new Promise((resolve, reject) => {
    const child = spawnCli(args, env, cwd)
    let stdout = ""
    let stderr = ""
    child.stdout!.on("data", (chunk) => (stdout += chunk))
    child.stderr!.on("data", (chunk) => (stderr += chunk))
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`issuing ${args.join(" ")} timed out; stdout: ${stdout}; stderr: ${stderr}`))
    }, timeoutMs)
    child.on("exit", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })

/** Waits until the child's stdout has printed a line matching `pattern`; resolves with all output so far. */
export const waitForOutput = (child: ChildProcess, pattern: RegExp, timeoutMs = 30_000): Promise<string> =>
  new Promise((resolve, reject) => {
    let output = ""
    const timer = setTimeout(() => reject(new Error(`Timed out waiting for ${pattern}; got: ${output}`)), timeoutMs)
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      if (pattern.test(output)) {
        clearTimeout(timer)
        child.stdout!.off("data", onData)
        resolve(output)
      }
    }
    child.stdout!.on("data", onData)
    child.stderr!.on("data", (chunk) => (output += chunk.toString()))
    child.on("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`CLI exited with ${code} before ${pattern}; output: ${output}`))
    })
  })

/** A standalone `issuing serve` whose whole output is kept, for tests that read its logs. */
export interface WatchedServer {
  readonly base: string
  readonly programId: string
  readonly apiKey: string
  /** A request with the bootstrap key and program; `raw` is sent as the body as it is. */
  readonly request: (method: string, route: string, body?: unknown, raw?: string) => Promise<{ status: number; body: any }>
  /** Stops the server (SIGTERM) and answers everything it printed. */
  readonly stop: () => Promise<string>
  /** Kills the server if it is still running (for a `finally`). */
  readonly kill: () => void
}

/**
 * Starts `issuing serve` on SQLite in `dir`, on a free port (so ISSUING_BASE_URL's default is where
 * it listens), with a bootstrap admin key, keeping stdout and stderr.
 */
export const serveWatchingOutput = async (dir: string): Promise<WatchedServer> => {
  const apiKey = `sk_sandbox_${crypto.randomBytes(24).toString("base64url")}`
  const port = await new Promise<number>((resolve) => {
    const probe = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as net.AddressInfo
      probe.close(() => resolve(port))
    })
  })
  const child = spawnCli(["serve"], {
    ISSUING_DATABASE_URL: `sqlite:${path.join(dir, "issuing.db")}`,
    ISSUING_PORT: String(port),
    ISSUING_VAULT_KEY: crypto.randomBytes(32).toString("base64"),
    ISSUING_BOOTSTRAP_API_KEY: apiKey
  })
  let output = ""
  child.stdout!.on("data", (chunk) => (output += chunk))
  child.stderr!.on("data", (chunk) => (output += chunk))
  const kill = () => {
    if (child.exitCode === null) child.kill("SIGKILL")
  }
  try {
    const started = await waitForOutput(child, /listening on (http:\/\/\S+)/)
    const base = /listening on (http:\/\/\S+)/.exec(started)![1]!
    const programId = /X-Program-ID: ([0-9a-f-]{36})/.exec(started)![1]!
    return {
      base,
      programId,
      apiKey,
      request: async (method, route, body, raw) => {
        const text = raw ?? (body === undefined ? undefined : JSON.stringify(body))
        const response = await fetch(`${base}${route}`, {
          method,
          headers: {
            authorization: `Bearer ${apiKey}`,
            "x-program-id": programId,
            ...(text === undefined ? {} : { "content-type": "application/json" })
          },
          body: text
        })
        return { status: response.status, body: await response.json().catch(() => undefined) }
      },
      stop: async () => {
        child.kill("SIGTERM")
        await new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once("exit", resolve)))
        return output
      },
      kill
    }
  } catch (error) {
    kill()
    throw error
  }
}
