import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
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
