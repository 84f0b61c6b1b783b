// `npm run bench -- propagation [--changes=1000] [--seconds=3] [--concurrency=16] [--store=sqlite|postgres|both]
//   [--baseline=DIR]`
//
// Two `issuing serve` processes (built packages) on one database — a SQLite file, or a fresh
// database on the bench PostgreSQL (bench/support/postgres.js). Measures:
// - propagation: a card is frozen and unfrozen on node A, `--changes` times, while node B serves
//   GET /v1/cards/{id} of other cards under load; for each change, the time from A's response
//   (the commit is before it) until B's GET of the card shows the new state (one request's
//   latency when B already knew; how many GETs still showed the old state is counted), then a
//   simulated authorization on B, which must decline (approve) the first time. p50/p99.
// - throughput on B: simulated authorizations/s and GET /v1/cards/{id}/s, p50/p99 latency.
//   With --baseline=DIR (another built checkout, e.g. `git worktree add DIR <commit> && cd DIR &&
//   npm ci && npx tsc -b`), the same throughput is measured on that version first, and both are
//   printed side by side with their ratio.
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { createDatabase, dropDatabase, startPostgres } from "./support/postgres.js"
import { option, percentile } from "./support/common.js"

const summary = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  return `p50 ${percentile(sorted, 0.5).toFixed(2)} ms, p99 ${percentile(sorted, 0.99).toFixed(2)} ms, max ${sorted.at(-1).toFixed(2)} ms`
}
const ADMIN = `sk_test_${"b3nch5ecret".repeat(3)}`
const BIN = path.resolve(import.meta.dirname, "../packages/http/bin/issuing.js")

/** Starts `issuing serve` (from `bin`); resolves with its URL and the child. */
const serve = (env, cwd, bin = BIN) =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, "serve"], { cwd, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${output}`)), 60_000)
    const onData = (chunk) => {
      output += chunk
      const match = /listening on (http:\/\/\S+)/.exec(output)
      if (match) {
        clearTimeout(timer)
        resolve({ url: match[1], child })
      }
    }
    child.stdout.on("data", onData)
    child.stderr.on("data", (chunk) => (output += chunk))
    child.on("exit", (code) => reject(new Error(`serve exited with ${code}: ${output}`)))
  })

const client = (concurrency) => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency })
  let programId = ""
  const call = (base, method, route, body) =>
    new Promise((resolve, reject) => {
      const text = body === undefined ? undefined : JSON.stringify(body)
      const request = http.request(
        new URL(route, base),
        {
          method,
          agent,
          headers: {
            authorization: `Bearer ${ADMIN}`,
            "x-program-id": programId,
            ...(text === undefined ? {} : { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
          }
        },
        (response) => {
          let data = ""
          response.on("data", (chunk) => (data += chunk))
          response.on("end", () => resolve({ status: response.statusCode, body: data === "" ? null : JSON.parse(data) }))
        }
      )
      request.on("error", reject)
      request.end(text)
    })
  return { call, setProgram: (id) => (programId = id), destroy: () => agent.destroy() }
}

/** Runs `one` from `concurrency` loops for `seconds`; requests/s and latencies. */
const throughput = async (seconds, concurrency, one) => {
  const latencies = []
  const deadline = performance.now() + seconds * 1000
  const began = performance.now()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        const started = performance.now()
        await one()
        latencies.push(performance.now() - started)
      }
    })
  )
  return { perSecond: (latencies.length / (performance.now() - began)) * 1000, latencies }
}

const measureStore = async (kind, args, postgres, bin = BIN, measurePropagation = true) => {
  const changes = measurePropagation ? Number(option(args, "changes", "1000")) : 0
  const seconds = Number(option(args, "seconds", "3"))
  const concurrency = Number(option(args, "concurrency", "16"))
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "issuing-bench-propagation-"))
  const dbName = `issuing_bench_propagation_${process.pid}_${measurePropagation ? "ours" : "baseline"}`
  const url = kind === "sqlite" ? `sqlite:${path.join(dir, "issuing.db")}` : await createDatabase(postgres.adminUrl, dbName)
  const env = {
    ISSUING_DATABASE_URL: url,
    ISSUING_VAULT_KEY: Buffer.alloc(32, 9).toString("base64"),
    ISSUING_BOOTSTRAP_API_KEY: ADMIN,
    ISSUING_PORT: "0",
    ISSUING_RATE_LIMIT_PER_SECOND: "1000000",
    ISSUING_RATE_LIMIT_BURST: "1000000"
  }
  const nodes = []
  const http1 = client(concurrency * 2 + 4)
  try {
    nodes.push(await serve(env, dir, bin))
    nodes.push(await serve(env, dir, bin))
    const [a, b] = nodes
    const { call } = http1
    http1.setProgram((await call(a.url, "GET", "/v1/programs")).body.data[0].id)
    // One wallet per card: authorizations of different cards do not queue on one account's lock.
    const cards = []
    for (let i = 0; i < 32; i++) {
      const wallet = (await call(a.url, "POST", "/v1/wallets", { holder: { name: "Bench" } })).body
      await call(a.url, "POST", "/v1/transfers", {
        paymentRail: "fednow_instant",
        amount: 1e12,
        currency: "USD",
        to_financial_account_id: wallet.financial_account_id
      })
      cards.push((await call(a.url, "POST", "/v1/cards", { wallet_id: wallet.id, type: "VIRTUAL" })).body.id)
    }
    const target = cards[0]
    const authorize = (card) => call(b.url, "POST", "/v1/simulate/authorizations", { card_id: card, amount: 1, mcc: "5411" })
    let next = 0
    const getOther = () => call(b.url, "GET", `/v1/cards/${cards[1 + (next++ % (cards.length - 1))]}`)

    // Throughput on B (caches warm).
    await throughput(1, concurrency, getOther)
    const gets = await throughput(seconds, concurrency, getOther)
    await throughput(1, concurrency, () => authorize(cards[1 + (next++ % (cards.length - 1))]))
    const auths = await throughput(seconds, concurrency, () => authorize(cards[1 + (next++ % (cards.length - 1))]))

    // Propagation under load: B keeps serving GETs of the other cards meanwhile.
    let loading = true
    const load = Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (loading) await getOther()
      })
    )
    const toRead = []
    const toDecide = []
    let stale = 0
    for (let i = 0; i < changes; i++) {
      const action = i % 2 === 0 ? "freeze" : "unfreeze"
      const state = action === "freeze" ? "FROZEN" : "ACTIVE"
      const changed = await call(a.url, "POST", `/v1/cards/${target}/${action}`)
      if (changed.status !== 200) throw new Error(`${action}: ${JSON.stringify(changed.body)}`)
      // A's response comes after the commit: B's first GET from here must already show it.
      const respondedAt = performance.now()
      let polls = 0
      for (;;) {
        polls += 1
        const read = await call(b.url, "GET", `/v1/cards/${target}`)
        if (read.body.state === state) break
      }
      toRead.push(performance.now() - respondedAt)
      if (polls > 1) stale += 1
      const decidedFrom = performance.now()
      const decided = await authorize(target)
      const expected = action === "freeze" ? "DECLINED" : "PENDING"
      if (decided.body.status !== expected) throw new Error(`authorization on B was ${decided.body.status} after ${action} on A`)
      toDecide.push(performance.now() - decidedFrom)
    }
    loading = false
    await load
    return { gets, auths, toRead, toDecide, stale }
  } finally {
    http1.destroy()
    for (const node of nodes) node.child.kill("SIGTERM")
    await Promise.all(
      nodes.map((node) => new Promise((resolve) => (node.child.exitCode !== null ? resolve() : node.child.on("exit", resolve))))
    )
    if (kind === "postgres") await dropDatabase(postgres.adminUrl, dbName)
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

export async function run(args) {
  const store = option(args, "store", "both")
  const kinds = store === "both" ? ["sqlite", "postgres"] : [store]
  const postgres = kinds.includes("postgres") ? await startPostgres() : undefined
  try {
    const baselineDir = option(args, "baseline", "")
    const baselineBin = baselineDir === "" ? undefined : path.resolve(baselineDir, "packages/http/bin/issuing.js")
    for (const kind of kinds) {
      const before = baselineBin === undefined ? undefined : await measureStore(kind, args, postgres, baselineBin, false)
      const { gets, auths, toRead, toDecide, stale } = await measureStore(kind, args, postgres)
      console.log(`${kind}: two serve processes, ${toRead.length} changes on A under load on B`)
      console.log(`  A's response → B's GET shows the change: ${summary(toRead)}; GETs that still showed the old state: ${stale}`)
      console.log(`  then B's authorization (declined or approved as it must, every time): ${summary(toDecide)}`)
      const latency = (result) => summary(result.latencies)
      const versus = (ours, theirs) =>
        theirs === undefined ? "" : `  | baseline ${theirs.perSecond.toFixed(0)}/s → ×${(ours.perSecond / theirs.perSecond).toFixed(2)}`
      console.log(`  B: GET /v1/cards/{id}          ${gets.perSecond.toFixed(0)}/s (${latency(gets)})${versus(gets, before?.gets)}`)
      console.log(
        `  B: POST /v1/simulate/authorizations ${auths.perSecond.toFixed(0)}/s (${latency(auths)})${versus(auths, before?.auths)}`
      )
    }
  } finally {
    await postgres?.stop()
  }
}
