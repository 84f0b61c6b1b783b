import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"

/** The repository root. */
export const ROOT = path.resolve(import.meta.dirname, "../..")

/** The packages this repository publishes, by directory under packages/. */
export const PACKAGES = ["core", "store-sqlite", "store-pg", "http", "client"] as const

/**
 * The parent environment without what would tie a child npm or node to this workspace: npm_*
 * (npm test sets npm_config_local_prefix to the repository root), INIT_CWD, NODE_OPTIONS, and the
 * ISSUING_* settings of whoever runs the tests.
 */
export const cleanEnv = (extra: Record<string, string> = {}): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (value === undefined || /^(npm_|issuing_)/i.test(name) || name === "INIT_CWD" || name === "NODE_OPTIONS") continue
    env[name] = value
  }
  return { ...env, ...extra }
}

export interface RunResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs a command to completion (killed after `timeoutMs`); never rejects on a non-zero exit. */
export const run = (
  command: string,
  args: ReadonlyArray<string>,
  options: { cwd: string; env?: Record<string, string>; timeoutMs?: number }
): Promise<RunResult> =>
  new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? cleanEnv(), stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => (stdout += chunk))
    child.stderr.on("data", (chunk) => (stderr += chunk))
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`${command} ${args.join(" ")} timed out\nstdout: ${stdout}\nstderr: ${stderr}`))
    }, options.timeoutMs ?? 120_000)
    child.on("error", (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.on("exit", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })

/** Like `run`, but rejects with the output unless the command exits 0. */
export const runOk = async (
  command: string,
  args: ReadonlyArray<string>,
  options: { cwd: string; env?: Record<string, string>; timeoutMs?: number }
): Promise<RunResult> => {
  const result = await run(command, args, options)
  if (result.code !== 0) {
    throw new Error(`${command} ${args.join(" ")} exited with ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`)
  }
  return result
}

/** A TCP port that was free a moment ago. */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })

/** A long-running command started in its own process group, so that it and its children can be stopped together. */
export interface Started {
  readonly child: ChildProcess
  /** Resolves with the output so far once stdout or stderr matches `pattern`. */
  readonly waitFor: (pattern: RegExp, timeoutMs?: number) => Promise<string>
  /** Resolves when the output is closed: the command and every child that shared it have ended. */
  readonly closed: Promise<void>
  /** Signals the whole group. */
  readonly signal: (name: NodeJS.Signals) => void
  /** SIGKILLs the whole group (cleanup). */
  readonly kill: () => void
}

export const start = (command: string, args: ReadonlyArray<string>, options: { cwd: string; env: Record<string, string> }): Started => {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ["ignore", "pipe", "pipe"], detached: true })
  let output = ""
  const listeners = new Set<() => void>()
  const onData = (chunk: Buffer) => {
    output += chunk.toString()
    for (const listener of listeners) listener()
  }
  child.stdout!.on("data", onData)
  child.stderr!.on("data", onData)
  // "close", not "exit": npx ends before the bin it started when both are signalled.
  const closed = new Promise<void>((resolve) => child.on("close", () => resolve()))
  const waitFor = (pattern: RegExp, timeoutMs = 60_000) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        if (!pattern.test(output)) return
        done()
        resolve(output)
      }
      const timer = setTimeout(() => {
        done()
        reject(new Error(`Timed out waiting for ${pattern}; output: ${output}`))
      }, timeoutMs)
      const done = () => {
        clearTimeout(timer)
        listeners.delete(check)
      }
      listeners.add(check)
      void closed.then(() => {
        if (!listeners.has(check)) return
        done()
        reject(new Error(`${command} ended before ${pattern}; output: ${output}`))
      })
      check()
    })
  const signal = (name: NodeJS.Signals) => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, name)
    } catch {
      // Already gone.
    }
  }
  return { child, waitFor, closed, signal, kill: () => signal("SIGKILL") }
}

/** The fenced code blocks of one `## ` section of a Markdown file, with their info strings. */
export const codeBlocks = (file: string, heading: string): ReadonlyArray<{ readonly lang: string; readonly code: string }> => {
  const text = fs.readFileSync(file, "utf8")
  const start = text.indexOf(`\n## ${heading}\n`)
  if (start < 0) throw new Error(`${file} has no section "${heading}"`)
  const next = text.indexOf("\n## ", start + 1)
  const section = text.slice(start, next < 0 ? undefined : next)
  return [...section.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((match) => ({ lang: match[1]!, code: match[2]! }))
}
