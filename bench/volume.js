// `npm run bench -- volume [--transfers=50000] [--checkpoints=1000,50000] [--store=sqlite,postgres] [--seconds=3] [--in-flight=4] [--batches=8] [--samples=15] [--vacuum] [--explain=MS] [--drop-indexes=NAME,…] [--lists=TEXT,…] [--keep] [--sizes]`
//
// Whether the API stays as fast at production volume as on a fresh database (issue 24;
// docs/operations.md#volume). One program is grown through `POST /v1/transfers/batch` — batches of
// 1,000 book transfers, `--in-flight` requests at once, from a worker thread so the client does not
// share the server's event loop; each transfer writes what the product writes (a transaction, a
// transfer, a book transfer, 4 entries, 3 events) — to each checkpoint, and there, per store:
//   - every list of the API (docs/api.md, docs/ledger.md, docs/card-data.md, docs/webhooks.md),
//     page 1 and its main filters and order fields: the median of `--samples` sequential GETs
//     (after one unrecorded GET), with its total_count;
//   - a deep page of each: page=1000&page_size=100 where the list is that long, else its last page;
//   - the page after that deep page by `starting_after=<its last id>` (keyset paging), the same median;
//   - single `POST /v1/transfers` per second at 16 clients for `--seconds`, p50/p99;
//   - batch throughput: transfers/s of `--batches` (default 2 × `--in-flight`) batches of 1,000 at `--in-flight`, and the
//     rate of the growth to this checkpoint; for both, the bytes the store sent to the disk per
//     transfer (/proc/<pid>/io: this process on SQLite, the server's processes on PostgreSQL);
//   - the database's size on disk at the lists' count (SQLite: the file and its WAL; PostgreSQL:
//     pg_database_size).
// The rows the writes measured at a checkpoint add count toward the next checkpoint. Half the
// transfers have one "busy" wallet on a side (its book-transfer list grows with the program); the
// others are between 63 more wallets; a 65th, quiet, wallet is funded and never used again (a
// rare account's lists, like the one funding rail's, must not walk the program's rows). 20 cards with a reveal each, and one webhook subscription to
// card events whose deliveries go to a loopback receiver, give the card, audit and attempt lists
// rows (they stay small: the volume is in the ledger and the events).
// Checkpoints: `--checkpoints`, else 1,000 and `--transfers` (default 50,000, a few minutes);
// `--transfers=1000000` measures at 1,000, 150,000, 400,000 and 1,000,000 (the issue's table).
// Stores run one after the other, each on a fresh database (PostgreSQL from
// bench/support/postgres.js). The machine may be shared: the load average is printed at each
// checkpoint; compare the figures of one run.
// Time windows (`created[…]`, docs/api.md#time-filters) on events, transfers and transactions, each
// with its total_count (docs/decisions.md "Time filters and total_count"): the whole history (from
// the first transfer on), the last day, and the middle half of the history's time span.
// `--lists=TEXT,…` reads only the lists whose path contains one of the texts (`--lists=created`: the
// time windows alone).
// `--drop-indexes=NAME,…` drops those indexes after the migrations, before any row: what an index
// costs the writes at volume, and what its lists cost without it, measured in one run (an
// experiment, never a configuration: docs/operations.md#volume).
import { Access, runDeliveryWorker } from "@issuing/core"
import { createIssuing, storeFor } from "@issuing/http"
import { Effect, Fiber } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads"
import Database from "better-sqlite3"
import { benchDatabase, numberOption, option, percentile, table } from "./support/common.js"
import { showExplained, withPgClient } from "./support/postgres.js"

const WALLETS = 64
const CARDS = 20
const BATCH = 1000
const PAGE_SIZE = 100
const DEEP_PAGE = 1000
const SINGLE_CLIENTS = 16
const FUNDING_MINOR = 1_000_000_000_000

// ---- the client of the writes (worker thread) ---------------------------------------------------

/** A transfer between two of the wallets; half of them have the busy wallet (index 0) on a side. */
const item = (accounts) => {
  let from
  let to
  if (Math.random() < 0.5) {
    const other = 1 + Math.floor(Math.random() * (accounts.length - 1))
    ;[from, to] = Math.random() < 0.5 ? [0, other] : [other, 0]
  } else {
    from = 1 + Math.floor(Math.random() * (accounts.length - 1))
    to = 1 + Math.floor(Math.random() * (accounts.length - 2))
    if (to >= from) to += 1
  }
  return {
    paymentRail: "book",
    amount: 1 + Math.floor(Math.random() * 100),
    currency: "USD",
    from_financial_account_id: accounts[from],
    to_financial_account_id: accounts[to]
  }
}

/**
 * Posts transfers: `batch` > 0 in batches (until `count` transfers are posted, or for `seconds`),
 * else one per request for `seconds`; `concurrency` requests in flight. Posts a progress message
 * every 10 s, then the result.
 */
const write = async ({ baseUrl, apiKey, programId, accounts, batch, count, seconds, concurrency }) => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency })
  const url = new URL(batch > 0 ? "/v1/transfers/batch" : "/v1/transfers", baseUrl)
  const latencies = []
  let ok = 0
  let failed = 0
  let planned = 0
  const statuses = {}
  const started = performance.now()
  const deadline = seconds === undefined ? Number.POSITIVE_INFINITY : started + seconds * 1000
  let lastProgress = started
  const one = (size) =>
    new Promise((resolve) => {
      const body = JSON.stringify(batch > 0 ? { transfers: Array.from({ length: size }, () => item(accounts)) } : item(accounts))
      const sent = performance.now()
      const request = http.request(
        url,
        {
          method: "POST",
          agent,
          headers: {
            authorization: `Bearer ${apiKey}`,
            "x-program-id": programId,
            "content-type": "application/json",
            "content-length": Buffer.byteLength(body)
          }
        },
        (response) => {
          const chunks = []
          response.on("data", (chunk) => chunks.push(chunk))
          response.on("end", () => {
            latencies.push(performance.now() - sent)
            let posted = 0
            if (response.statusCode === 200 && batch > 0)
              posted = JSON.parse(Buffer.concat(chunks).toString()).data.filter((entry) => entry.object === "transfer").length
            else if (response.statusCode === 200) posted = 1
            else statuses[response.statusCode] = (statuses[response.statusCode] ?? 0) + 1
            ok += posted
            failed += size - posted
            if (performance.now() - lastProgress > 10_000) {
              lastProgress = performance.now()
              parentPort.postMessage({ progress: ok, perSecond: ok / ((lastProgress - started) / 1000) })
            }
            resolve(posted)
          })
        }
      )
      request.on("error", () => {
        failed += size
        statuses.error = (statuses.error ?? 0) + 1
        resolve(0)
      })
      request.end(body)
    })
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        if (count === undefined) await one(batch > 0 ? batch : 1)
        else {
          // Stops at `count` posted (a failed item is sent again), or when failures alone could
          // have made it (a store that refuses everything).
          const size = Math.min(batch, count - planned)
          if (size <= 0 || failed > count) return
          planned += size
          const posted = await one(size)
          planned -= size - posted
        }
      }
    })
  )
  const elapsedMs = performance.now() - started
  agent.destroy()
  const sorted = Float64Array.from(latencies).sort()
  return {
    ok,
    failed,
    statuses,
    elapsedMs,
    perSecond: ok / (elapsedMs / 1000),
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99)
  }
}

if (!isMainThread && workerData?.role === "writer") {
  write(workerData).then((result) => parentPort.postMessage({ result }))
}

/** Runs `write` in a worker thread; `onProgress` sees its progress messages. */
const writeInWorker = (options, onProgress = () => {}) =>
  new Promise((resolve, reject) => {
    const worker = new Worker(new URL(import.meta.url), { workerData: { role: "writer", ...options } })
    worker.on("message", (message) => {
      if (message.result === undefined) return onProgress(message)
      worker.terminate().then(() => resolve(message.result))
    })
    worker.once("error", reject)
  })

// ---- the reads (this thread, sequential) --------------------------------------------------------

/**
 * The lists of the API, page 1 with page_size=100 unless the path says otherwise, and their main
 * filters and order fields. `ids`: the busy wallet's financial account, a transaction, a card, the
 * subscription, the busy wallet. Organization-scoped lists send no X-Program-ID.
 */
const lists = (ids) =>
  [
    { path: "/v1/events" },
    { path: "/v1/events?type=transfer.settled" },
    { path: "/v1/events?order_by=created_at&ascending=true" },
    { path: "/v1/transfers" },
    { path: "/v1/transfers?page_size=10" },
    { path: "/v1/transfers?status=SETTLED" },
    { path: "/v1/transfers?payment_rail=book" },
    { path: `/v1/transfers?financial_account_id={busy}` },
    { path: `/v1/transfers?financial_account_id={quiet}` },
    { path: "/v1/transfers?payment_rail=fednow_instant" },
    { path: "/v1/transfers?order_by=created_at&ascending=true" },
    // Filter and order combinations (migration 0400): ranges of one index per order, merged per
    // status and rail; an account's two sides by updated_at (lists that grow order by time only,
    // migration 0691). PENDING and the funding rail
    // are rare here (none pending, 65 fundings): a walk would read the program's every transfer.
    { path: "/v1/transfers?order_by=updated_at" },
    { path: "/v1/transfers?status=PENDING" },
    { path: "/v1/transfers?status=SETTLED&payment_rail=book" },
    { path: "/v1/transfers?status=SETTLED&payment_rail=fednow_instant" },
    { path: "/v1/transfers?order_by=updated_at&status=PENDING" },
    { path: "/v1/transfers?order_by=updated_at&status=SETTLED" },
    { path: "/v1/transfers?order_by=updated_at&payment_rail=fednow_instant" },
    { path: `/v1/transfers?financial_account_id={busy}&order_by=created_at&ascending=true` },
    { path: `/v1/transfers?financial_account_id={busy}&order_by=updated_at` },
    { path: `/v1/transfers?financial_account_id={quiet}&order_by=updated_at` },
    { path: `/v1/transfers?financial_account_id={busy}&status=PENDING` },
    // An account's transfers with a rail (migration 0450): one range per side and status of the
    // account's (account, status, rail, order column, id) indexes; without a rail, 20 ranges merged.
    { path: `/v1/transfers?financial_account_id={busy}&payment_rail=book` },
    { path: `/v1/transfers?financial_account_id={busy}&payment_rail=wire` },
    { path: `/v1/transfers?financial_account_id={busy}&status=SETTLED&payment_rail=book&order_by=updated_at` },
    { path: `/v1/transfers?financial_account_id={quiet}&payment_rail=fednow_instant` },
    { path: "/v1/transactions" },
    { path: "/v1/transactions?status=SETTLED" },
    { path: "/v1/transactions?order_by=created_at&ascending=true" },
    { path: "/v1/transactions?order_by=updated_at" },
    { path: "/v1/transactions?order_by=updated_at&status=SETTLED" },
    { path: "/v1/transactions?order_by=updated_at&status=PENDING" },
    { path: `/v1/transactions?card_id={card}&order_by=updated_at` },
    // A card's transactions with a status (migration 0450): one range of (card, status, order, id).
    { path: `/v1/transactions?card_id={card}&status=SETTLED` },
    // Time windows (the ids carry each checkpoint's): the whole history, the last day, the middle half.
    { path: "/v1/events?created[gte]={first}" },
    { path: "/v1/events?created[gte]={dayAgo}" },
    { path: "/v1/events?created[gte]={quarter}&created[lt]={threeQuarters}" },
    { path: "/v1/events?type=transfer.created&created[gte]={quarter}&created[lt]={threeQuarters}" },
    { path: "/v1/transfers?created[gte]={first}" },
    { path: "/v1/transfers?created[gte]={dayAgo}" },
    { path: "/v1/transfers?created[gte]={quarter}&created[lt]={threeQuarters}" },
    { path: "/v1/transfers?financial_account_id={busy}&created[gte]={first}" },
    { path: "/v1/transfers?financial_account_id={busy}&created[gte]={quarter}&created[lt]={threeQuarters}" },
    { path: "/v1/transactions?created[gte]={first}" },
    { path: "/v1/transactions?created[gte]={dayAgo}" },
    { path: "/v1/transactions?created[gte]={quarter}&created[lt]={threeQuarters}" },
    { path: `/v1/transactions/{transaction}/book-transfers` },
    { path: `/v1/financial-accounts/{busy}/book-transfers` },
    { path: `/v1/financial-accounts/{busy}/book-transfers?book=principal` },
    { path: `/v1/financial-accounts/{busy}/book-transfers?order_by=posted_at&ascending=true` },
    { path: `/v1/financial-accounts/{quiet}/book-transfers` },
    { path: "/v1/financial-accounts" },
    { path: "/v1/financial-accounts?kind=wallet" },
    { path: "/v1/financial-accounts?kind=wallet&currency=USD" },
    { path: "/v1/financial-accounts?kind=settlement&currency=USD" },
    { path: "/v1/financial-accounts?order_by=updated_at" },
    // The one euro wallet among the dollar ones (migration 0450: the currency's own range).
    { path: "/v1/financial-accounts?order_by=updated_at&currency=EUR" },
    { path: "/v1/wallets" },
    { path: "/v1/cards" },
    { path: "/v1/cards?state=ACTIVE" },
    { path: "/v1/cards?state=ACTIVE&order_by=updated_at" },
    { path: `/v1/cards?wallet_id={wallet}&order_by=updated_at` },
    { path: "/v1/card-audit-records" },
    { path: `/v1/card-audit-records?card_id={card}` },
    { path: "/v1/card-audit-records?action=reveal" },
    { path: "/v1/webhook-subscriptions" },
    { path: "/v1/webhook-attempts" },
    { path: `/v1/webhook-attempts?webhook_subscription_id={subscription}&status=SUCCESS` },
    { path: "/v1/webhook-attempts?status=FAILED" },
    { path: `/v1/webhook-attempts?webhook_subscription_id={subscription}&order_by=attempted_at` },
    { path: "/v1/programs", organization: true },
    { path: "/v1/api-keys", organization: true },
    { path: "/v1/oauth-clients", organization: true }
  ].map((list) => {
    const label = list.path
    let url = list.path.replace(/\{(\w+)\}/g, (_, name) => encodeURIComponent(ids[name]))
    if (!url.includes("page_size=")) url += `${url.includes("?") ? "&" : "?"}page_size=${PAGE_SIZE}`
    return { ...list, label, url }
  })

/** `table` with the first column (the labels) aligned left. */
const labelled = (rows) => {
  const width = Math.max(...rows.map((row) => row[0].length))
  const rest = table(rows.map((row) => row.slice(1))).split("\n")
  return rows.map((row, index) => `${row[0].padEnd(width)}  ${rest[index]}`).join("\n")
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

const shownMs = (value) => (value === undefined ? "-" : value < 9.95 ? value.toFixed(1) : value.toFixed(0))
const count = (n) => n.toLocaleString("en-US")
const short = (n) => (n >= 1e6 ? `${+(n / 1e6).toFixed(2)}M` : n >= 1e3 ? `${+(n / 1e3).toFixed(1)}k` : String(n))
const bytes = (n) => (n >= 1e9 ? `${(n / 1e9).toFixed(2)} GB` : `${(n / 1e6).toFixed(1)} MB`)
const load = () =>
  os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(" ")

const databaseSize = async (target) => {
  if (target.kind === "sqlite") {
    const size = (file) => (fs.existsSync(file) ? fs.statSync(file).size : 0)
    const file = size(target.filename)
    const wal = size(`${target.filename}-wal`)
    return { bytes: file + wal, detail: ` (file ${bytes(file)}, WAL ${bytes(wal)})` }
  }
  return withPgClient(target.url, async (client) => ({
    bytes: Number((await client.query("SELECT pg_database_size(current_database()) AS size")).rows[0].size),
    detail: ""
  }))
}

/**
 * `--sizes`: each table's and index's bytes per transfer (`transfers`: the rows of
 * issuing_transfers), largest first — SQLite's `dbstat` pages, PostgreSQL's `pg_relation_size` with
 * its TOAST (docs/operations.md#disk-per-transfer); and their sum.
 */
const relationSizes = async (target) => {
  const rows = []
  let transfers
  if (target.kind === "sqlite") {
    const db = new Database(target.filename, { readonly: true })
    try {
      transfers = db.prepare("SELECT count(*) AS n FROM issuing_transfers").get().n
      const tableOf = new Map(
        db
          .prepare("SELECT name, tbl_name FROM sqlite_schema WHERE type = 'index'")
          .all()
          .map((r) => [r.name, r.tbl_name])
      )
      for (const r of db.prepare("SELECT name, sum(pgsize) AS size FROM dbstat GROUP BY name").all())
        rows.push([tableOf.has(r.name) ? `${tableOf.get(r.name)}: ${r.name}` : r.name, r.size])
    } finally {
      db.close()
    }
  } else {
    await withPgClient(target.url, async (client) => {
      transfers = Number((await client.query("SELECT count(*) AS n FROM issuing_transfers")).rows[0].n)
      const result = await client.query(`SELECT coalesce(t.relname || ': ', '') || c.relname AS name,
          pg_relation_size(c.oid) + coalesce(pg_relation_size(nullif(c.reltoastrelid, 0)), 0) AS size
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        LEFT JOIN pg_index i ON i.indexrelid = c.oid LEFT JOIN pg_class t ON t.oid = i.indrelid
        WHERE n.nspname = 'public' AND c.relkind IN ('r', 'i')`)
      for (const r of result.rows) rows.push([r.name, Number(r.size)])
    })
  }
  rows.sort((a, b) => b[1] - a[1])
  const per = (size) => Math.round(size / Math.max(1, transfers))
  const shown = rows.filter(([, size]) => per(size) >= 1).map(([name, size]) => [name, count(per(size))])
  return [
    ["relation", `bytes a transfer (${count(transfers)} transfers)`],
    ...shown,
    ["sum", count(per(rows.reduce((sum, [, size]) => sum + size, 0)))]
  ]
}

/**
 * Bytes the store's processes have sent to the disk so far (Linux `/proc/<pid>/io` `write_bytes`):
 * this process's on SQLite (its writer thread writes the WAL and the checkpoints), the embedded
 * server's processes on PostgreSQL (every `postgres` process readable here: the WAL, the
 * checkpointer's and the background writer's pages). Undefined where /proc cannot tell.
 */
const diskWrites = (kind) => {
  const written = (pid) => {
    try {
      const line = fs
        .readFileSync(`/proc/${pid}/io`, "utf8")
        .split("\n")
        .find((l) => l.startsWith("write_bytes:"))
      return line === undefined ? 0 : Number(line.split(/\s+/)[1])
    } catch {
      return 0
    }
  }
  if (!fs.existsSync("/proc/self/io")) return undefined
  if (kind === "sqlite") return written("self")
  let sum = 0
  for (const pid of fs.readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(pid)) continue
    try {
      if (fs.readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "postgres") sum += written(pid)
    } catch {
      // gone meanwhile
    }
  }
  return sum
}

/**
 * PostgreSQL, before a checkpoint's lists: how much of the events' heap the visibility map marks
 * all-visible (an index-only scan visits the other pages' rows in the heap, which a deep page of
 * newest rows feels; pg_visibility) and what autovacuum is doing meanwhile (pg_stat_progress_vacuum),
 * with how often it has vacuumed the events so far.
 */
const vacuumState = (url) =>
  withPgClient(url, async (client) => {
    // pg_visibility ships with PostgreSQL's contrib modules; a server without them says nothing of the map.
    const map = await client
      .query("CREATE EXTENSION IF NOT EXISTS pg_visibility")
      .then(() =>
        client.query(
          `SELECT all_visible::float8 / GREATEST(pg_relation_size('issuing_events') / current_setting('block_size')::int, 1) AS share
           FROM pg_visibility_map_summary('issuing_events')`
        )
      )
      .then(({ rows }) => `${(100 * rows[0].share).toFixed(0)} %`)
      .catch(() => "unknown (no pg_visibility)")
    const [events] = (
      await client.query("SELECT autovacuum_count::int AS vacuums FROM pg_stat_user_tables WHERE relname = 'issuing_events'")
    ).rows
    const running = (
      await client.query(
        `SELECT c.relname AS table, p.phase FROM pg_stat_progress_vacuum p JOIN pg_class c ON c.oid = p.relid ORDER BY c.relname`
      )
    ).rows
    return `  events' heap all-visible: ${map}; autovacuum of the events so far: ${events?.vacuums ?? 0}; vacuuming now: ${running.length === 0 ? "nothing" : running.map((r) => `${r.table} (${r.phase})`).join(", ")}`
  })

/** Drops the named indexes of a migrated store (`--drop-indexes`); each must exist. */
const dropIndexes = async (target, names) => {
  if (names.length === 0) return
  const odd = names.find((name) => !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
  if (odd !== undefined) throw new Error(`--drop-indexes: ${JSON.stringify(odd)} is not an index name`)
  if (target.kind === "sqlite") {
    const db = new Database(target.filename)
    try {
      for (const name of names) db.exec(`DROP INDEX "${name}"`)
    } finally {
      db.close()
    }
    return
  }
  await withPgClient(target.url, async (client) => {
    for (const name of names) await client.query(`DROP INDEX "${name}"`)
  })
}

/** Grows one store through its checkpoints; resolves with its figures per checkpoint. */
const growStore = async (
  kind,
  checkpoints,
  { seconds, inFlight, samples, vacuum, batches: batchCount, explainOverMs, dropped, only, keep, sizes }
) => {
  const database = await benchDatabase(kind, "issuing_bench_volume", { explainOverMs })
  const server = http.createServer()
  server.keepAliveTimeout = 60_000
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve))
  const baseUrl = `http://127.0.0.1:${server.address().port}`
  const instance = await createIssuing({
    store: storeFor(database.target),
    vaultKeys: [crypto.randomBytes(32)],
    background: false,
    log: null,
    settings: { baseUrl, rateLimitPerSecond: 1_000_000_000, rateLimitBurst: 1_000_000_000 }
  })
  await dropIndexes(database.target, dropped)
  server.on("request", instance.listener)
  // The webhook receiver of the card events' deliveries.
  const receiver = http.createServer((request, response) => {
    request.resume()
    request.on("end", () => response.writeHead(200).end())
  })
  await new Promise((resolve) => receiver.listen(0, "127.0.0.1", resolve))
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 })
  try {
    const org = await instance.runtime.runPromise(Effect.flatMap(Access, (access) => access.createOrganization("volume")))
    const call = (method, route, body, organization = false) =>
      new Promise((resolve, reject) => {
        const text = body === undefined ? undefined : JSON.stringify(body)
        const request = http.request(
          new URL(route, baseUrl),
          {
            method,
            agent,
            headers: {
              authorization: `Bearer ${org.api_key}`,
              ...(organization ? {} : { "x-program-id": org.program_id }),
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
    const json = async (method, route, body, organization = false) => {
      const response = await call(method, route, body, organization)
      if (response.status !== 200) throw new Error(`${method} ${route}: ${response.status} ${response.text}`)
      return JSON.parse(response.text)
    }

    // Setup: wallets, funded; cards, revealed; a subscription to card events, delivered.
    const wallets = []
    for (let i = 0; i < WALLETS; i++) {
      const wallet = await json("POST", "/v1/wallets", { holder: { name: i === 0 ? "Busy wallet" : `Wallet ${i}` } })
      await json("POST", "/v1/transfers", {
        paymentRail: "fednow_instant",
        amount: FUNDING_MINOR,
        currency: "USD",
        to_financial_account_id: wallet.financial_account_id
      })
      wallets.push(wallet)
    }
    // A quiet wallet: funded, then in no transfer the growth writes (its lists must not walk the program's).
    const quiet = await json("POST", "/v1/wallets", { holder: { name: "Quiet wallet" } })
    await json("POST", "/v1/transfers", {
      paymentRail: "fednow_instant",
      amount: FUNDING_MINOR,
      currency: "USD",
      to_financial_account_id: quiet.financial_account_id
    })
    // A euro wallet, funded: the rare currency of the account list by updated_at.
    const euro = await json("POST", "/v1/wallets", { holder: { name: "Euro wallet" }, currency: "EUR" })
    await json("POST", "/v1/transfers", {
      paymentRail: "fednow_instant",
      amount: FUNDING_MINOR,
      currency: "EUR",
      to_financial_account_id: euro.financial_account_id
    })
    let transfers = WALLETS + 2
    const subscription = await json("POST", "/v1/webhook-subscriptions", {
      url: `http://127.0.0.1:${receiver.address().port}/hook`,
      event_types: ["card.created", "card.updated"]
    })
    const deliveries = instance.runtime.runFork(runDeliveryWorker())
    const cards = []
    for (let i = 0; i < CARDS; i++) {
      const card = await json("POST", "/v1/cards", { wallet_id: wallets[i % WALLETS].id, type: "VIRTUAL" })
      await json("POST", `/v1/cards/${card.id}/reveal`)
      cards.push(card)
    }
    const until = performance.now() + 30_000
    while ((await json("GET", "/v1/webhook-attempts")).total_count < CARDS && performance.now() < until)
      await new Promise((resolve) => setTimeout(resolve, 200))
    await instance.runtime.runPromise(Fiber.interrupt(deliveries))
    const someTransaction = (await json("GET", "/v1/transactions?page_size=1")).data[0]
    const ids = {
      busy: wallets[0].financial_account_id,
      quiet: quiet.financial_account_id,
      transaction: someTransaction.id,
      card: cards[0].id,
      wallet: wallets[0].id,
      subscription: subscription.id
    }
    const writer = { baseUrl, apiKey: org.api_key, programId: org.program_id, accounts: wallets.map((w) => w.financial_account_id) }
    const firstTransfer = (await json("GET", "/v1/transfers?order_by=created_at&ascending=true&page_size=1")).data[0]
    /** The time windows of a checkpoint: from the first transfer, the last day, the middle half of the history so far. */
    const timeWindows = async () => {
      const first = Date.parse(firstTransfer.created_at)
      const last = Date.parse((await json("GET", "/v1/transfers?page_size=1")).data[0].created_at)
      const at = (share) => new Date(first + share * (last - first)).toISOString()
      return {
        first: firstTransfer.created_at,
        dayAgo: new Date(Date.now() - 86_400_000).toISOString(),
        quarter: at(0.25),
        threeQuarters: at(0.75)
      }
    }

    /** Median of `samples` sequential GETs (after one unrecorded), its total_count and status. */
    const time = async (list, url) => {
      await call("GET", url, undefined, list.organization)
      const durations = []
      let answer
      for (let i = 0; i < samples; i++) {
        const started = performance.now()
        answer = await call("GET", url, undefined, list.organization)
        durations.push(performance.now() - started)
      }
      const total = answer.status === 200 ? JSON.parse(answer.text).total_count : undefined
      return { ms: median(durations), total, status: answer.status }
    }

    const figures = []
    let previous = transfers
    for (const checkpoint of checkpoints) {
      let growth
      if (checkpoint > transfers) {
        const grown = await writeInWorker(
          { ...writer, batch: BATCH, count: checkpoint - transfers, concurrency: inFlight },
          ({ progress, perSecond }) =>
            console.log(
              `  ${kind}: ${count(transfers + progress)} transfers, growing at ${count(Math.round(perSecond))}/s (load average ${load()})`
            )
        )
        transfers += grown.ok
        // The rate as the worker timed it (its start, which loads the packages, left out).
        growth = { perSecond: grown.perSecond, failed: grown.failed, statuses: grown.statuses }
      }
      if (vacuum && database.target.kind === "postgres") {
        // What autovacuum does for a table that grows at a real program's pace: statistics and
        // visibility maps caught up with the rows (a checkpoint right after a 150-fold growth in a
        // minute otherwise measures the planner's view of the table as it was).
        const started = Date.now()
        await withPgClient(database.target.url, (client) => client.query("VACUUM ANALYZE"))
        console.log(`  ${kind}: VACUUM ANALYZE before the lists, ${Date.now() - started} ms`)
      }
      const at = { checkpoint, transfers, growth, lists: [], load: load() }
      console.log(
        `\n${kind} at ${count(transfers)} transfers${checkpoint < transfers ? ` (checkpoint ${count(checkpoint)}: passed already by the writes measured at the previous one)` : ""}, load average ${at.load}`
      )
      if (database.target.kind === "postgres") console.log(await vacuumState(database.target.url))
      database.takeExplained()
      Object.assign(ids, await timeWindows())
      for (const list of lists(ids).filter((list) => only.length === 0 || only.some((text) => list.label.includes(text)))) {
        const first = await time(list, list.url)
        // The deep page: page 1000 of 100 where the list is that long, else its last page (none for one page).
        const pages = first.total === undefined ? 1 : Math.ceil(first.total / PAGE_SIZE)
        const deepPage = Math.min(DEEP_PAGE, pages)
        const pageSized = list.url.replace(/page_size=\d+/, `page_size=${PAGE_SIZE}`)
        const deep = deepPage > 1 ? await time(list, `${pageSized}&page=${deepPage}`) : undefined
        // starting_after: the page that follows the deep page's last item (page 1's where the list
        // has one page of 100 or fewer), by keyset, beside the offset deep page.
        const lastPage = await call("GET", deepPage > 1 ? `${pageSized}&page=${deepPage}` : pageSized, undefined, list.organization)
        const lastItem = lastPage.status === 200 ? JSON.parse(lastPage.text).data.at(-1) : undefined
        const after = lastItem === undefined ? undefined : await time(list, `${pageSized}&starting_after=${lastItem.id}`)
        at.lists.push({ label: list.label, first, deep, deepPage, after })
      }
      // --explain: the plans of the lists' statements that took longer (PostgreSQL's auto_explain).
      if (explainOverMs !== undefined) {
        // Each statement once (every list is read 15 times): its slowest plan, the slowest first.
        showExplained(database.takeExplained(), `statements of the lists over ${explainOverMs} ms`)
      }
      // The size at the lists' count of transfers, before the writes measured here add theirs.
      at.size = await databaseSize(database.target)
      if (sizes) console.log(labelled(await relationSizes(database.target)))
      const writtenBefore = diskWrites(kind)
      const single = await writeInWorker({ ...writer, batch: 0, seconds, concurrency: SINGLE_CLIENTS })
      transfers += single.ok
      const writtenBetween = diskWrites(kind)
      // A fixed number of batches (not a duration), so the rows this adds stay small beside the next checkpoint.
      const batches = await writeInWorker({ ...writer, batch: BATCH, count: batchCount * BATCH, concurrency: inFlight })
      transfers += batches.ok
      const writtenAfter = diskWrites(kind)
      if (writtenBefore !== undefined) {
        single.diskPerTransfer = (writtenBetween - writtenBefore) / Math.max(1, single.ok)
        batches.diskPerTransfer = (writtenAfter - writtenBetween) / Math.max(1, batches.ok)
      }
      at.single = single
      at.batches = batches
      console.log(
        labelled([
          ["list", "page 1 ms", "deep page ms", "deep page", "starting_after ms", "total_count"],
          ...at.lists.map(({ label, first, deep, deepPage, after }) => [
            label,
            first.status === 200 ? shownMs(first.ms) : `HTTP ${first.status}`,
            deep === undefined ? "-" : deep.status === 200 ? shownMs(deep.ms) : `HTTP ${deep.status}`,
            deep === undefined ? "-" : String(deepPage),
            after === undefined ? "-" : after.status === 200 ? shownMs(after.ms) : `HTTP ${after.status}`,
            first.total === undefined ? "-" : count(first.total)
          ])
        ])
      )
      const details = (result) =>
        (result.failed ? `, failed ${result.failed} ${JSON.stringify(result.statuses)}` : "") +
        (result.diskPerTransfer === undefined ? "" : `; ${(result.diskPerTransfer / 1024).toFixed(1)} kB written to disk per transfer`)
      console.log(
        `single POST /v1/transfers, ${SINGLE_CLIENTS} clients, ${seconds} s: ${count(Math.round(single.perSecond))}/s  p50 ${shownMs(single.p50)} ms  p99 ${shownMs(single.p99)} ms${details(single)}`
      )
      console.log(
        `POST /v1/transfers/batch of ${BATCH}, ${inFlight} in flight, ${batchCount} batches: ${count(Math.round(batches.perSecond))} transfers/s  p50 ${shownMs(batches.p50)} ms  p99 ${shownMs(batches.p99)} ms${details(batches)}`
      )
      if (growth !== undefined)
        console.log(
          `grown from ${count(previous)} at ${count(Math.round(growth.perSecond))} transfers/s${growth.failed ? `, failed ${growth.failed} ${JSON.stringify(growth.statuses)}` : ""}`
        )
      console.log(`database size ${bytes(at.size.bytes)}${at.size.detail} (load average ${load()})`)
      figures.push(at)
      previous = transfers
    }
    return figures
  } finally {
    agent.destroy()
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
    receiver.closeAllConnections()
    await new Promise((resolve) => receiver.close(resolve))
    await instance.dispose()
    if (keep) console.log(`kept: ${JSON.stringify(database.target)}`)
    else await database.drop()
  }
}

// Idle pool clients see "terminating connection due to administrator command" (57P01) when the
// embedded server stops at the end of the run; that is expected, not a failure of the benchmark.
process.on("uncaughtException", (error) => {
  if (error?.code === "57P01") return
  console.error(error)
  process.exit(1)
})

/** Default checkpoints: 1,000, the issue's 150,000 and 400,000 below the target, and the target. */
const checkpointsFor = (target) => [...new Set([1000, 150_000, 400_000].filter((n) => n < target).concat(target))]

/** Entry point for bench/run.js. */
export async function run(args) {
  const target = Number(option(args, "transfers", "50000"))
  const given = option(args, "checkpoints", undefined)
  const checkpoints = given === undefined ? checkpointsFor(target) : given.split(",").map(Number)
  const stores = option(args, "store", "sqlite,postgres").split(",")
  const settings = {
    seconds: Number(option(args, "seconds", "3")),
    inFlight: Number(option(args, "in-flight", "4")),
    // --batches: how many batches of 1,000 the batch throughput at each checkpoint is timed over.
    batches: Number(option(args, "batches", String(2 * Number(option(args, "in-flight", "4"))))),
    // --vacuum: PostgreSQL VACUUM ANALYZE at each checkpoint before its lists and writes.
    vacuum: args.includes("--vacuum"),
    // --explain=MS (PostgreSQL): the plans of the lists' statements slower than MS (auto_explain).
    explainOverMs: numberOption(args, "explain"),
    // --drop-indexes=NAME,…: indexes dropped before the growth (an experiment; see the header).
    dropped: (option(args, "drop-indexes", undefined) ?? "").split(",").filter((name) => name !== ""),
    samples: Number(option(args, "samples", "15")),
    // --lists=TEXT,…: only the lists whose path contains one of the texts.
    only: (option(args, "lists", undefined) ?? "").split(",").filter((text) => text !== ""),
    // --keep: the grown database is left in place (its URL or file printed) for EXPLAIN and size queries.
    keep: args.includes("--keep"),
    // --sizes: each table's and index's bytes per transfer at each checkpoint.
    sizes: args.includes("--sizes")
  }
  console.log(
    `volume: one program grown through POST /v1/transfers/batch (${BATCH} a batch, ${settings.inFlight} in flight) to ${checkpoints.map(count).join(", ")} transfers; ` +
      `median of ${settings.samples} sequential GETs; ${os.cpus().length} cores, load average ${load()}` +
      (settings.dropped.length > 0 ? `; indexes dropped: ${settings.dropped.join(", ")}` : "")
  )
  const results = new Map()
  for (const kind of stores) results.set(kind, await growStore(kind, checkpoints, settings))

  // The summary: each figure from checkpoint to checkpoint, one table per store.
  for (const [kind, figures] of results) {
    const sizes = figures.map((at) => short(at.transfers)).join(" → ")
    const across = (pick) => figures.map(pick).join(" → ")
    console.log(`\n${kind}, ${sizes} transfers`)
    console.log(
      labelled([
        ["", "page 1 ms", "deep page ms", "starting_after ms"],
        ...figures[0].lists.map((list, index) => [
          `GET ${list.label}`,
          across((at) => shownMs(at.lists[index].first.ms)),
          across((at) => (at.lists[index].deep === undefined ? "-" : shownMs(at.lists[index].deep.ms))),
          across((at) => (at.lists[index].after === undefined ? "-" : shownMs(at.lists[index].after.ms)))
        ]),
        [`single POST /v1/transfers/s (${SINGLE_CLIENTS} clients)`, across((at) => count(Math.round(at.single.perSecond))), "", ""],
        [`batch transfers/s (${BATCH} × ${settings.inFlight} in flight)`, across((at) => count(Math.round(at.batches.perSecond))), "", ""],
        [
          "disk writes per transfer, single / batch (kB)",
          across((at) =>
            at.single.diskPerTransfer === undefined
              ? "-"
              : `${(at.single.diskPerTransfer / 1024).toFixed(1)} / ${(at.batches.diskPerTransfer / 1024).toFixed(1)}`
          ),
          "",
          ""
        ],
        ["growth transfers/s", across((at) => (at.growth === undefined ? "-" : count(Math.round(at.growth.perSecond)))), "", ""],
        ["database size", across((at) => bytes(at.size.bytes)), "", ""],
        ["load average (1 min) at the lists", across((at) => at.load.split(" ")[0]), "", ""]
      ])
    )
  }
}
