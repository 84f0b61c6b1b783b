// What several benches share: their options, a fresh database per store, and the HTTP load
// generator run in its own process (support/httpLoad.js).
import { spawn } from "node:child_process"
import * as http from "node:http"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { createDatabase, dropDatabase, startPostgres } from "./postgres.js"

/** The value at fraction `p` (0.5, 0.99) of ascending `sorted` values; 0 when there are none. */
export const percentile = (sorted, p) => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))])

/** The value of `--name=value` among the bench's arguments, or `fallback`. */
export const option = (args, name, fallback) => {
  const found = args.find((arg) => arg.startsWith(`--${name}=`))
  return found === undefined ? fallback : found.slice(name.length + 3)
}

/** The number given as `--name=N` among the bench's arguments, or undefined when it is not given. */
export const numberOption = (args, name) => {
  const given = option(args, name, undefined)
  return given === undefined ? undefined : Number(given)
}

/**
 * A fresh database for one store's run: `{ target, drop, takeExplained }`, the target as `storeFor`
 * takes it. On PostgreSQL a server of its own (bench/support/postgres.js), stopped by `drop`; with
 * `explainOverMs` it logs the plan of every statement slower than that, which `takeExplained`
 * hands over (none on SQLite).
 */
export const benchDatabase = async (kind, prefix, { explainOverMs } = {}) => {
  if (kind === "postgres") {
    const server = await startPostgres({ explainOverMs })
    const name = `${prefix}_${Date.now()}`
    const url = await createDatabase(server.adminUrl, name)
    return {
      target: { kind: "postgres", url },
      takeExplained: server.takeExplained,
      drop: async () => {
        await dropDatabase(server.adminUrl, name)
        await server.stop()
      }
    }
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${prefix.replaceAll("_", "-")}-`))
  return {
    target: { kind: "sqlite", filename: path.join(dir, "bench.db") },
    takeExplained: () => [],
    drop: async () => fs.rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * Runs `concurrency` clients, each awaiting `step()` again and again until `durationMs` have passed
 * or its step answers `false`; answers the seconds they took.
 */
export const runClients = async (concurrency, durationMs, step) => {
  const began = performance.now()
  const deadline = began + durationMs
  const client = async () => {
    while (performance.now() < deadline) if ((await step()) === false) return
  }
  await Promise.all(Array.from({ length: concurrency }, client))
  return (performance.now() - began) / 1000
}

/** Runs `use(kind, target)` on a fresh database (benchDatabase) of each store `stores` names, in turn, dropping each after. */
export const onEachStore = async (stores, prefix, use) => {
  for (const kind of ["sqlite", "postgres"].filter((kind) => stores.includes(kind))) {
    const database = await benchDatabase(kind, prefix)
    try {
      await use(kind, database.target)
    } finally {
      await database.drop()
    }
  }
}

/**
 * Runs the load generator in its own process for `durationMs` (after a warm-up) and measures the
 * CPU time this (the server's) process spent meanwhile: its figures plus `serverCpuMs`.
 */
export const load = (url, headers, concurrency, durationMs) =>
  new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [fileURLToPath(new URL("./httpLoad.js", import.meta.url)), JSON.stringify({ url, headers, concurrency, durationMs, warmupMs: 1000 })],
      { stdio: ["ignore", "pipe", "inherit"] }
    )
    let output = ""
    let cpuStart
    child.stdout.on("data", (chunk) => {
      output += chunk
      if (cpuStart === undefined && output.includes("measuring\n")) cpuStart = process.cpuUsage()
    })
    child.on("error", reject)
    child.on("exit", (code) => {
      const cpu = process.cpuUsage(cpuStart)
      const line = output.split("\n").find((text) => text.startsWith("{"))
      if (code !== 0 || line === undefined) return reject(new Error(`load generator exited with ${code}`))
      resolve({ ...JSON.parse(line), serverCpuMs: (cpu.user + cpu.system) / 1000 })
    })
  })

/** Right-aligned columns of `rows` (the first row its header). */
export const table = (rows) => {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => String(row[column]).length)))
  return rows.map((row) => row.map((cell, column) => String(cell).padStart(widths[column])).join("  ")).join("\n")
}

const ROOT = path.resolve(import.meta.dirname, "../..")

/**
 * Runs test files of `npm test` through vitest at a bench's size: `env` sets their size, and
 * `reportVariable` names the file (JSON lines) each test appends its figures to. The tests' own
 * log lines matching `quiet` are left out (the bench prints their table). Resolves with the exit
 * code and the figures.
 */
export const runTestsForFigures = async (files, env, reportVariable, quiet) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "issuing-bench-tests-"))
  const report = path.join(dir, "report.jsonl")
  const code = await new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(ROOT, "node_modules/vitest/vitest.mjs"), "run", ...files, "--reporter=dot"], {
      cwd: ROOT,
      env: { ...process.env, ...env, [reportVariable]: report },
      stdio: ["ignore", "pipe", "inherit"]
    })
    child.stdout.on("data", (chunk) => {
      for (const line of String(chunk).split("\n")) if (!quiet(line) && line.trim() !== "") console.log(line)
    })
    child.on("exit", resolve)
  })
  const figures = fs.existsSync(report)
    ? fs
        .readFileSync(report, "utf8")
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => JSON.parse(line))
    : []
  fs.rmSync(dir, { recursive: true, force: true })
  return { code, figures }
}

/**
 * A JSON request function over one keep-alive agent: `call(method, route, body?, headers?)`
 * resolves `{ status, text }` (never rejects on a status; rejects on a connection error).
 */
export const requester =
  (baseUrl, agent, defaultHeaders = {}) =>
  (method, route, body, headers = defaultHeaders) =>
    new Promise((resolve, reject) => {
      const text = body === undefined ? undefined : JSON.stringify(body)
      const request = http.request(
        new URL(route, baseUrl),
        {
          method,
          agent,
          headers: {
            ...headers,
            ...(text === undefined ? {} : { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
          }
        },
        (response) => {
          let data = ""
          response.on("data", (chunk) => (data += chunk))
          response.on("end", () => resolve({ status: response.statusCode, text: data }))
        }
      )
      request.on("error", reject)
      request.end(text)
    })
